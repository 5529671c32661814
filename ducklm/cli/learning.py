"""`ducklm memory`, `ducklm skills` and `ducklm experience`: what DuckLM learned.

The memory commands have two forms: in-process (`cmd_memory_*`, on `DuckLM`'s store) and
through a `ducklm serve` on the same data dir (`remote_memory_*`, whose store holds the
embedded Qdrant and the embedding model). Both print the same lines. The skills and
experience commands read files and tables only: they open neither the runtime nor a
server's connection, so they take a second, not the runtime's several.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ducklm.cli.exit_codes import EXIT_USAGE
from ducklm.cli.remote_client import DuckServer, ServerRefused

if TYPE_CHECKING:
    from ducklm.config.settings import Settings
    from ducklm.memory import MemoryStore
    from ducklm.runtime.facade import DuckLM


def add_learning_commands(sub: Any) -> None:
    """Register the memory, skills and experience subcommands on `sub`."""
    memory = sub.add_parser("memory", help="add, list, search, delete or reindex memories")
    msub = memory.add_subparsers(dest="memory_command", required=True)
    add = msub.add_parser("add", help="remember a fact")
    add.add_argument("text")
    add.add_argument("--scope", choices=["global", "workspace", "conversation"])
    add.add_argument("--importance", type=float, default=0.7)
    add.set_defaults(command_fn=cmd_memory_add, remote_fn=remote_memory_add)
    listing = msub.add_parser("list", help="list memories")
    listing.add_argument("--all", action="store_true", help="include superseded ones")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(command_fn=cmd_memory_list, remote_fn=remote_memory_list)
    search = msub.add_parser("search", help="hybrid search, as recall does")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=5)
    search.add_argument("--json", action="store_true")
    search.set_defaults(command_fn=cmd_memory_search, remote_fn=remote_memory_search)
    delete = msub.add_parser("delete", help="forget a memory by id")
    delete.add_argument("memory_id")
    delete.set_defaults(command_fn=cmd_memory_delete, remote_fn=remote_memory_delete)
    reindex = msub.add_parser(
        "reindex", help="rebuild the vectors from SQLite, and the episodes from the conversations"
    )
    reindex.set_defaults(command_fn=cmd_memory_reindex, remote_fn=remote_memory_reindex)

    skills = sub.add_parser("skills", help="list skills and the proposals to change them")
    ssub = skills.add_subparsers(dest="skills_command", required=True)
    skills_list = ssub.add_parser("list", help="skills that loaded, and problems")
    skills_list.add_argument("--json", action="store_true", help="one JSON object per line")
    skills_list.set_defaults(standalone_fn=cmd_skills_list)
    proposals = ssub.add_parser("proposals", help="patches the critic suggested")
    proposals.add_argument("--json", action="store_true", help="one JSON object per line")
    proposals.set_defaults(standalone_fn=cmd_skills_proposals)
    apply = ssub.add_parser("apply", help="apply a proposal to its skill")
    apply.add_argument("proposal_id")
    apply.set_defaults(standalone_fn=cmd_skills_apply)

    experience = sub.add_parser("experience", help="the critic's reflections, newest first")
    experience.add_argument("--thread")
    experience.add_argument("--json", action="store_true")
    experience.set_defaults(standalone_fn=cmd_experience)


def _memory(duck: DuckLM) -> MemoryStore:
    if duck.context.memory is None:
        raise LookupError("no memory store is open")
    return duck.context.memory


async def cmd_memory_add(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory add`."""
    record = await _memory(duck).add(
        args.text,
        scope=args.scope,
        importance=args.importance,
        workspace=str(duck.settings.workspace),
    )
    _print_added(asdict(record))
    return 0


async def cmd_memory_list(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory list`."""
    records = await _memory(duck).list(include_superseded=args.all, limit=1000)
    _print_records([asdict(record) for record in records], as_json=args.json)
    return 0


async def cmd_memory_search(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory search`."""
    result = await _memory(duck).search(
        args.query, workspace=str(duck.settings.workspace), k=args.k
    )
    hits = [{"score": hit.score, **asdict(hit.record)} for hit in result.hits]
    _print_hits(hits, result.warning if result.degraded else None, as_json=args.json)
    return 0


async def cmd_memory_delete(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory delete`."""
    return _print_deleted(args.memory_id, await _memory(duck).delete(args.memory_id))


async def cmd_memory_reindex(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory reindex`, with progress on stderr."""

    def progress(done: int, total: int) -> None:
        print(f"\rreindexing {done}/{total}", end="", file=sys.stderr, flush=True)

    count = await _memory(duck).reindex(progress)
    print(f"\nreindexed {count} memories", file=sys.stderr)
    episodes = await duck.reindex_episodes(progress)
    print(f"\nreindexed {episodes} episodes (messages of every conversation)", file=sys.stderr)
    return 0


async def remote_memory_add(
    server: DuckServer, settings: Settings, args: argparse.Namespace
) -> int:
    """`ducklm memory add` through the server (its default workspace is the CLI's)."""
    body = {"text": args.text, "scope": args.scope, "importance": args.importance}
    _print_added(await server.call("POST", "/v1/memory", json=body))
    return 0


async def remote_memory_list(
    server: DuckServer, settings: Settings, args: argparse.Namespace
) -> int | None:
    """`ducklm memory list` through the server; `None` (in-process) for `--all`."""
    if args.all:
        return None  # the API lists only memories in force; SQLite has the rest
    records = await server.call("GET", "/v1/memory", params={"limit": 1000})
    _print_records(records, as_json=args.json)
    return 0


async def remote_memory_search(
    server: DuckServer, settings: Settings, args: argparse.Namespace
) -> int:
    """`ducklm memory search` through the server, with its embedding model."""
    found = await server.call("GET", "/v1/memory/search", params={"q": args.query, "k": args.k})
    hits = [{"score": h["score"], **_record_fields(h)} for h in found["hits"]]
    _print_hits(hits, found["warning"] if found["degraded"] else None, as_json=args.json)
    return 0


async def remote_memory_delete(
    server: DuckServer, settings: Settings, args: argparse.Namespace
) -> int:
    """`ducklm memory delete` through the server."""
    try:
        await server.call("DELETE", f"/v1/memory/{args.memory_id}")
    except ServerRefused:
        return _print_deleted(args.memory_id, False)
    return _print_deleted(args.memory_id, True)


async def remote_memory_reindex(
    server: DuckServer, settings: Settings, args: argparse.Namespace
) -> int | None:
    """`ducklm memory reindex` beside a server: in-process only with a Qdrant server."""
    if settings.qdrant_url:
        return None  # a Qdrant server takes a second client; only the embedded one locks
    raise ServerRefused(
        f"the server at {server.url} holds the embedded Qdrant and the API has no reindex: "
        "stop the server, then run `ducklm memory reindex`"
    )


def _record_fields(hit: dict[str, Any]) -> dict[str, Any]:
    """A search hit of the API without its extra scores: the record's own fields."""
    return {k: v for k, v in hit.items() if k not in {"score", "vector_score", "keyword_score"}}


def _print_added(record: dict[str, Any]) -> None:
    print(f"{record['id']}  [{record['scope']}] {record['text']}")


def _print_records(records: list[dict[str, Any]], *, as_json: bool) -> None:
    for record in records:
        if as_json:
            print(json.dumps(record, default=str))
        else:
            gone = record["superseded_by"]
            print(
                f"{record['id']}  [{record['scope']}] {record['text']}"
                + (f" (superseded by {gone})" if gone else "")
            )


def _print_hits(hits: list[dict[str, Any]], warning: str | None, *, as_json: bool) -> None:
    if warning is not None:
        print(f"ducklm: warning: {warning}", file=sys.stderr)
    for hit in hits:
        if as_json:
            print(json.dumps(hit, default=str))
        else:
            print(f"{hit['score']:.3f}  {hit['id']}  {hit['text']}")


def _print_deleted(memory_id: str, deleted: bool) -> int:
    if deleted:
        print(f"deleted {memory_id}")
        return 0
    print(f"ducklm: no memory with id {memory_id}", file=sys.stderr)
    return EXIT_USAGE


async def cmd_skills_list(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm skills list`: reads the skill files, nothing else."""
    from ducklm.learning.skills import SkillRegistry, skills_dir_of  # noqa: PLC0415

    registry = await asyncio.to_thread(SkillRegistry.load, skills_dir_of(settings))
    for skill in registry.skills:
        if args.json:
            print(skill.model_dump_json())
        else:
            print(f"{skill.id:<20} {skill.description}")
    # Problems go to stderr either way, so a JSON listing stays one skill per line.
    for problem in registry.problems:
        print(f"skipped {problem.path}: {problem.message}", file=sys.stderr)
    return 0


async def cmd_skills_proposals(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm skills proposals`: reads the proposal files."""
    from ducklm.learning.skill_proposals import list_proposals  # noqa: PLC0415

    for proposal in await asyncio.to_thread(list_proposals, settings.files.skill_proposals):
        if args.json:
            print(proposal.model_dump_json())
        else:
            print(f"{proposal.id}  skill={proposal.skill_id or '-'}  {proposal.patch}")
    return 0


async def cmd_skills_apply(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm skills apply`: patches a skill file (a server picks it up at its next start)."""
    from ducklm.learning.skill_proposals import apply_proposal  # noqa: PLC0415
    from ducklm.learning.skills import skills_dir_of  # noqa: PLC0415

    path = await asyncio.to_thread(
        apply_proposal, settings.files.skill_proposals, skills_dir_of(settings), args.proposal_id
    )
    print(f"applied {args.proposal_id} to {path}")
    return 0


async def cmd_experience(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm experience`: reads the critic's records from DuckLM's tables."""
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415
    from ducklm.stores.experience import ExperienceLog  # noqa: PLC0415

    async with open_operator_stores(settings) as stores:
        records = await ExperienceLog(stores.db).list(thread_id=args.thread)
    for record in records:
        if args.json:
            print(json.dumps(asdict(record)))
        else:
            print(
                f"{record.score:.2f}  {record.thread_id}  {record.summary}  lesson: {record.lesson}"
            )
    return 0
