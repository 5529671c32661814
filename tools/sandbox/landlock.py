"""Landlock confinement: read and execute only the folders given, write only where allowed.

The fallback sandbox for machines where bubblewrap cannot start. The parent never
calls `restrict` itself (a Landlock domain is permanent for the process and its
children); it runs this file as a launcher, standard library only, so the child starts
quickly and imports nothing from DuckLM::

    python -I -S landlock.py [--read DIR]... --write WORKSPACE --write TMP \
        [--deny-network [--connect-port PORT]] -- CMD...

Without `--read`, the whole tree is readable (the view's reads come from
`tools/sandbox/view.py:landlock_reads`).

The launcher fails closed: if the ruleset cannot be applied it exits 126 and never
runs the command unconfined.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence

# The syscall numbers are the same on every architecture DuckLM runs on (x86_64, arm64):
# Landlock came after the tables were unified.
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
_READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
# Devices a shell writes to in ordinary use (`> /dev/null`); granted one by one, since
# granting /dev as a folder would grant /dev/sda too.
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
EXIT_CANNOT_CONFINE = 126


class LandlockError(OSError):
    """The kernel refused a Landlock call."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _NetPortAttr(ctypes.Structure):
    _fields_ = (
        ("allowed_access", ctypes.c_uint64),
        ("port", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = (
        ("allowed_access", ctypes.c_uint64),
        ("parent_fd", ctypes.c_int32),
    )


def _syscall(number: int, *args: object) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = int(libc.syscall(ctypes.c_long(number), *args))
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, os.strerror(errno))
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled.

    One syscall, cheap enough for the event loop.
    """
    try:
        return _syscall(
            _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except OSError:
        return 0


def fs_rights(abi: int) -> int:
    """Every file system right the given ABI version knows about."""
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def restrict(
    writable: Sequence[str],
    *,
    deny_network: bool,
    readable: Sequence[str] = ("/",),
    connect_port: int | None = None,
) -> None:
    """Confine this process and its future children for good.

    Args:
        writable: Folders where everything is allowed.
        readable: Folders that may be read and executed; the rest is out of reach.
        deny_network: Forbid TCP connect and bind (needs ABI 4; older kernels cannot).
        connect_port: With `deny_network`, the one TCP port that may still be
            connected to: the egress proxy's (Landlock rules name ports, not addresses).
    """
    abi = abi_version()
    if abi < 1:
        raise LandlockError(0, "Landlock is not available on this kernel")
    handled = fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=handled)
    size = 8
    if abi >= 4:
        size = 16
        if deny_network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        # Signals stay inside the sandbox's own processes; abstract unix sockets are a
        # way around a denied network (X11, D-Bus), so they go with it.
        attr.scoped = SCOPE_SIGNAL | (SCOPE_ABSTRACT_UNIX_SOCKET if deny_network else 0)
    ruleset = _syscall(
        _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    try:
        for folder in readable:
            _add_rule(ruleset, folder, _READ_RIGHTS & handled)
        for device in DEVICE_FILES:
            _add_rule(ruleset, device, _FILE_RIGHTS & handled)
        for folder in writable:
            _add_rule(ruleset, folder, handled)
        if deny_network and connect_port is not None and abi >= 4:
            port = _NetPortAttr(allowed_access=NET_CONNECT_TCP, port=connect_port)
            _syscall(
                _SYS_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_NET_PORT),
                ctypes.byref(port),
                ctypes.c_uint32(0),
            )
        _no_new_privs()
        _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _no_new_privs() -> None:
    # Required before restrict_self without CAP_SYS_ADMIN, and wanted anyway: a setuid
    # program must not gain back rights the sandbox took away.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, os.strerror(errno))


def _add_rule(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # nothing there to grant, e.g. a device this machine lacks
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS  # folder-only rights on a file are EINVAL
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        _syscall(
            _SYS_ADD_RULE,
            ctypes.c_int(ruleset),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
    finally:
        os.close(fd)


def main(argv: Sequence[str]) -> int:
    """Confine this process, then become the command. Returns only on failure.

    Args:
        argv: `[--read DIR]... [--write DIR]... [--deny-network [--connect-port N]]
            -- COMMAND [ARG]...`
    """
    args = list(argv)
    if "--" not in args:
        usage = "usage: landlock.py [--read DIR]... [--write DIR]... [--deny-network] -- CMD..."
        print(usage, file=sys.stderr)
        return 2
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    writable = [options[i + 1] for i, opt in enumerate(options[:-1]) if opt == "--write"]
    readable = [options[i + 1] for i, opt in enumerate(options[:-1]) if opt == "--read"]
    ports = [int(options[i + 1]) for i, opt in enumerate(options[:-1]) if opt == "--connect-port"]
    try:
        restrict(
            writable,
            deny_network="--deny-network" in options,
            readable=readable or ["/"],
            connect_port=ports[0] if ports else None,
        )
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"ducklm sandbox: cannot confine the command: {exc}", file=sys.stderr)
    return EXIT_CANNOT_CONFINE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
