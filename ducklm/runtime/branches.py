"""A conversation's branches, read from its checkpoint tree (LangGraph time travel).

A person's message starts a turn at an `input` checkpoint whose parent is the
checkpoint before the message: its fork point. Regenerating a message or editing it
runs the graph again from that fork point with the message (the same text, or the new
one), so every version of a message is an `input` checkpoint under the same fork point.
The first message of a thread has no parent: its own `input` checkpoint is the fork
point (a new input there discards the old one's pending start, as LangGraph does for
any new input).

The thread's head is its newest checkpoint, as for every LangGraph client. Switching to
another version copies that version's newest checkpoint (`as_node="__copy__"`, a `fork`
checkpoint), so the branch shown is the head: a reload, the Agent Protocol door and the
next message all see it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from ducklm.runtime.states import thread_config

if TYPE_CHECKING:
    from langgraph.checkpoint.base import CheckpointTuple

    from ducklm.graph.builder import DuckGraph
    from ducklm.stores.runs import Runs


TREES_KEPT = 32
"""The threads whose checkpoint trees are kept between reads (the conversations open)."""


class BranchError(LookupError):
    """The thread has no such turn or version (the message says which)."""


@dataclass(frozen=True)
class Point:
    """One checkpoint, as the tree needs it."""

    checkpoint_id: str
    parent_id: str | None
    source: str | None
    """LangGraph's `source`: `input` (a message starts a turn), `loop`, `update`, `fork`."""
    run_id: str | None
    """The DuckLM run that wrote it (the runner puts it in the run's metadata)."""


@dataclass(frozen=True)
class Version:
    """One version of a message: its turn's `input` checkpoint, and the task it ran as."""

    checkpoint_id: str
    task_id: str | None


@dataclass(frozen=True)
class BranchTurn:
    """A message on the branch shown, with every version of it."""

    checkpoint_id: str
    """The `input` checkpoint of the version shown."""
    fork_point: str
    """The checkpoint every version starts from (the one before the message)."""
    task_id: str | None
    versions: list[Version]
    """Oldest first; the version shown is `versions[index]`."""
    index: int


@dataclass(frozen=True)
class BranchVersion:
    """One branch of a thread as a whole: where it ends, its messages, whose tasks it hides."""

    head: str
    """Its newest checkpoint (no checkpoint follows it)."""
    messages: list[AnyMessage]
    hidden: set[str]
    """The tasks that answered on other branches (`read_transcript`'s `hidden`)."""


class CheckpointTree:
    """The checkpoints of one thread, linked by their parents."""

    def __init__(self, points: Iterable[Point]) -> None:
        self._points = {point.checkpoint_id: point for point in points}
        # Checkpoint ids are time-ordered (uuid6), so the largest id is the newest.
        self.head = max(self._points, default=None)

    def chain(self, checkpoint_id: str | None = None) -> list[Point]:
        """The checkpoints from the root to `checkpoint_id` (the head by default)."""
        chain: list[Point] = []
        found = self._points.get(checkpoint_id or self.head or "")
        while found is not None:
            chain.append(found)
            found = self._points.get(found.parent_id or "")
        return chain[::-1]

    def leaves(self) -> list[str]:
        """The newest checkpoint of each branch (none follows it), the head first.

        A switch copies a version's newest checkpoint as a child of it, so a branch
        shown again still ends in one leaf.
        """
        parents = {p.parent_id for p in self._points.values()}
        ends = [c for c in self._points if c not in parents]
        return sorted(ends, key=lambda c: (c != self.head, c))

    def fork_point(self, point: Point) -> str:
        """Where a new version of the turn `point` starts (`point` is an `input` checkpoint)."""
        return point.parent_id or point.checkpoint_id

    def turns(self, run_tasks: dict[str, str]) -> list[BranchTurn]:
        """The messages of the branch shown, oldest first, each with its versions.

        Args:
            run_tasks: Run id -> task id, for the thread's runs.
        """
        inputs = [p for p in self._points.values() if p.source == "input"]
        turns: list[BranchTurn] = []
        for point in self._shown_inputs():
            fork = self.fork_point(point)
            siblings = sorted(
                (p for p in inputs if self.fork_point(p) == fork), key=lambda p: p.checkpoint_id
            )
            versions = [Version(p.checkpoint_id, run_tasks.get(p.run_id or "")) for p in siblings]
            index = [v.checkpoint_id for v in versions].index(point.checkpoint_id)
            turns.append(
                BranchTurn(point.checkpoint_id, fork, versions[index].task_id, versions, index)
            )
        return turns

    def _shown_inputs(self, head: str | None = None) -> list[Point]:
        """The `input` checkpoints of the branch shown (or ending at `head`), one per message.

        A new version of the first message is a child of the first version's `input`
        checkpoint, so both are on the chain: the later one is the version shown.
        """
        chain = [p for p in self.chain(head) if p.source == "input"]
        return [
            point
            for point, after in zip(chain, [*chain[1:], None], strict=False)
            if after is None or self.fork_point(after) != self.fork_point(point)
        ]

    def turn(self, checkpoint_id: str) -> Point:
        """The `input` checkpoint `checkpoint_id`.

        Raises:
            BranchError: The thread has no such message.
        """
        point = self._points.get(checkpoint_id)
        if point is None or point.source != "input":
            raise BranchError(f"no message starts at checkpoint {checkpoint_id!r}")
        return point

    def newest_under(self, point: Point) -> str:
        """The newest checkpoint of the version that starts at the `input` checkpoint `point`.

        Other versions of the first message sit under its first version: not this one's.
        """
        fork = self.fork_point(point)
        children: dict[str, list[Point]] = {}
        for found in self._points.values():
            children.setdefault(found.parent_id or "", []).append(found)
        newest, todo = point.checkpoint_id, [point.checkpoint_id]
        while todo:
            found_id = todo.pop()
            newest = max(newest, found_id)
            todo += [
                child.checkpoint_id
                for child in children.get(found_id, [])
                if child.source != "input" or self.fork_point(child) != fork
            ]
        return newest

    def first_step(self, point: Point) -> str | None:
        """The checkpoint after the `input` checkpoint `point` (where its message is stored)."""
        return next(
            (
                p.checkpoint_id
                for p in self._points.values()
                if p.parent_id == point.checkpoint_id and p.source == "loop"
            ),
            None,
        )

    def off_branch_tasks(self, run_tasks: dict[str, str], head: str | None = None) -> set[str]:
        """The tasks none of whose checkpoints is on the branch shown (or ending at `head`)."""
        # The first version of the first message is on the chain of every later one.
        superseded = {p.checkpoint_id for p in self.chain(head) if p.source == "input"}
        superseded -= {p.checkpoint_id for p in self._shown_inputs(head)}
        chain = [p for p in self.chain(head) if p.checkpoint_id not in superseded]
        shown = {run_tasks.get(p.run_id or "") for p in chain}
        written = {run_tasks.get(p.run_id or "") for p in self._points.values()}
        return {task for task in written - shown if task}


class Branches:
    """The branches of the threads `graph` checkpoints, and the tasks that wrote them."""

    def __init__(self, graph: DuckGraph, runs: Runs) -> None:
        self._graph = graph
        self._runs = runs
        # Reading a tree reads every checkpoint of the thread; any write makes a new head,
        # so a tree read at the same head is still the thread's.
        self._trees: dict[str, tuple[str, CheckpointTree]] = {}

    async def turns(self, thread_id: str) -> list[BranchTurn]:
        """The messages of the branch shown, each with its versions, oldest first."""
        tree, run_tasks = await self._read(thread_id, cached=True)
        return tree.turns(run_tasks)

    async def off_branch_tasks(self, thread_id: str) -> set[str]:
        """The tasks of `thread_id` that answered on another branch than the one shown."""
        tree, run_tasks = await self._read(thread_id, cached=True)
        return tree.off_branch_tasks(run_tasks)

    async def versions(self, thread_id: str) -> list[BranchVersion]:
        """Every branch of `thread_id` whole, the one shown first (an export of them all)."""
        tree, run_tasks = await self._read(thread_id, cached=True)
        found: list[BranchVersion] = []
        seen: set[tuple[str | None, ...]] = set()
        for leaf in tree.leaves():
            snapshot = await self._graph.aget_state(thread_config(thread_id, leaf))
            messages: list[AnyMessage] = snapshot.values.get("messages", [])
            said = tuple(m.id for m in messages)
            # A write beside the head (a review's, say) ends a branch of the same messages.
            if messages and said not in seen:
                seen.add(said)
                hidden = tree.off_branch_tasks(run_tasks, leaf)
                found.append(BranchVersion(leaf, messages, hidden))
        return found

    async def version_holding(self, thread_id: str, message_id: str) -> str | None:
        """The `input` checkpoint of a version whose branch holds message `message_id`.

        `None` when the branch shown holds it, or no checkpoint does. A search hit in
        another version opens that version (`POST .../branches/switch` with this id).
        """
        versions = await self.versions(thread_id)
        holding = next((v for v in versions if any(m.id == message_id for m in v.messages)), None)
        if holding is None or holding is versions[0]:
            return None
        tree, _ = await self._read(thread_id, cached=True)
        # Its last message's version: switching there shows the branch up to its end.
        inputs = [p for p in tree.chain(holding.head) if p.source == "input"]
        return inputs[-1].checkpoint_id if inputs else None

    async def fork_of(self, thread_id: str, checkpoint_id: str) -> tuple[str, str]:
        """Where a new version of the message at `checkpoint_id` starts, and its text.

        Raises:
            BranchError: No message starts there, or its text was never stored.
        """
        tree, _ = await self._read(thread_id)
        point = tree.turn(checkpoint_id)
        step = tree.first_step(point)
        snapshot = await self._graph.aget_state(thread_config(thread_id, step)) if step else None
        humans = [] if snapshot is None else _human_texts(snapshot.values.get("messages", []))
        if not humans:
            raise BranchError(f"the message at checkpoint {checkpoint_id!r} was never stored")
        return tree.fork_point(point), humans[-1]

    async def switch(self, thread_id: str, checkpoint_id: str) -> str:
        """Show the version whose message starts at `checkpoint_id`; the new head's id.

        The caller holds the thread. The version's newest checkpoint is copied as the
        head (LangGraph's `__copy__`), unless it is the head already.

        Raises:
            BranchError: No message starts at `checkpoint_id`.
        """
        tree, _ = await self._read(thread_id)
        newest = tree.newest_under(tree.turn(checkpoint_id))
        if newest == tree.head:
            return newest
        config = await self._graph.aupdate_state(
            thread_config(thread_id, newest), None, as_node="__copy__"
        )
        return str(config["configurable"]["checkpoint_id"])

    async def _read(
        self, thread_id: str, *, cached: bool = False
    ) -> tuple[CheckpointTree, dict[str, str]]:
        """The thread's tree (`cached`: the one read at the same head, if any) and its runs."""
        saver = self._graph.checkpointer
        assert isinstance(saver, BaseCheckpointSaver)  # compiled with one by `DuckLM.open`
        runs = await self._runs.for_thread(thread_id)
        run_tasks = {r.run_id: r.task_id for r in runs if r.task_id}
        latest = await saver.aget_tuple(thread_config(thread_id))
        head = str(latest.config["configurable"]["checkpoint_id"]) if latest else ""
        kept = self._trees.get(thread_id)
        if cached and kept is not None and kept[0] == head:
            return kept[1], run_tasks
        tree = await read_tree(saver, thread_id)
        self._trees.pop(thread_id, None)
        self._trees[thread_id] = (head, tree)
        while len(self._trees) > TREES_KEPT:
            self._trees.pop(next(iter(self._trees)))
        return tree, run_tasks


def _human_texts(messages: list[AnyMessage]) -> list[str]:
    return [m.text for m in messages if isinstance(m, HumanMessage)]


async def read_tree(saver: BaseCheckpointSaver[Any], thread_id: str) -> CheckpointTree:
    """The checkpoint tree of `thread_id` (empty for an unknown thread)."""
    return CheckpointTree([_point(found) async for found in saver.alist(thread_config(thread_id))])


def _point(found: CheckpointTuple) -> Point:
    parent = (found.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    metadata: dict[str, Any] = dict(found.metadata or {})
    return Point(
        str(found.config["configurable"]["checkpoint_id"]),
        str(parent) if parent else None,
        metadata.get("source"),
        metadata.get("run_id"),
    )
