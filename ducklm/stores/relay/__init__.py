"""Live events between workers on one PostgreSQL.

`NOTIFY` from the worker running a task, `LISTEN` on every worker that follows it
(`Relay`); a stream stored nowhere else is also journaled in a table (`journal.py`).
"""

from ducklm.stores.relay.journal import JournalReader
from ducklm.stores.relay.listener import Listener
from ducklm.stores.relay.payload import Notice, channel_of
from ducklm.stores.relay.publisher import Publisher
from ducklm.stores.relay.relay import Relay, open_relay, relay_of

__all__ = [
    "JournalReader",
    "Listener",
    "Notice",
    "Publisher",
    "Relay",
    "channel_of",
    "open_relay",
    "relay_of",
]
