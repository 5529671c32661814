"""`/store/items` (put, get, delete), `/store/items/search`, `/store/namespaces`.

LangGraph's Store API as `langgraph-sdk`'s `client.store` calls it, over DuckLM's memory
(`store/items.py`; the mapping is `store/mapping.py`). Shapes and status codes follow
the LangGraph server (`langgraph_api/api/store.py`): put and delete answer `204`, a get
of a missing item `200` with `null`. `index` and `ttl` are accepted and ignored: every
item is indexed (its text is a memory's) and none expires.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response

from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.server.agent_protocol.common.wire import WireResponse
from ducklm.server.agent_protocol.store.items import Found, StoreItems
from ducklm.server.agent_protocol.store.mapping import BadNamespace, ItemView, check_labels
from ducklm.server.agent_protocol.store.schemas import (
    FoundItems,
    FoundNamespaces,
    StoreDelete,
    StoreItem,
    StoreNamespaces,
    StorePut,
    StoreSearch,
)
from ducklm.server.responses import errors
from ducklm.server.schemas import MAX_ID_LENGTH

router = APIRouter()

NO_MEMORY = "DuckLM has no memory store open (memory is off in its settings)"


async def get_items(request: Request) -> StoreItems:
    """The Store API's service, opened by the door's lifespan."""
    items: StoreItems = request.app.state.agent_protocol.store_items
    if not items.available:
        raise HTTPException(503, NO_MEMORY)
    return items


ItemsDep = Annotated[StoreItems, Depends(get_items)]


@router.put("/store/items", status_code=204, responses=errors(422, 503))
async def put_item(body: StorePut, items: ItemsDep) -> Response:
    """Store or replace an item (a DuckLM memory)."""
    try:
        await items.put(tuple(body.namespace), body.key, body.value)
    except ValueError as exc:  # a BadNamespace or the memory's own check, said for people
        raise HTTPException(422, str(exc)) from None
    return Response(status_code=204)


@router.get("/store/items", response_model=StoreItem | None, responses=errors(422, 503))
async def get_item(
    items: ItemsDep,
    key: Annotated[str, Query(min_length=1, max_length=MAX_ID_LENGTH)],
    namespace: Annotated[str, Query(max_length=4096, description="labels joined by '.'")],
) -> WireResponse:
    """One item, or `null`."""
    found = await items.get(_dotted(namespace), key)
    return WireResponse(_item(found) if found is not None else None)


@router.delete("/store/items", status_code=204, responses=errors(422, 503))
async def delete_item(body: StoreDelete, items: ItemsDep) -> Response:
    """Forget an item (its memory too)."""
    await items.delete(tuple(body.namespace), body.key)
    return Response(status_code=204)


@router.post("/store/items/search", response_model=FoundItems, responses=errors(422, 503))
async def search_items(body: StoreSearch, items: ItemsDep) -> WireResponse:
    """Items under a namespace prefix, by filter, and by DuckLM's search when `query` is set."""
    found = await items.search(
        tuple(body.namespace_prefix or ()),
        filter_=body.filter,
        query=body.query,
        limit=body.limit,
        offset=body.offset,
    )
    return WireResponse({"items": [_searched(f) for f in found]})


@router.post("/store/namespaces", response_model=FoundNamespaces, responses=errors(422, 503))
async def list_namespaces(body: StoreNamespaces, items: ItemsDep) -> WireResponse:
    """The namespaces that hold items."""
    found = await items.namespaces(
        prefix=tuple(body.prefix or ()),
        suffix=tuple(body.suffix or ()),
        max_depth=body.max_depth,
        limit=body.limit,
        offset=body.offset,
    )
    return WireResponse({"namespaces": [list(ns) for ns in found]})


def _dotted(namespace: str) -> tuple[str, ...]:
    try:
        return check_labels(namespace.split("."))
    except BadNamespace as exc:
        raise HTTPException(422, str(exc)) from None


def _item(item: ItemView) -> dict[str, Any]:
    return {
        "namespace": list(item.namespace),
        "key": item.key,
        "value": item.value,
        "created_at": iso_time(item.record.created_at),
        "updated_at": iso_time(item.record.updated_at),
    }


def _searched(found: Found) -> dict[str, Any]:
    return {**_item(found.item), "score": found.score}
