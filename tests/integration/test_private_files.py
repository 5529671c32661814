"""DuckLM's files are the person's alone: the data dir 0700, its files 0600.

On a shared machine, another local user must not read conversations, memories, the
audit log or the token. These tests look at the modes on disk after real use.
"""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from ducklm.stores.private import secure_data_dir
from tests.support.cli import cli_env, run_cli
from tests.support.scripted_llm import ScriptedLLM, call, reply


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(data_dir: Path) -> dict[str, int]:
    """The mode of every entry at the data dir's top level, and of the dir itself."""
    found = {p.name: mode(p) for p in data_dir.iterdir()}
    return found | {".": mode(data_dir)}


async def test_a_run_leaves_only_owner_only_files(settings: Settings, llm: ScriptedLLM) -> None:
    llm.script(reply("Hello."))
    async with DuckLM.open(settings) as duck:
        result = await duck.run("hi", critic=False, memory=False)
        assert result.status == "completed"
    found = await asyncio.to_thread(modes, settings.data_dir)
    assert found["."] == 0o700
    for name in ("ducklm.sqlite", "checkpoints.sqlite", "ducklm.sqlite-wal"):
        if name in found:
            assert found[name] == 0o600, (name, oct(found[name]))
    assert {"ducklm.sqlite", "checkpoints.sqlite"} <= found.keys()
    if "qdrant" in found:
        assert found["qdrant"] == 0o700
    loose = {n: oct(m) for n, m in found.items() if n != "." and m & 0o077}
    assert loose == {}


async def test_the_cli_creates_a_private_data_dir_with_its_log_and_token(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings)
    token = await run_cli("token", env=env, cwd=tmp_path)
    assert token.code == 0, token.stderr
    listed = await run_cli("threads", env=env, cwd=tmp_path)
    assert listed.code == 0, listed.stderr
    found = await asyncio.to_thread(modes, settings.data_dir)
    assert found["."] == 0o700
    assert found["api_token"] == 0o600
    assert found["ducklm.log"] == 0o600
    assert {n: oct(m) for n, m in found.items() if n != "." and m & 0o077} == {}


def test_an_older_loose_data_dir_is_tightened_and_other_files_are_left(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    (data / "ducklm.sqlite").write_bytes(b"")
    (data / "ducklm.sqlite").chmod(0o644)
    (data / "qdrant").mkdir()
    (data / "qdrant").chmod(0o755)
    (data / "notes-of-mine.txt").write_text("mine")
    (data / "notes-of-mine.txt").chmod(0o644)
    secure_data_dir(data)
    assert mode(data) == 0o700
    assert mode(data / "ducklm.sqlite") == 0o600
    assert mode(data / "qdrant") == 0o700
    assert mode(data / "notes-of-mine.txt") == 0o644  # not DuckLM's: left as it was


async def test_the_undo_repository_is_owner_only_too(
    settings: Settings, llm: ScriptedLLM, workspace: Path
) -> None:
    """Its objects are the workspace's files, as they were before each change."""
    await asyncio.to_thread((workspace / "a.txt").write_text, "secret draft")
    write = call("file_write", path="a.txt", content="new", overwrite=True)
    llm.script(reply(tool_calls=[write]), reply("Written."))
    async with DuckLM.open(settings) as duck:
        paused = await duck.run("overwrite a.txt", critic=False, memory=False)
        result = await duck.resume_run(paused.thread_id, [{"type": "approve"}])
        assert result.status == "completed"
    undo = settings.files.undo

    def loose() -> dict[str, str]:
        return {
            str(p.relative_to(undo)): oct(mode(p))
            for p in [undo, *undo.rglob("*")]
            if not p.is_symlink() and mode(p) & 0o077
        }

    assert await asyncio.to_thread(lambda: any(undo.rglob("objects/*/*")))
    assert await asyncio.to_thread(loose) == {}
