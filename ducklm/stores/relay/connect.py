"""How each part of the relay opens a PostgreSQL connection of its own.

The publisher, the listener and the journal's reader each hold one connection, opened
when first used; `open_relay` hands them the one way to open it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from psycopg import AsyncConnection

Connect = Callable[[], Awaitable[AsyncConnection[Any]]]
"""Opens a new connection (autocommit, as `LISTEN`/`NOTIFY` and the journal need)."""
