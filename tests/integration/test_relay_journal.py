"""The relay's journal on PostgreSQL: a kept event is a row before it is a notice.

Real `LISTEN/NOTIFY` on a fresh schema: a small event comes whole in its notice, one
too large for a notice comes as its key and is read from its row, the rows read back in
order after any key, and a purge drops what is older than asked.
"""

from __future__ import annotations

import asyncio

from ducklm.stores.relay import open_relay
from tests.support.postgres import fresh_schema, require_postgres


async def test_kept_events_are_rows_then_notices() -> None:
    large = {"event": "values", "json": "x" * 9000}
    async with fresh_schema(require_postgres()) as url, open_relay(url) as relay:
        async with relay.subscribe("ap_run") as inbox:
            relay.keep("ap_run", 1, {"event": "messages", "json": "[1]"})
            relay.keep("ap_run", 2, large)
            relay.keep("ap_run", 3, {"end": True})
            async with asyncio.timeout(10):
                notices = [await inbox.get() for _ in range(3)]
        assert [(n.key, n.event) for n in notices if n is not None] == [
            ("1", {"event": "messages", "json": "[1]"}),
            ("2", None),  # too large for a notice: its row
            ("3", {"end": True}),
        ]
        assert await relay.journal.read("ap_run", 1) == [(2, large), (3, {"end": True})]
        assert await relay.journal.last("ap_run") == 3
        assert await relay.journal.last("ap_other") == 0
        await relay.journal.purge(3600)
        assert await relay.journal.last("ap_run") == 3  # younger than an hour: kept
        await relay.journal.purge(0)
        assert await relay.journal.read("ap_run", 0) == []
