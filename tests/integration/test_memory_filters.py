"""The Qdrant filter a server search uses: the same records as `View.sees`, dates included.

Embedded Qdrant evaluates the same filter language (slowly, which is why embedded
searches filter in DuckLM instead), so it checks the filter here without a server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from qdrant_client import QdrantClient, models

from ducklm.memory.intake import new_record
from ducklm.memory.layout import payload, qdrant_filter
from ducklm.memory.records import MemoryRecord, NewMemory
from ducklm.memory.scope import View, Visibility


def said(text: str, conversation: str, at: float) -> MemoryRecord:
    item = NewMemory(text, "workspace", "/w", conversation, "user", said_at=at)
    return new_record(item)


def matching(tmp_path: Path, records: list[MemoryRecord], view: View) -> set[str]:
    client = QdrantClient(path=str(tmp_path / "q"))
    try:
        client.create_collection("c", models.VectorParams(size=2, distance=models.Distance.DOT))
        points = [
            models.PointStruct(id=r.id, vector=[1.0, 0.0], payload=payload(r)) for r in records
        ]
        client.upsert("c", points)
        found = client.query_points(
            "c", query=[1.0, 0.0], query_filter=qdrant_filter(view), limit=10
        )
        return {str(p.id) for p in found.points}
    finally:
        client.close()


async def test_the_server_filter_keeps_what_the_view_sees(tmp_path: Path) -> None:
    records = [
        said("early, elsewhere", "a", 100.0),
        said("late, elsewhere", "a", 300.0),
        said("late, here", "b", 300.0),
    ]
    for view in (
        View("/w", "b"),
        View("/w", "b", since=200.0),
        View("/w", "b", until=200.0),
        View("/w", "b", since=200.0, others_only=True),
        View("/other", "b"),
    ):
        expected = {r.id for r in records if view.sees(Visibility.of(r))}
        assert (
            await asyncio.to_thread(matching, tmp_path / str(id(view)), records, view) == expected
        )
