"""Request and response bodies of the Store API (`store/routes.py`).

Field names and defaults follow the LangGraph server's OpenAPI (`StorePutRequest`,
`StoreSearchRequest`, `StoreDeleteRequest`, `StoreListNamespacesRequest`, `Item`).
A namespace is a list of labels, each a non-empty string without a period; a bad one,
a missing key or a value that is not a JSON object is a `422` that says which.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from ducklm.server.agent_protocol.common.schemas import Body
from ducklm.server.agent_protocol.store.filter import check_filter
from ducklm.server.agent_protocol.store.mapping import check_labels
from ducklm.server.schemas import MAX_ID_LENGTH, MAX_PATH_LENGTH

Label = Annotated[str, Field(max_length=MAX_PATH_LENGTH)]
Labels = Annotated[list[Label], Field(max_length=50)]
Namespace = Annotated[Labels, AfterValidator(lambda v: list(check_labels(v)))]
"""At least one label."""
Prefix = Annotated[Labels, AfterValidator(lambda v: list(check_labels(v, allow_empty=True)))]
"""Labels, maybe none (`[]`: everything)."""
Key = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH)]
Filter = Annotated[dict[str, Any], AfterValidator(check_filter)]


class StorePut(Body):
    """`PUT /store/items`."""

    namespace: Namespace
    key: Key
    value: dict[str, Any]
    index: Literal[False] | list[str] | None = None
    """Accepted, not acted on: every item is indexed as a memory."""
    ttl: float | None = None
    """Accepted, not acted on: items do not expire."""


class StoreDelete(Body):
    """`DELETE /store/items`."""

    namespace: Namespace
    key: Key


class StoreSearch(Body):
    """`POST /store/items/search`."""

    namespace_prefix: Prefix | None = None
    filter: Filter | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    query: str | None = Field(default=None, max_length=2000)
    refresh_ttl: bool | None = None
    """Accepted, not acted on: items do not expire."""


class StoreNamespaces(Body):
    """`POST /store/namespaces`."""

    prefix: Prefix | None = None
    suffix: Prefix | None = None
    max_depth: int | None = Field(default=None, ge=1)
    limit: int = Field(default=100, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


class StoreItem(BaseModel):
    """An item: a DuckLM memory as the Store API shows it."""

    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: str
    updated_at: str


class SearchedItem(StoreItem):
    """An item found by a search; `score` (0..1) when the search had a query."""

    score: float | None = None


class FoundItems(BaseModel):
    """`POST /store/items/search`'s answer."""

    items: list[SearchedItem]


class FoundNamespaces(BaseModel):
    """`POST /store/namespaces`'s answer."""

    namespaces: list[list[str]]
