"""Running one shell command confined: bubblewrap, Landlock, a pids cgroup, bounded output.

`landlock` runs as a script (`python -I -S path`) and uses the standard library only.
"""
