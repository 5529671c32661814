"""`ducklm` processes forked from one that has already imported DuckLM.

A `ducklm` process spends its first seconds importing LangGraph, LangChain, FastAPI and
DuckLM itself, and the suite starts about 120 of them. A zygote (as Android calls it)
pays that once per test process: it imports the CLI and what the commands load, then
waits on a Unix socket. For each command it forks; the child takes the caller's pipes as
its stdin, stdout and stderr, the caller's environment and working directory, and runs
`ducklm.cli.main.main(args)` exactly as `python -m ducklm.cli.main ARGS` does. It is a
real process of its own: exit codes, signals (Ctrl-C, SIGKILL mid-run), pipes and files
behave as with a fresh interpreter. What differs, and why no test that depends on it
goes through here: which modules are already imported (`run_cli_loading` starts a fresh
interpreter), and the interpreter's own start-up.

The zygote forks twice per command: a keeper that reports the command's pid and then its
exit status over the request's socket, and the command under it. The zygote itself stays
single-threaded (forking a threaded process is unsafe) and never waits for anyone: the
kernel reaps its keepers (SIGCHLD ignored).

    python -m tests.support.zygote SOCKET_PATH     # the zygote (tests/support/cli.py starts it)
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Any

PRELOAD = (
    "ducklm.cli.main",
    "ducklm.runtime.facade",
    "ducklm.server.app",
    "ducklm.cli.remote_client",
    "langchain_openai",
    "uvicorn",
)
"""What the commands import on their way; each child finds them loaded."""

MESSAGE_BYTES = 1 << 20
STDIO = 3


# The zygote's side.


def serve(path: str) -> None:
    """Import what the commands need, then fork one child per request, forever."""
    for name in PRELOAD:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(128)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        conn, _ = listener.accept()
        message, fds, _, _ = socket.recv_fds(conn, MESSAGE_BYTES, STDIO)
        if os.fork() == 0:
            listener.close()
            _keep(conn, json.loads(message), fds)
        conn.close()
        for fd in fds:
            os.close(fd)


def _keep(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """The keeper: fork the command, say its pid, wait for it, say how it ended."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run(request, fds)
    for fd in fds:
        os.close(fd)
    conn.send(json.dumps({"pid": pid}).encode())
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):  # the caller may have gone
        conn.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
    os._exit(0)


def _run(request: dict[str, Any], fds: list[int]) -> None:
    """The command: what `python -m ducklm.cli.main ARGS` does, in this forked process."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    # Fresh standard streams over the new descriptors, set up as a new interpreter's are.
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    import ducklm.cli.main as cli  # loaded already, before the fork

    main = cli.main
    sys.argv = [str(cli.__file__), *request["args"]]

    code = 1
    try:
        code = main(request["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 128 + signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        atexit._run_exitfuncs()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
    os._exit(code)


# The caller's side.


class ForkedProcess:
    """What the tests use of `asyncio.subprocess.Process`, for a command the zygote forked."""

    def __init__(
        self,
        pid: int,
        ended: asyncio.Future[int],
        stdin: int | None,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
    ) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._ended = ended
        self._stdin = stdin
        self.stdout = stdout
        self.stderr = stderr

    def take_stdin(self) -> int | None:
        """The write end of the command's stdin pipe (`None` without one), now the caller's
        to write to while the command runs, and to close; `communicate` no longer feeds it."""
        fd, self._stdin = self._stdin, None
        return fd

    async def wait(self) -> int:
        """Wait for the command to end; its exit code (-N for signal N, as asyncio's)."""
        self.returncode = await asyncio.shield(self._ended)
        return self.returncode

    async def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        """Send `input` (then end stdin), read both outputs to their end, wait."""
        writing = asyncio.ensure_future(self._feed(input))
        out, err = await asyncio.gather(self.stdout.read(), self.stderr.read())
        await writing
        await self.wait()
        return out, err

    async def _feed(self, data: bytes | None) -> None:
        if self._stdin is None:
            return
        fd, self._stdin = self._stdin, None
        await asyncio.to_thread(_write_all_and_close, fd, data or b"")

    def send_signal(self, sig: int) -> None:
        """Send `sig` to the command, unless it has ended."""
        if self._ended.done():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        """SIGTERM."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL."""
        self.send_signal(signal.SIGKILL)


def _write_all_and_close(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        pass  # the command ended without reading it all, as with a real pipe
    finally:
        os.close(fd)


class Zygote:
    """One zygote process for this test process, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: Path | None = None  # made at the first start, removed by `stop`

    def ensure(self) -> None:
        """Start the zygote unless it runs (blocking: call it on a thread)."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            self._forget()
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="ducklm-zygote-"))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            env = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_")}
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.zygote", self.path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                env=env,
                cwd=Path(__file__).resolve().parents[2],
            )
            assert self._process.stdout is not None
            line = self._process.stdout.readline()
            if line != b"ready\n":
                raise RuntimeError(f"the zygote did not start (it said {line!r})")

    def stop(self) -> None:
        """Stop the zygote (the commands it started go on until they end)."""
        with self._lock:
            if self._process is not None:
                self._process.kill()
                self._process.wait()
            self._forget()
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

    @property
    def path(self) -> str:
        """The zygote's socket (its folder is made at the first start)."""
        assert self._folder is not None, "the zygote has not started"
        return str(self._folder / "zygote.sock")

    def _forget(self) -> None:
        if self._process is not None and self._process.stdout is not None:
            self._process.stdout.close()
        self._process = None

    async def start(
        self, args: list[str], *, env: dict[str, str], cwd: Path, stdin_pipe: bool
    ) -> ForkedProcess:
        """Fork `ducklm ARGS` with pipes for its output (and for its input if asked)."""
        await asyncio.to_thread(self.ensure)
        stdin_read, stdin_write = os.pipe() if stdin_pipe else (_devnull(), None)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        request = json.dumps({"args": args, "env": env, "cwd": str(cwd)}).encode()
        try:
            conn, pid = await asyncio.to_thread(
                self._send, request, [stdin_read, out_write, err_write]
            )
        finally:
            for fd in (stdin_read, out_write, err_write):
                os.close(fd)
        loop = asyncio.get_running_loop()
        stdout = _reader(loop, out_read)
        stderr = _reader(loop, err_read)
        ended = _watch_ending(loop, conn)
        return ForkedProcess(pid, ended, stdin_write, stdout, stderr)

    def _send(self, request: bytes, fds: list[int]) -> tuple[socket.socket, int]:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(self.path)
            socket.send_fds(conn, [request], fds)
            pid = json.loads(conn.recv(MESSAGE_BYTES))["pid"]
        except BaseException:
            conn.close()
            raise
        return conn, int(pid)


def _devnull() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _reader(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamReader:
    """A stream of what the command writes to `fd`'s other end.

    A thread reads the pipe to its end and closes it, whatever becomes of the test's
    loop (a pipe transport left open when a test's loop closes is a ResourceWarning).
    """
    reader = asyncio.StreamReader(limit=2**20)
    threading.Thread(target=_pump, args=(loop, fd, reader), daemon=True).start()
    return reader


def _pump(loop: asyncio.AbstractEventLoop, fd: int, reader: asyncio.StreamReader) -> None:
    try:
        while chunk := os.read(fd, 65536):
            with contextlib.suppress(RuntimeError):  # the test's loop has closed
                loop.call_soon_threadsafe(reader.feed_data, chunk)
    finally:
        os.close(fd)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(reader.feed_eof)


def _watch_ending(loop: asyncio.AbstractEventLoop, conn: socket.socket) -> asyncio.Future[int]:
    """The command's exit code, as its keeper reports it.

    A thread waits for the report and closes the socket, whatever becomes of the test's
    loop (a socket left open when a test's loop closes is a ResourceWarning).
    """
    ended: asyncio.Future[int] = loop.create_future()

    def settle(code: int | None) -> None:
        if ended.done():
            return
        if code is None:
            ended.set_exception(
                RuntimeError("the zygote's keeper ended without saying how the command ended")
            )
        else:
            ended.set_result(code)

    def wait() -> None:
        try:
            data = conn.recv(MESSAGE_BYTES)
        except OSError:
            data = b""
        finally:
            conn.close()
        code = int(json.loads(data)["returncode"]) if data else None
        with contextlib.suppress(RuntimeError):  # the test's loop has closed
            loop.call_soon_threadsafe(settle, code)

    threading.Thread(target=wait, daemon=True).start()
    return ended


if __name__ == "__main__":
    serve(sys.argv[1])
