"""Episodes: every user and assistant message, indexed as it was said.

Facts are what the memory policy chose to keep; episodes are what was *said*, in any
conversation of the workspace, found by keyword and vector like facts (the same
`MemoryStore`, over the `episodes` table and its own Qdrant collection). An episode
is a record with the scope `workspace`, its conversation, the speaker (`user` /
`assistant`) as its type and the time it was said.

The `EpisodeWriter` indexes a finished turn's messages behind the turn: the run service
hands it the thread when a run ends and returns at once; encoding and writing happen
in a background task, after a short pause, so they never sit on a first token.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from ducklm.memory.records import NewMemory
from ducklm.memory.store import MemoryStore
from ducklm.models.answer_stream import is_working

log = logging.getLogger(__name__)

Speaker = Literal["user", "assistant"]
LoadTurn = Callable[[str], Awaitable[tuple[Sequence[AnyMessage], str]]]
"""A conversation's messages and its workspace, by conversation id."""

EPISODE_NAMESPACE = uuid.UUID("6f1d7c4e-2b7a-4e59-9a53-5d0c7c1e2a10")
"""uuid5 namespace: an episode's id follows from its conversation and message id."""
MAX_EPISODE_CHARS = 2_000
"""Longer messages are kept as their head: an answer's first lines carry its gist."""
RECENT_MESSAGES = 40
"""A finished turn looks back this far for messages not yet indexed."""
WRITE_DELAY_S = 0.5
"""Quiet before writing: no turn running, none started for this long. The person's next
message often follows at once; its query encode does not wait for ours (queries have a
model thread of their own), but our encode and Qdrant upsert would still share the two
cores with its first token."""
MAX_DEFER_S = 30.0
"""Under traffic that never pauses, a turn's episodes are written this long after it
ended at the latest: late for search from other conversations, never lost."""


def episode_id(conversation_id: str, message_id: str) -> str:
    """The id of the episode of one message (stable: re-indexing finds it)."""
    return str(uuid.uuid5(EPISODE_NAMESPACE, f"{conversation_id}\x00{message_id}"))


def speaker_of(message: AnyMessage) -> Speaker | None:
    """`user` or `assistant` for messages people said or read; `None` for the rest."""
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage) and not message.tool_calls and not is_working(message):
        return "assistant"
    # Tool results, tool-call steps and a plan step's working are not conversation.
    return None


def episodes_of(
    messages: Sequence[AnyMessage],
    *,
    conversation_id: str,
    workspace: str,
    said_at: Callable[[AnyMessage], float],
) -> list[NewMemory]:
    """The episodes of `messages` that have a speaker, an id and some text."""
    items = []
    for message in messages:
        speaker = speaker_of(message)
        text = message.text.strip()
        if speaker is None or not message.id or not text:
            continue
        items.append(
            NewMemory(
                text[:MAX_EPISODE_CHARS],
                scope="workspace",
                workspace=workspace,
                conversation_id=conversation_id,
                memory_type=speaker,
                metadata={"message_id": message.id},
                id=episode_id(conversation_id, message.id),
                said_at=said_at(message),
            )
        )
    return items


async def index_new(store: MemoryStore, items: Sequence[NewMemory]) -> int:
    """Store the episodes among `items` that are not stored yet; returns how many."""
    missing = set(await store.missing([i.id for i in items if i.id]))
    fresh = [i for i in items if i.id in missing]
    if fresh:
        await store.add_many(fresh)
    return len(fresh)


class EpisodeWriter:
    """Indexes finished turns in the background, one at a time, in the order handed in.

    A write waits for a quiet moment: no run inside `hold()`, and none started or ended
    for `delay_s` (or `MAX_DEFER_S` after its turn ended, whatever the traffic), so that
    indexing takes nothing from a turn's first token. `note` never awaits; `aclose`
    waits for what is queued. A failure is logged and costs that turn's episodes only
    (`ducklm memory reindex` finds them again).
    """

    def __init__(
        self,
        store: MemoryStore,
        load: LoadTurn,
        *,
        clock: Callable[[], float] = time.time,
        delay_s: float = WRITE_DELAY_S,
        warm: Callable[[], bool] = lambda: True,
    ) -> None:
        self._store = store
        self._warm = warm
        """Whether an encode now costs no model load (see `aclose`)."""
        self._dropping = False
        self._load = load
        self.clock = clock
        """When a turn's messages were said (a test moves it)."""
        self._delay_s = delay_s
        self._queue: asyncio.Queue[tuple[str, float] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._running = 0
        self._stirred = time.monotonic()
        """When a run last started or ended."""
        self._changed = asyncio.Event()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Mark a run going on: no write starts until it ended and things went quiet."""
        self._stir(+1)
        try:
            yield
        finally:
            self._stir(-1)

    def _stir(self, running: int) -> None:
        self._running += running
        self._stirred = time.monotonic()
        self._changed.set()

    def note(self, conversation_id: str) -> None:
        """Index the turn that just ended in `conversation_id`, soon."""
        self._queue.put_nowait((conversation_id, self.clock()))
        if self._task is None:
            self._task = asyncio.create_task(self._drain(), name="ducklm-episodes")

    async def idle(self) -> None:
        """Wait until everything handed in so far is written."""
        await self._queue.join()

    async def aclose(self) -> None:
        """Write what is queued, then stop; with the model cold, leave it unwritten.

        A process about to exit that never loaded the embedding model (`ducklm resume`
        in-process embeds nothing before its turn ends) would load torch and the model
        (10-60 s) only to index one turn, and the person would wait for the prompt. The
        turn is found again by the thread's next turn (the writer takes its recent
        messages that are not stored yet) or by `ducklm memory reindex`.
        """
        if self._task is None:
            return
        self._dropping = not self._warm()
        self._queue.put_nowait(None)
        await self._task
        self._task = None

    async def _drain(self) -> None:
        while (item := await self._queue.get()) is not None:
            try:
                if not self._dropping:
                    await self._quiet(time.monotonic() + MAX_DEFER_S)
                if self._dropping:  # checked again: `aclose` may have come during the wait
                    log.info("episodes of %s left for a later write: the model is cold", item[0])
                else:
                    await self._write(*item)
            except Exception:  # a lost turn is found again by a reindex
                log.warning("episodes of %s not indexed", item[0], exc_info=True)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    async def _quiet(self, deadline: float) -> None:
        """Return once no run has gone on for `delay_s`, or at `deadline`."""
        while (now := time.monotonic()) < deadline:
            self._changed.clear()
            if not self._running and now - self._stirred >= self._delay_s:
                return
            quiet_at = deadline if self._running else self._stirred + self._delay_s
            # A run starting or ending moves the moment: look again then.
            with suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(quiet_at, deadline) - now)

    async def _write(self, conversation_id: str, ended_at: float) -> None:
        messages, workspace = await self._load(conversation_id)
        items = episodes_of(
            list(messages)[-RECENT_MESSAGES:],
            conversation_id=conversation_id,
            workspace=workspace,
            said_at=lambda _: ended_at,
        )
        await index_new(self._store, items)
