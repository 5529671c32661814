"""The shadow git repository that holds workspace checkpoints.

One bare repository in `<data dir>/undo/repo.git` (0700) serves every workspace: the
objects are shared, so a file kept for two workspaces is stored once. Snapshots write
their blobs, trees and commits straight into its object store (`objects.py`); `git`
reads them back (diffs, listings, contents) and keeps the refs. The workspace's own
files, `.git` included, are only ever read by the walk, never by git.

The person's git configuration, hooks and attributes stay out: the environment is
built from nothing (no inherited `GIT_*`), global and system config are `/dev/null`,
and `info/attributes` turns off end-of-line conversion and filters, so a diff shows the
files byte for byte.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
from pathlib import Path

from ducklm.stores.private import create_private_file, make_private_dir
from ducklm.undo.errors import UndoError
from ducklm.undo.objects import ObjectStore

GIT_MISSING = "git is not installed, so DuckLM cannot keep workspace checkpoints"
GIT_FAILED = "git {command} failed in DuckLM's undo repository: {stderr}"
# Highest precedence of all attribute files: no eol conversion, no filters, no ident.
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.filemode=true",
    "core.quotePath=false",
    "core.attributesFile=/dev/null",
    "core.bigFileThreshold=512m",
    "gc.auto=0",
    "safe.directory=*",
    "advice.addEmbeddedRepo=false",
    "add.ignoreErrors=false",
)
IDENTITY = {"name": "DuckLM", "email": "ducklm@localhost"}


class ShadowGit:
    """git commands on the shadow repository, for one workspace at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo.git"
        self.store = ObjectStore(self.repo)
        """The object store snapshots write into (after `ready`)."""
        self._ready = False
        self._locks: dict[Path, asyncio.Lock] = {}

    def lock(self, workspace: Path) -> asyncio.Lock:
        """The lock that keeps one workspace's index to one writer in this process."""
        return self._locks.setdefault(workspace, asyncio.Lock())

    async def run(self, *args: str, stdin: bytes | None = None) -> bytes:
        """Run `git args...` on the shadow repository; its standard output.

        Args:
            args: The git command and its arguments.
            stdin: Bytes fed to the command.

        Raises:
            UndoError: git is missing or the command failed (with git's own message).
        """
        await self.ready()
        env = self._env()
        config = [part for item in CONFIG for part in ("-c", item)]
        proc = await asyncio.create_subprocess_exec(
            "git",
            *config,
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(self.root),
        )
        out, err = await proc.communicate(stdin)
        if proc.returncode != 0:
            stderr = err.decode(errors="replace").strip().splitlines()
            raise UndoError(GIT_FAILED.format(command=args[0], stderr=" ".join(stderr[-3:])))
        return out

    def cache_file(self, workspace: Path) -> Path:
        """The stat cache kept for `workspace` (it spares the next process reading files)."""
        return self.root / "cache" / _key(workspace)

    async def ready(self) -> None:
        """Create the repository and its folders if missing.

        Raises:
            UndoError: git is missing or could not create it.
        """
        if self._ready:
            return
        if not await asyncio.to_thread(self._prepare_dirs):
            proc = await asyncio.create_subprocess_exec(
                "git",
                "init",
                "-q",
                "--bare",
                str(self.repo),
                env=self._env(),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await proc.communicate()
            if proc.returncode != 0:
                raise UndoError(GIT_FAILED.format(command="init", stderr=err.decode().strip()))
        await asyncio.to_thread(_write_attributes, self.repo)
        self._ready = True

    def _prepare_dirs(self) -> bool:
        """Make the folders (0700); whether the repository exists already. Blocking."""
        if shutil.which("git") is None:
            raise UndoError(GIT_MISSING)
        for folder in (self.root, self.root / "cache"):
            make_private_dir(folder)
        return (self.repo / "HEAD").exists()

    def _env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C",
            "HOME": str(self.root),
            "GIT_DIR": str(self.repo),
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_SYSTEM": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            # Snapshots hold the workspace's files: git writes them owner-only (objects
            # 0600, folders 0700), in a repository made before this setting too.
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.sharedRepository",
            "GIT_CONFIG_VALUE_0": "0600",
        }
        for who in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{who}_NAME"] = IDENTITY["name"]
            env[f"GIT_{who}_EMAIL"] = IDENTITY["email"]
        return env


def _write_attributes(repo: Path) -> None:
    info = repo / "info"
    info.mkdir(exist_ok=True)
    create_private_file(info / "attributes").write_text(ATTRIBUTES)
    create_private_file(info / "exclude").write_text("")


def _key(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:24]


def thread_key(thread_id: str) -> str:
    """A ref-safe name for a thread id (any string a door accepts)."""
    return hashlib.sha256(thread_id.encode()).hexdigest()[:32]
