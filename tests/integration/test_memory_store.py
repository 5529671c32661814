"""The memory store on real parts: MiniLM, embedded Qdrant in tmp_path, DuckLM's tables.

The fixture-built stores run on both backends (SQLite, then PostgreSQL).

Blockbuster (autouse) fails any test that loads the model, reads Qdrant's files or
touches SQLite on the event loop, so these tests also prove all of that runs off it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient, models

from ducklm.config.settings import Settings, load_settings
from ducklm.memory import MemoryNotFound, MemoryStore, NewMemory, infer_scope, open_memory
from ducklm.memory.bm25 import BM25Index
from ducklm.memory.layout import collection_name
from ducklm.memory.tokens import tokenize
from ducklm.stores import open_database

WS = "/home/sam/pond"


def _settings(tmp_path: Path, **overrides: Any) -> Settings:
    (tmp_path / "data").mkdir(exist_ok=True)
    return load_settings(env_file=None, data_dir=tmp_path / "data", **overrides)


@pytest.fixture
def mem_settings(tmp_path: Path, database_url: str | None) -> Settings:
    return _settings(tmp_path, database_url=database_url)


@pytest.fixture
async def store(mem_settings: Settings) -> AsyncIterator[MemoryStore]:
    async with (
        open_database(mem_settings.database_location) as db,
        open_memory(mem_settings, db) as mem,
    ):
        yield mem


@asynccontextmanager
async def _open(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_database(settings.database_location) as db, open_memory(settings, db) as mem:
        yield mem


def _points(settings: Settings) -> dict[str, dict[str, Any]]:
    """Payloads by id, read straight from the embedded Qdrant folder (store closed)."""
    client = QdrantClient(path=str(settings.files.qdrant))
    try:
        name = collection_name(settings.embeddings_model)
        records, _ = client.scroll(name, limit=1000, with_payload=True)
        return {str(r.id): r.payload or {} for r in records}
    finally:
        client.close()


async def test_a_fact_is_found_when_asked_in_other_words(store: MemoryStore) -> None:
    sister = await store.add("My sister Ana lives in Porto.")
    await store.add("I had knee surgery in 2018, so I avoid deep squats.")
    await store.add("The deploy script needs the PROD_TOKEN variable.", workspace=WS)
    result = await store.search("Which city is Ana's home?", workspace=WS)
    assert not result.degraded and result.warning is None
    top = result.hits[0]
    assert top.record.id == sister.id and top.record.scope == "global"
    assert top.vector_score is not None and top.vector_score > 0.4
    assert top.keyword_score is not None  # "Ana" is shared
    assert top.score >= result.hits[1].score
    # An exact token no paraphrase would find is the keyword side's job.
    lookup = await store.search("PROD_TOKEN", workspace=WS, k=1)
    assert lookup.hits[0].record.text.startswith("The deploy script")


async def test_scope_filtering(store: MemoryStore) -> None:
    mine = await store.add("I prefer tea in the afternoon.")
    here = await store.add("The tea script lives in tools/tea.py.", workspace=WS)
    there = await store.add("The tea module is in lib/tea.py.", workspace="/other")
    chat = await store.add("Tea for the picnic", scope="conversation", conversation_id="c1")
    other_chat = await store.add("Tea at noon", scope="conversation", conversation_id="c2")
    result = await store.search("tea", workspace=WS, conversation_id="c1", k=10)
    found = {h.record.id for h in result.hits}
    assert found == {mine.id, here.id, chat.id}
    assert there.id not in found and other_chat.id not in found
    near = await store.nearest("tea", workspace=WS, conversation_id="c1", k=10)
    assert {h.record.id for h in near} == found
    alone = await store.search("tea", k=10)  # no workspace, no conversation
    assert {h.record.id for h in alone.hits} == {mine.id}


async def test_superseded_memories_are_never_recalled(store: MemoryStore) -> None:
    old = await store.add("My dentist is Dr. Smit.")
    new = await store.add("My dentist is now Dr. Jansen.")
    await store.supersede(old.id, new.id)
    result = await store.search("who is my dentist", k=5)
    assert [h.record.id for h in result.hits] == [new.id]
    assert [h.record.id for h in await store.nearest("dentist", k=5)] == [new.id]
    assert [r.id for r in await store.list()] == [new.id]
    everything = await store.list(include_superseded=True)
    assert {r.id: r.superseded_by for r in everything} == {old.id: new.id, new.id: None}
    with pytest.raises(MemoryNotFound):
        await store.supersede(old.id, "no-such-id")


async def test_delete_removes_from_sqlite_and_qdrant(mem_settings: Settings) -> None:
    async with _open(mem_settings) as mem:
        gone = await mem.add("My locker code is 1234.")
        kept = await mem.add("My bike is a green Gazelle.")
        assert await mem.delete(gone.id)
        assert not await mem.delete(gone.id)
        assert await mem.get(gone.id) is None
        result = await mem.search("locker code 1234", k=5)
        assert gone.id not in {h.record.id for h in result.hits}
    points = await asyncio.to_thread(_points, mem_settings)
    assert set(points) == {kept.id}
    assert points[kept.id]["page_content"] == "My bike is a green Gazelle."
    assert points[kept.id]["metadata"]["memory_id"] == kept.id


async def test_update_reembeds_the_new_text(store: MemoryStore) -> None:
    memory = await store.add("My bike is a green Gazelle.", importance=0.3)
    before = (await store.nearest("What car do I drive?", k=1))[0].score
    updated = await store.update(memory.id, text="I drive a blue Tesla.", importance=0.9)
    assert updated.text == "I drive a blue Tesla." and updated.importance == 0.9
    assert updated.updated_at >= memory.updated_at
    after = await store.nearest("What car do I drive?", k=1)
    assert after[0].record.id == memory.id and after[0].score > before + 0.2
    result = await store.search("Tesla", k=1)
    assert result.hits[0].keyword_score is not None
    with pytest.raises(MemoryNotFound):
        await store.update("no-such-id", importance=0.1)


async def test_reindex_rebuilds_after_the_qdrant_folder_is_wiped(mem_settings: Settings) -> None:
    async with _open(mem_settings) as mem:
        await mem.add_many([NewMemory(f"My pet number {i} is a goldfish.") for i in range(5)])
        cat = await mem.add("My cat Pixel is a grey British Shorthair.")
    await asyncio.to_thread(shutil.rmtree, mem_settings.files.qdrant)
    async with _open(mem_settings) as mem:
        stale = await mem.search("What breed is my cat?")
        assert stale.degraded and stale.warning and "reindex" in stale.warning
        seen: list[tuple[int, int]] = []
        assert await mem.reindex(lambda done, total: seen.append((done, total))) == 6
        assert seen[-1] == (6, 6)
        fresh = await mem.search("What breed is my cat?")
        assert not fresh.degraded and fresh.warning is None
        assert fresh.hits[0].record.id == cat.id and fresh.hits[0].vector_score is not None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_qdrant_server_that_is_down_degrades_to_keywords(tmp_path: Path) -> None:
    settings = await asyncio.to_thread(
        _settings, tmp_path, qdrant_url=f"http://127.0.0.1:{_closed_port()}"
    )
    async with _open(settings) as mem:
        stored = await mem.add("My sister Ana lives in Porto.")  # kept despite Qdrant
        result = await mem.search("Where does Ana live?")
        assert result.degraded and result.warning and "keywords" in result.warning
        assert [h.record.id for h in result.hits] == [stored.id]
        assert result.hits[0].vector_score is None and result.hits[0].keyword_score
        assert await mem.nearest("Ana") == []


async def test_a_corrupt_local_qdrant_degrades_to_keywords(mem_settings: Settings) -> None:
    async with _open(mem_settings) as mem:
        stored = await mem.add("My sister Ana lives in Porto.")
    name = collection_name(mem_settings.embeddings_model)
    storage = mem_settings.files.qdrant / "collection" / name / "storage.sqlite"
    await asyncio.to_thread(storage.write_bytes, b"this is not a database" * 100)
    async with _open(mem_settings) as mem:
        result = await mem.search("Where does Ana live?")
        assert result.degraded and result.warning and "keywords" in result.warning
        assert [h.record.id for h in result.hits] == [stored.id]


async def test_langchain_reads_the_collection(mem_settings: Settings) -> None:
    async with _open(mem_settings) as mem:
        stored = await mem.add("The release branch is called release/stable.", workspace=WS)

    def read() -> list[Any]:
        client = QdrantClient(path=str(mem_settings.files.qdrant))
        try:
            name = collection_name(mem_settings.embeddings_model)
            (point,) = client.retrieve(name, [stored.id], with_vectors=True)
            vector = list(point.vector)
            lc = QdrantVectorStore(
                client, name, validate_embeddings=False, distance=models.Distance.DOT,
                validate_collection_config=False,
            )  # fmt: skip
            return lc.similarity_search_with_score_by_vector(vector, k=1)
        finally:
            client.close()

    ((doc, score),) = await asyncio.to_thread(read)
    assert doc.page_content == stored.text and doc.metadata["scope"] == "workspace"
    assert score == pytest.approx(1.0, abs=1e-3)


async def test_invalid_memories_are_refused(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="text"):
        await store.add("   ")
    with pytest.raises(ValueError, match="importance"):
        await store.add("I like tea.", importance=1.5)
    with pytest.raises(ValueError, match="workspace"):
        await store.add("Anything", scope="workspace")
    # An inferred scope that lacks its workspace widens instead of failing.
    widened = await store.add("The tests live in tests/unit/.")
    assert widened.scope == "global"
    assert (await store.add("The tests live in tests/unit/.", workspace=WS)).scope == "workspace"


async def test_list_filters_exactly(store: MemoryStore) -> None:
    await store.add("I like tea.")
    here = await store.add("The tea script is tools/tea.py.", workspace=WS)
    await store.add("Tea later", scope="conversation", conversation_id="c1", workspace=WS)
    assert [r.id for r in await store.list(scope="workspace")] == [here.id]
    assert len(await store.list(workspace=WS)) == 2  # provenance counts for list
    assert len(await store.list(limit=1)) == 1


async def test_the_model_loads_lazily(tmp_path: Path) -> None:
    # A model that does not exist is only noticed when first used, and then degrades.
    settings = await asyncio.to_thread(
        _settings, tmp_path, embeddings_model=str(tmp_path / "no-such-model")
    )
    async with _open(settings) as mem:
        stored = await mem.add("My sister Ana lives in Porto.")
        result = await mem.search("Ana")
        assert result.degraded and result.warning and "no local copy" in result.warning
        assert [h.record.id for h in result.hits] == [stored.id]


def test_bm25_follows_adds_and_removes() -> None:
    index = BM25Index()
    index.add("a", "The cats sleep on the sofa.")
    index.add("b", "Dogs bark at the postman.")
    assert tokenize("The cats' sofas!") == ["cat", "sofa"]
    assert [d for d, _ in index.search("cat", lambda _: True, 5)] == ["a"]
    index.add("a", "A parrot talks.")  # replacing a text drops its old words
    assert index.search("cat", lambda _: True, 5) == []
    index.remove("b")
    assert len(index) == 1 and index.search("dogs", lambda _: True, 5) == []


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("My sister Ana lives in Porto.", "global"),
        ("I'm lactose intolerant.", "global"),
        ("I prefer tabs over spaces in Python files.", "global"),
        ("My favourite editor is Neovim.", "global"),
        ("Sam is allergic to penicillin.", "global"),  # the user's name counts as "I"
        ("The deploy script lives in scripts/deploy.sh.", "workspace"),
        ("Settings are read from config/settings.toml.", "workspace"),
        ("I'm fixing the login bug in auth.py.", "workspace"),
        ("The helper is called parse_args.", "workspace"),
        ("The repo uses squash merges.", "workspace"),
        ("Logs go to /var/log/pond/.", "workspace"),
        ("We moved the meeting to Friday and/or Monday.", "conversation"),
        ("Use the blue colour scheme for this diagram.", "conversation"),
        ("The answer should fit on one page.", "conversation"),
    ],
)
def test_infer_scope(text: str, scope: str) -> None:
    assert infer_scope(text, user_names=["Sam"]) == scope


class _Embeddings(BaseHTTPRequestHandler):
    """`POST /v1/embeddings`: fixed vectors, one axis per known word; 500 when told."""

    WORDS = ("ana", "porto", "city", "cat", "pixel", "breed")
    requests: list[dict[str, Any]]
    fail = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        if type(self).fail:
            self.send_response(500)
            self.end_headers()
            return
        data = [{"index": i, "embedding": self._vector(t)} for i, t in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _vector(self, text: str) -> list[float]:
        lowered = text.lower()
        return [2.0 if w in lowered else 0.0 for w in self.WORDS] + [0.1]

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def embeddings_server() -> Iterator[tuple[str, type[_Embeddings]]]:
    handler = type("Handler", (_Embeddings,), {"requests": [], "fail": False})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    finally:
        server.shutdown()
        server.server_close()


async def test_remote_embeddings(
    tmp_path: Path, embeddings_server: tuple[str, type[_Embeddings]]
) -> None:
    url, handler = embeddings_server
    settings = await asyncio.to_thread(
        _settings, tmp_path, embeddings_url=url, embeddings_model="stub-embedder"
    )
    async with _open(settings) as mem:
        ana = await mem.add("My sister Ana lives in Porto.")
        await mem.add("My cat Pixel is a Shorthair.")
        result = await mem.search("Which city is Ana's home?", k=1)
        assert not result.degraded
        assert result.hits[0].record.id == ana.id
        # Shared axes "ana" of ("ana", "city") and ("ana", "porto"): cosine 0.5.
        assert result.hits[0].vector_score == pytest.approx(0.5, abs=0.01)
        assert handler.requests[0]["path"] == "/v1/embeddings"
        assert handler.requests[0]["model"] == "stub-embedder"
        handler.fail = True
        # Another text: a repeated one would come from the query cache.
        down = await mem.search("Where does Ana live?", k=1)
        assert down.degraded and down.warning and "embeddings endpoint" in down.warning
        assert down.hits[0].record.id == ana.id
