"""What DuckLM keeps in Qdrant: collection names, point payloads, filters and indexes.

The layout is langchain-qdrant's (an unnamed vector, the text under `page_content`,
everything else under `metadata`), so `QdrantVectorStore(client, collection, embedding,
distance=Distance.DOT)` reads DuckLM's memories as LangChain documents.
"""

from __future__ import annotations

from typing import Any

from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient, models

from ducklm.memory.records import MemoryRecord
from ducklm.memory.scope import View, Visibility

CONTENT_KEY = QdrantVectorStore.CONTENT_KEY
METADATA_KEY = QdrantVectorStore.METADATA_KEY


def collection_name(model: str, kind: str = "memories") -> str:
    """One collection per kind (`memories`, `episodes`) and embedding model.

    Per model, so switching models never mixes vectors.
    """
    slug = "".join(ch if ch.isalnum() else "_" for ch in model.rsplit("/", 1)[-1].lower())
    return f"ducklm_{kind}_{slug}"


def payload(record: MemoryRecord) -> dict[str, Any]:
    """The point payload: LangChain's layout, with the id and the fields search filters on."""
    seen = Visibility.of(record)
    return {
        CONTENT_KEY: record.text,
        METADATA_KEY: {
            "memory_id": record.id,
            "scope": seen.scope,
            "workspace": seen.workspace,
            "conversation_id": seen.conversation_id,
            "superseded": seen.superseded,
            "said_at": seen.said_at,
        },
    }


def qdrant_filter(view: View) -> models.Filter:
    """`View.sees` as a Qdrant filter, for a server (which has payload indexes)."""

    def field(name: str, value: Any) -> models.FieldCondition:
        return models.FieldCondition(
            key=f"{METADATA_KEY}.{name}", match=models.MatchValue(value=value)
        )

    visible: list[models.Condition] = [field("scope", "global")]
    if view.workspace is not None:
        visible.append(
            models.Filter(must=[field("scope", "workspace"), field("workspace", view.workspace)])
        )
    if view.conversation_id is not None:
        visible.append(
            models.Filter(
                must=[
                    field("scope", "conversation"),
                    field("conversation_id", view.conversation_id),
                ]
            )
        )
    must: list[models.Condition] = [field("superseded", False)]
    if view.since is not None or view.until is not None:
        # Points written before times were in the payload fail this: a reindex adds them.
        window = models.Range(gte=view.since, lt=view.until)
        must.append(models.FieldCondition(key=f"{METADATA_KEY}.said_at", range=window))
    must_not: list[models.Condition] = []
    if view.others_only and view.conversation_id is not None:
        must_not.append(field("conversation_id", view.conversation_id))
    return models.Filter(must=must, should=visible, must_not=must_not or None)


def index_filter_fields(client: QdrantClient, collection: str) -> None:
    """Payload indexes a server filters with (embedded Qdrant has none)."""
    for name, kind in (
        ("scope", models.PayloadSchemaType.KEYWORD),
        ("workspace", models.PayloadSchemaType.KEYWORD),
        ("conversation_id", models.PayloadSchemaType.KEYWORD),
        ("superseded", models.PayloadSchemaType.BOOL),
        ("said_at", models.PayloadSchemaType.FLOAT),
    ):
        client.create_payload_index(collection, f"{METADATA_KEY}.{name}", field_schema=kind)
