"""Copying a thread's checkpoints to a new thread id, row for row.

LangGraph's savers for SQLite and PostgreSQL have no `acopy_thread`, and copying through
`aget_tuple`/`aput` would not be exact: DuckLM's `messages` is a `DeltaChannel`, rebuilt
from the writes of a chain of parent checkpoints (`ducklm.stores.prune`), so the copy
must keep every checkpoint id, parent link and write as it is. Each table's rows are
copied with only `thread_id` changed, in one transaction. LangGraph keeps the thread id
out of checkpoint metadata (`EXCLUDED_METADATA_KEYS`) and DuckLM's state holds none, so
nothing else names the old thread.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg_pool import AsyncConnectionPool

_CHECKPOINTS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_WRITES = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type"
_SQLITE_TABLES = {"checkpoints": _CHECKPOINTS, "writes": f"{_WRITES}, value"}
_POSTGRES_TABLES = {
    "checkpoints": _CHECKPOINTS,
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": f"{_WRITES}, blob",
}


def _copy_sql(table: str, columns: str, placeholder: str) -> str:
    return (
        f"INSERT INTO {table} (thread_id, {columns}) "
        f"SELECT {placeholder}, {columns} FROM {table} WHERE thread_id = {placeholder}"
    )


async def copy_checkpoints(saver: BaseCheckpointSaver[Any], source: str, target: str) -> None:
    """Give `target` (a thread with no checkpoints) every checkpoint and write of `source`.

    Raises:
        NotImplementedError: A saver other than SQLite's or PostgreSQL's that cannot copy.
    """
    if isinstance(saver, AsyncSqliteSaver):
        async with saver.lock:  # the saver's own lock: its connection is shared
            try:
                for table, columns in _SQLITE_TABLES.items():
                    await saver.conn.execute(_copy_sql(table, columns, "?"), (target, source))
            except BaseException:
                await saver.conn.rollback()
                raise
            await saver.conn.commit()
    elif isinstance(saver, AsyncPostgresSaver) and isinstance(saver.conn, AsyncConnectionPool):
        async with saver.conn.connection() as conn, conn.transaction():
            for table, columns in _POSTGRES_TABLES.items():
                await conn.execute(_copy_sql(table, columns, "%s"), (target, source))
    else:
        await saver.acopy_thread(source, target)
