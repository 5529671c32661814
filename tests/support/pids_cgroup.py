"""Whether the sandbox can make its pids cgroup here, and if not, exactly what is missing.

`ducklm.tools.sandbox.cgroup.create` answers only None when it cannot. A test that needs
the cgroup skips with the reason found here, read from the kernel's own files
(/proc/self/mountinfo, /proc/self/cgroup, the cgroup folder) rather than from the code
under test. Under CI a machine that has what the cgroup needs (a pids controller mounted
read-write that this user may write, delegated to children on cgroup v2) makes the test
fail instead: there the None is DuckLM's bug, not the machine's lack.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from ducklm.tools.sandbox import cgroup


@dataclass(frozen=True)
class Missing:
    """Why no pids cgroup was made; `machine_has_it`: the machine has all it needs."""

    reason: str
    machine_has_it: bool


async def require_pids_cgroup(why: str) -> None:
    """Skip (or under CI, when the machine could provide one, fail) without a pids cgroup."""
    missing = await asyncio.to_thread(pids_cgroup_missing)
    if missing is None:
        return
    if missing.machine_has_it and os.environ.get("CI"):
        pytest.fail(f"{why}; {missing.reason}")
    pytest.skip(f"{why}: {missing.reason}")


def pids_cgroup_missing() -> Missing | None:
    """None when the sandbox can make a pids cgroup here; else what stopped it. Blocking."""
    probe = cgroup.create(8)
    if probe is not None:
        cgroup.remove(probe)
        return None
    return _diagnose()


def _diagnose() -> Missing:
    found = _pids_hierarchy()
    if isinstance(found, Missing):
        return found
    kind, folder, read_only = found
    user = f"uid {os.geteuid()}"
    problem = _folder_problem(kind, folder, user, read_only=read_only)
    if problem is not None:
        return Missing(problem, machine_has_it=False)
    reason = (
        f"{folder} ({kind}) is writable by {user} and has the pids controller, yet "
        "ducklm.tools.sandbox.cgroup.create made no cgroup there"
    )
    return Missing(reason, machine_has_it=True)


def _pids_hierarchy() -> tuple[str, Path, bool] | Missing:
    """The hierarchy holding the pids controller: its kind, this process's folder in it,
    and whether it is mounted read-only."""
    try:
        memberships = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError as exc:
        return Missing(f"/proc cannot be read ({exc})", machine_has_it=False)
    split = [line.split(":", 2) for line in memberships]
    v1 = {c: path for _, cs, path in split for c in cs.split(",") if c}
    v2 = next((path for hierarchy, _, path in split if hierarchy == "0"), None)
    for line in mounts:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 6 or len(tail) < 3:
            continue
        root, mount_point, options, fstype = fields[3], fields[4], fields[5], tail[0]
        if fstype == "cgroup" and "pids" in tail[2].split(",") and "pids" in v1:
            kind, own = "cgroup v1 pids hierarchy", v1["pids"]
        elif fstype == "cgroup2" and "pids" not in v1 and v2 is not None:
            kind, own = "cgroup v2", v2
        else:
            continue
        relative = os.path.relpath(own, root)
        if relative.startswith(".."):
            reason = (
                f"this process's cgroup {own} lies outside the {kind} mounted at "
                f"{mount_point} (whose root is {root}): a container's view"
            )
            return Missing(reason, machine_has_it=False)
        return kind, Path(mount_point) / relative, "ro" in options.split(",")
    reason = (
        "no pids controller is mounted: /proc/self/mountinfo has neither a cgroup v1 "
        "'pids' hierarchy nor a cgroup2 file system"
    )
    return Missing(reason, machine_has_it=False)


def _folder_problem(kind: str, folder: Path, user: str, *, read_only: bool) -> str | None:
    """What keeps a child cgroup with `pids.max` from being made in `folder`, if anything."""
    if read_only:
        return f"the {kind} holding {folder} is mounted read-only"
    if not os.access(folder, os.W_OK):
        return (
            f"{folder} ({kind}) is not writable by {user}: a pids cgroup needs root or a "
            "cgroup subtree delegated to this user"
        )
    if kind != "cgroup v2":
        return None
    controllers = _words(folder / "cgroup.controllers")
    if "pids" not in controllers:
        return (
            f"cgroup v2: {folder}/cgroup.controllers has no pids controller "
            f"({' '.join(sorted(controllers)) or 'none'}): the parent does not delegate it"
        )
    if "pids" not in _words(folder / "cgroup.subtree_control"):
        return (
            f"cgroup v2: {folder}/cgroup.subtree_control does not enable pids, so a child "
            f"cgroup has no pids.max (as root: echo +pids > {folder}/cgroup.subtree_control)"
        )
    return None


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()
