"""The FastAPI server: app factory, routes, SSE adapter, security, Agent Protocol door.

`create_app` loads on first use (PEP 562): `ducklm serve` checks its bind address with
`ducklm.server.hosts` before it builds the app, which must not bring in FastAPI, the
runtime and the graph with this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ducklm.server.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from ducklm.server.app import create_app  # noqa: PLC0415

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
