"""The shadow git repository that holds workspace checkpoints, driven with `git`.

One bare repository in `<data dir>/undo/repo.git` (0700) serves every workspace: each
workspace has its own index and exclude file there (named by a digest of its path),
the objects are shared, so a file kept for two workspaces is stored once. The
workspace's own `.git` is never read or written: git always skips a path part named
`.git`, and `GIT_DIR` points here.

The person's git configuration, hooks and attributes stay out: the environment is
built from nothing (no inherited `GIT_*`), global and system config are `/dev/null`,
and `info/attributes` (which outranks any `.gitattributes` in the workspace) turns off
end-of-line conversion and filters, so a checkpoint holds the files byte for byte.
The workspace's own `.gitignore` files do apply: ignored files are not covered.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
from pathlib import Path

from ducklm.stores.private import create_private_file, make_private_dir
from ducklm.undo.errors import UndoError

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
        self._ready = False
        self._locks: dict[Path, asyncio.Lock] = {}

    def lock(self, workspace: Path) -> asyncio.Lock:
        """The lock that keeps one workspace's index to one writer in this process."""
        return self._locks.setdefault(workspace, asyncio.Lock())

    async def run(
        self,
        *args: str,
        workspace: Path | None = None,
        stdin: bytes | None = None,
        exclude: bool = True,
    ) -> bytes:
        """Run `git args...` on the shadow repository; its standard output.

        Args:
            args: The git command and its arguments.
            workspace: The work tree and index to use; none for object-only commands.
            stdin: Bytes fed to the command.
            exclude: Leave out the files too large to keep (off to list them all).

        Raises:
            UndoError: git is missing or the command failed (with git's own message).
        """
        await self._ensure()
        env = self._env(workspace)
        config = [part for item in CONFIG for part in ("-c", item)]
        excludes = self.exclude_file(workspace) if workspace and exclude else "/dev/null"
        proc = await asyncio.create_subprocess_exec(
            "git",
            *config,
            "-c",
            f"core.excludesFile={excludes}",
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(workspace or self.root),
        )
        out, err = await proc.communicate(stdin)
        if proc.returncode != 0:
            stderr = err.decode(errors="replace").strip().splitlines()
            raise UndoError(GIT_FAILED.format(command=args[0], stderr=" ".join(stderr[-3:])))
        return out

    def index_file(self, workspace: Path) -> Path:
        """The index kept for `workspace` (its stat cache makes the next snapshot cheap)."""
        return self.root / "index" / _key(workspace)

    def exclude_file(self, workspace: Path | None) -> Path:
        """The exclude file for `workspace`: the files too large to keep."""
        return self.root / "exclude" / _key(workspace or self.root)

    async def _ensure(self) -> None:
        if self._ready:
            return
        if not await asyncio.to_thread(self._prepare_dirs):
            proc = await asyncio.create_subprocess_exec(
                "git",
                "init",
                "-q",
                "--bare",
                str(self.repo),
                env=self._env(None),
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
        for folder in (self.root, self.root / "index", self.root / "exclude"):
            make_private_dir(folder)
        return (self.repo / "HEAD").exists()

    def _env(self, workspace: Path | None) -> dict[str, str]:
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
        if workspace is not None:
            env["GIT_WORK_TREE"] = str(workspace)
            env["GIT_INDEX_FILE"] = str(self.index_file(workspace))
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
