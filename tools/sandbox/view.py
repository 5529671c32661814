"""What a sandboxed command can see: the system it needs and the workspace, nothing else.

The sandbox, not the command classifier, decides what a command reaches: a command the
classifier reads as harmless (`f=.env; cat $f`) still finds nothing to leak. Under
bubblewrap (`bwrap_view`) a command sees:

- the system, read-only: `/usr`, `/bin`, `/sbin`, `/lib*` and `/etc` less its secrets
  (`ETC_SECRETS`: password hashes, sudoers, TLS and SSH host keys, Wi-Fi and VPN keys);
- its own `/dev`, `/proc` (only the sandbox's processes: a pid namespace) and empty
  `/tmp` (also HOME) and `/run`;
- the workspace, writable, with `.git` and DuckLM's own files in it read-only and
  DuckLM's data and configs in it hidden;
- in the workspace, files whose names look secret (`secret_names`: `.env*`, `*.pem`,
  `id_*` ...; `secret_paths` in config/permissions.yaml, which the person can extend)
  read as empty, unless the person approved a command the policy said reads one.

Everything else is absent: the person's home (`~/.ssh`, `~/.aws`, `~/.config`, shell
histories), other users' homes, `/root`, `/opt`, `/srv`, `/mnt`, `/var`, DuckLM's data
dir (its API token, its databases) and its models and MCP configs. Under Landlock the
view is coarser (`landlock_reads`): see docs/architecture.md, "What a command can see".

Everything here reads the file system: call it from a worker thread.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ducklm.tools import autorun

log = logging.getLogger(__name__)

SYSTEM_DIRS = ("/usr", "/etc")
"""Bound read-only as they are."""
ROOT_ENTRIES = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Bound read-only, or recreated as the links they are (merged /usr)."""
ETC_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_*key",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
    "/etc/ppp/*secrets",
    "/etc/ipsec.secrets",
    "/etc/libvirt/secrets",
    "/etc/krb5.keytab",
)
"""Under /etc, what a command never reads (globs allowed); absent from the view."""
EGRESS_DIR = "/run/ducklm"
"""Where the egress proxy's socket folder appears in the sandbox."""
FORWARD_SCRIPT = "/run/ducklm-forward.py"
FORWARD_SOURCE = str(Path(__file__).with_name("forward.py"))
MAX_SCANNED = 200_000
"""Workspace entries looked at; past that the rest is neither masked nor kept read-only."""
MAX_MOUNT_PATH = 4000
"""Bytes of a path bubblewrap can mount on (PATH_MAX less room); deeper ones are skipped."""


@dataclass(frozen=True)
class View:
    """What one command is to see besides the system."""

    workspace: Path
    readonly: tuple[Path, ...] = ()
    """Inside the workspace, kept read-only (`.git`, DuckLM's prompts and skills)."""
    hidden: tuple[Path, ...] = ()
    """DuckLM's own data and configs: absent wherever they are."""
    secret_names: tuple[str, ...] = ()
    """Name globs of secret files, masked in the workspace (`.env`, `*.pem`, ...)."""
    reveal_secrets: bool = False
    """The person approved a command that reads a secret: show them this once."""
    egress: Path | None = None
    """The folder of the egress proxy's socket, for an approved network command."""
    control_writable: bool = False
    """The person approved a command that writes git repositories (`git commit`) or what
    else runs by itself (`> .envrc`): those are writable for it, as nowhere else."""


def bwrap_view(view: View, *, scan: bool = True) -> list[str]:
    """The mount options of bubblewrap for `view`, in the order they must apply.

    `scan`: walk the workspace for secret files and what runs by itself (`scan_workspace`);
    off only for the probe, whose workspace is the temp folder.
    """
    argv: list[str] = []
    for entry in ROOT_ENTRIES:
        argv += _root_entry(Path(entry))
    for folder in SYSTEM_DIRS:
        argv += ["--ro-bind", folder, folder]
    argv += [arg for path in _etc_secrets() for arg in _absent(path)]
    argv += [
        "--dev", "/dev",
        "--proc", "/proc",
        # bwrap leaves /proc/sys writable to uid 0 (global sysctls!); DuckLM may run as root.
        "--ro-bind-try", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--tmpfs", "/tmp",
        # /run holds the sockets of systemd, D-Bus, docker: talking to them is an escape.
        "--tmpfs", "/run",
    ]  # fmt: skip
    if view.egress is not None:
        argv += egress_binds(view.egress)
    workspace = str(view.workspace)
    argv += ["--bind", workspace, workspace]
    found = Scan([], [], [])
    if scan:
        found = scan_workspace(view.workspace, () if view.reveal_secrets else view.secret_names)
    readonly = [p for p in view.readonly if _inside(p, view.workspace)]
    runs_later = [] if view.control_writable else [*found.control, *found.runs_itself]
    for path in (*readonly, *runs_later):
        if _mountable(path):
            argv += ["--ro-bind", str(path), str(path)]
    for path in view.hidden:
        if _inside(path, view.workspace) and path.exists():
            argv += _absent(path)
    for path in found.secrets:
        if _mountable(path):
            argv += _absent(path)
    return argv


def egress_binds(folder: Path) -> list[str]:
    """The proxy's socket folder and the relay that leads to it (`egress.py`)."""
    argv = ["--ro-bind", str(folder), EGRESS_DIR, "--ro-bind", FORWARD_SOURCE, FORWARD_SCRIPT]
    interpreter = relay_interpreter()
    prefix = os.path.dirname(os.path.dirname(interpreter))
    if not any(_inside(Path(prefix), Path(root)) for root in (*SYSTEM_DIRS, *ROOT_ENTRIES)):
        argv += ["--ro-bind", prefix, prefix]  # pyenv, a user-local build: only its folder
    return argv


def relay_interpreter() -> str:
    """The Python that runs the relay: the system's when there is one, else DuckLM's own.

    The relay is standard library only, so any Python 3 runs it, and the system's keeps
    every home out of the view; DuckLM's own, under a home (pyenv), brings its
    installation folder in, read-only.
    """
    for candidate in ("/usr/bin/python3", "/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return os.path.realpath(sys.executable)


def landlock_reads(view: View) -> list[str]:
    """The folders a Landlock sandbox may read: the system and the workspace.

    Landlock grants by folder and cannot take a file back out of one it grants, so
    secret files in the workspace stay readable there (the classifier still asks for
    the reads it sees), and so does /etc's.
    """
    folders = [*ROOT_ENTRIES, *SYSTEM_DIRS, "/dev", "/proc", str(view.workspace)]
    return [folder for folder in folders if os.path.exists(folder)]


@dataclass(frozen=True)
class Scan:
    """What one walk of the workspace found."""

    secrets: list[Path]
    """Regular files whose names match the secret globs, and their hard links."""
    control: list[Path]
    """Version control's own folders and gitfiles (`.git` at any depth, in any case), and
    the git folders those gitfiles name: read-only unless the person approved a git write."""
    runs_itself: list[Path]
    """What else a tool runs by itself (`tools/autorun.py`), and the hooks folders the
    repositories' configs name: always read-only."""


def scan_workspace(workspace: Path, names: Sequence[str]) -> Scan:
    """One `scandir` pass over `workspace`: its secret files and what runs by itself.

    No `stat` per file (`scripts/bench/sandbox_view.py` measures it): names match one
    compiled pattern, hard links are found by the inode numbers `readdir` already gives,
    then checked by `stat`; a name is looked up in `autorun.NAMES` once, case-blind.
    """
    secret = re.compile("|".join(fnmatch.translate(name) for name in names)) if names else None
    found: list[tuple[str, int]] = []
    by_inode: dict[int, list[str]] = {}
    control: list[Path] = []
    runs_itself: list[Path] = []
    for entry in _entries(workspace):  # plain strings: a Path per file costs more than the scan
        if entry.name.casefold() in autorun.NAMES:
            _runs_by_itself(workspace, entry, control, runs_itself)
        if secret is None or not _is_file(entry):
            continue
        if secret.match(entry.name):
            found.append((entry.path, entry.inode()))
        by_inode.setdefault(entry.inode(), []).append(entry.path)
    # `ln .env notes.txt` (made outside the sandbox) shares the secret's inode under a
    # harmless name; inside it, a masked file cannot be linked (another mount).
    secrets = {path for path, _ in found}
    linked = {
        other
        for path, inode in found
        for other in by_inode[inode]
        if other not in secrets and _same_file(other, path)
    }
    return Scan([Path(path) for path in sorted(secrets | linked)], control, runs_itself)


def secret_files(workspace: Path, names: Sequence[str]) -> list[Path]:
    """Regular files in `workspace` whose names match `names`, and their hard links."""
    return scan_workspace(workspace, names).secrets if names else []


def _runs_by_itself(
    workspace: Path, entry: os.DirEntry[str], control: list[Path], runs_itself: list[Path]
) -> None:
    root = workspace.resolve()
    path = Path(os.path.realpath(entry.path))  # git and direnv follow a link: so does this
    if not _inside(path, root):
        return
    if not autorun.is_control(entry.name):
        runs_itself.append(path)
        return
    control.append(path)
    git_dir = autorun.git_folder(path)
    if git_dir is None:
        return
    if (real := Path(os.path.realpath(git_dir))) != path and _inside(real, root):
        control.append(real)
    hooks = autorun.hooks_folder(git_dir, Path(entry.path).parent)
    if hooks is not None and _inside(real := Path(os.path.realpath(hooks)), root):
        runs_itself.append(real)


def _entries(workspace: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry of the workspace but what is below version control's own folders."""
    seen, stack = 0, [str(workspace)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:  # closed even when a read fails midway
                entries = list(listing)
        except OSError:  # gone, unreadable, or a path too long to name
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_SCANNED:
                log.warning("%s: over %d entries; the rest is not scanned", workspace, MAX_SCANNED)
                return
            yield entry
            try:
                if entry.is_dir(follow_symlinks=False) and not autorun.is_control(entry.name):
                    stack.append(entry.path)
            except OSError:
                continue


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def _etc_secrets() -> Iterator[Path]:
    for pattern in ETC_SECRETS:
        if any(c in pattern for c in "*?["):
            yield from sorted(Path(pattern).parent.glob(Path(pattern).name))
        elif os.path.lexists(pattern):
            yield Path(pattern)


def _root_entry(path: Path) -> list[str]:
    if path.is_symlink():
        return ["--symlink", os.readlink(path), str(path)]
    if path.is_dir():
        return ["--ro-bind", str(path), str(path)]
    return []


def _absent(path: Path) -> list[str]:
    """Mount options that leave `path` in place but empty."""
    if path.is_symlink():
        return []  # its target is masked where it lies, or is out of the view
    if path.is_dir():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def _mountable(path: Path) -> bool:
    """Whether bubblewrap can mount on `path`: it is there, and its name is not too long.

    A 1,100-deep tree must not fail every later command; what lies that deep stays as it is.
    """
    name = os.fsencode(path)
    if len(name) > MAX_MOUNT_PATH:
        log.warning("%r...: too deep to mount on; left as it is", name[:80])
        return False
    return os.path.lexists(name)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)
