"""`ducklm mcp serve` as an MCP host runs it (a process, JSON lines on its stdin and stdout),
forked from the zygote like every test's `ducklm`: the same command, its imports paid once.

`forked_serve` starts it and hands back its pipes; `stdio_streams` wraps them as the SDK's
stdio transport does (the read and write streams a `ClientSession` takes), for the tests
that talk MCP over stdio, and `tests/support/stdio_bridge.py` carries its lines raw.
A fresh interpreter took 15-20 s to answer its first request at load 7-9; a fork, 1.2 s.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from tests.support.cli import start_cli
from tests.support.zygote import ForkedProcess

Process = asyncio.subprocess.Process | ForkedProcess
STOP_S = 30.0  # a server given its stdin's end stops on its own, at once


class StdinPipe:
    """The process's stdin, forked (a pipe's fd) or started fresh (`DUCK_TEST_FRESH_PROCESSES`)."""

    def __init__(self, process: Process) -> None:
        self._fd = process.take_stdin() if isinstance(process, ForkedProcess) else None
        self._writer = process.stdin if isinstance(process, asyncio.subprocess.Process) else None

    async def write(self, data: bytes) -> None:
        """Write all of `data`."""
        if self._writer is not None:
            self._writer.write(data)
            await self._writer.drain()
        elif self._fd is not None:
            await asyncio.to_thread(_write_all, self._fd, data)

    def close(self) -> None:
        """End the process's stdin (stdio's way of saying goodbye)."""
        if self._writer is not None:
            self._writer.close()
        elif self._fd is not None:
            os.close(self._fd)
        self._fd = self._writer = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@asynccontextmanager
async def forked_serve(
    env: dict[str, str], cwd: Path, log: Path | None = None
) -> AsyncIterator[tuple[Process, StdinPipe]]:
    """`ducklm mcp serve` running, with its stdin; stopped (stdin ended) when the block ends.

    Its stderr is read to its end (a full pipe would block it), into `log` when given. A
    process still running `STOP_S` after its stdin's end is killed and fails the test: a
    host that closes stdin expects it gone.
    """
    process = await start_cli("mcp", "serve", env=env, cwd=cwd, stdin=asyncio.subprocess.PIPE)
    stdin = StdinPipe(process)
    keeping = asyncio.create_task(_keep(process, log))
    try:
        yield process, stdin
    finally:
        stdin.close()
        try:
            await asyncio.wait_for(process.wait(), STOP_S)
        except TimeoutError:
            process.kill()
            await process.wait()
            await keeping
            lingered = f"ducklm mcp serve ran on {STOP_S:.0f} s after its stdin ended"
            raise AssertionError(lingered) from None
        await keeping


async def _keep(process: Process, log: Path | None) -> None:
    assert process.stderr is not None
    said = await process.stderr.read()
    if log is not None:
        await asyncio.to_thread(log.write_bytes, said)


@asynccontextmanager
async def stdio_streams(
    env: dict[str, str], cwd: Path
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """A forked `ducklm mcp serve` as the SDK's stdio transport's two streams."""
    async with forked_serve(env, cwd) as (process, stdin):
        assert process.stdout is not None
        stdout = process.stdout
        incoming, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write, outgoing = anyio.create_memory_object_stream[SessionMessage](0)

        async def reading() -> None:
            async with incoming:
                async for line in stdout:
                    try:
                        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except ValueError as exc:  # the session reports it
                        await incoming.send(exc)
                        continue
                    await incoming.send(SessionMessage(message))

        async def writing() -> None:
            async with outgoing:
                async for sent in outgoing:
                    line = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.write(line.encode() + b"\n")

        async with anyio.create_task_group() as group:
            group.start_soon(reading)
            group.start_soon(writing)
            try:
                yield read, write
            finally:
                write.close()
                read.close()
                group.cancel_scope.cancel()
