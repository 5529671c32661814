"""The shell command policy: parse a command as bash would and classify every part."""
