"""Inside the sandbox: relay 127.0.0.1:PORT to DuckLM's egress proxy, then run the command.

Run by bubblewrap as the first program of an approved network command, with the
interpreter's `-I -S` (no site, no environment, stdlib only: nothing of the workspace
is imported). It binds the listening socket before anything else runs, so the command
never races it; a forked child relays each connection to the Unix socket bound in from
outside (`egress.py`); the parent becomes the command with `exec`. The child dies with
the sandbox's pid namespace when the command ends.

Usage: python -I -S forward.py SOCKET PORT -- COMMAND [ARG]...
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

CHUNK = 64 << 10


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(CHUNK):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    # Neither the command's output pipe nor its terminal: the command's end closes them.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> None:
    """Bind the relay's port, fork the relay, and become the command."""
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: forward.py SOCKET PORT -- COMMAND [ARG]...")
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if os.fork() == 0:
        try:
            _serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
