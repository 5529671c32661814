"""`ducklm memory`, `ducklm skills` and `ducklm experience`: what DuckLM learned."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from typing import Any

from ducklm.memory import MemoryStore
from ducklm.runtime import DuckLM
from ducklm.skill_proposals import apply_proposal, list_proposals

EXIT_USAGE = 2


def add_learning_commands(sub: Any) -> None:
    """Register the memory, skills and experience subcommands on `sub`."""
    memory = sub.add_parser("memory", help="add, list, search, delete or reindex memories")
    msub = memory.add_subparsers(dest="memory_command", required=True)
    add = msub.add_parser("add", help="remember a fact")
    add.add_argument("text")
    add.add_argument("--scope", choices=["global", "workspace", "conversation"])
    add.add_argument("--importance", type=float, default=0.7)
    add.set_defaults(command_fn=cmd_memory_add)
    listing = msub.add_parser("list", help="list memories")
    listing.add_argument("--all", action="store_true", help="include superseded ones")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(command_fn=cmd_memory_list)
    search = msub.add_parser("search", help="hybrid search, as recall does")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=5)
    search.add_argument("--json", action="store_true")
    search.set_defaults(command_fn=cmd_memory_search)
    delete = msub.add_parser("delete", help="forget a memory by id")
    delete.add_argument("memory_id")
    delete.set_defaults(command_fn=cmd_memory_delete)
    reindex = msub.add_parser("reindex", help="rebuild the vectors from SQLite")
    reindex.set_defaults(command_fn=cmd_memory_reindex)

    skills = sub.add_parser("skills", help="list skills and the proposals to change them")
    ssub = skills.add_subparsers(dest="skills_command", required=True)
    skills_list = ssub.add_parser("list", help="skills that loaded, and problems")
    skills_list.add_argument("--json", action="store_true", help="one JSON object per line")
    skills_list.set_defaults(command_fn=cmd_skills_list)
    proposals = ssub.add_parser("proposals", help="patches the critic suggested")
    proposals.add_argument("--json", action="store_true", help="one JSON object per line")
    proposals.set_defaults(command_fn=cmd_skills_proposals)
    apply = ssub.add_parser("apply", help="apply a proposal to its skill")
    apply.add_argument("proposal_id")
    apply.set_defaults(command_fn=cmd_skills_apply)

    experience = sub.add_parser("experience", help="the critic's reflections, newest first")
    experience.add_argument("--thread")
    experience.add_argument("--json", action="store_true")
    experience.set_defaults(command_fn=cmd_experience)


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
    print(f"{record.id}  [{record.scope}] {record.text}")
    return 0


async def cmd_memory_list(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory list`."""
    for record in await _memory(duck).list(include_superseded=args.all, limit=1000):
        if args.json:
            print(json.dumps(asdict(record), default=str))
        else:
            gone = f" (superseded by {record.superseded_by})" if record.superseded_by else ""
            print(f"{record.id}  [{record.scope}] {record.text}{gone}")
    return 0


async def cmd_memory_search(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory search`."""
    result = await _memory(duck).search(
        args.query, workspace=str(duck.settings.workspace), k=args.k
    )
    if result.degraded:
        print(f"ducklm: warning: {result.warning}", file=sys.stderr)
    for hit in result.hits:
        if args.json:
            print(json.dumps({"score": hit.score, **asdict(hit.record)}, default=str))
        else:
            print(f"{hit.score:.3f}  {hit.record.id}  {hit.record.text}")
    return 0


async def cmd_memory_delete(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory delete`."""
    if await _memory(duck).delete(args.memory_id):
        print(f"deleted {args.memory_id}")
        return 0
    print(f"ducklm: no memory with id {args.memory_id}", file=sys.stderr)
    return EXIT_USAGE


async def cmd_memory_reindex(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm memory reindex`, with progress on stderr."""

    def progress(done: int, total: int) -> None:
        print(f"\rreindexing {done}/{total}", end="", file=sys.stderr, flush=True)

    count = await _memory(duck).reindex(progress)
    print(f"\nreindexed {count} memories", file=sys.stderr)
    return 0


async def cmd_skills_list(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm skills list`."""
    for skill in duck.context.skills.skills:
        if args.json:
            print(skill.model_dump_json())
        else:
            print(f"{skill.id:<20} {skill.description}")
    # Problems go to stderr either way, so a JSON listing stays one skill per line.
    for problem in duck.context.skills.problems:
        print(f"skipped {problem.path}: {problem.message}", file=sys.stderr)
    return 0


async def cmd_skills_proposals(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm skills proposals`."""
    for proposal in await asyncio.to_thread(list_proposals, duck.context.settings.proposals_dir):
        if args.json:
            print(proposal.model_dump_json())
        else:
            print(f"{proposal.id}  skill={proposal.skill_id or '-'}  {proposal.patch}")
    return 0


async def cmd_skills_apply(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm skills apply`."""
    context = duck.context
    path = await asyncio.to_thread(
        apply_proposal, context.settings.proposals_dir, context.skills_dir, args.proposal_id
    )
    print(f"applied {args.proposal_id} to {path}")
    return 0


async def cmd_experience(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm experience`."""
    for record in await duck.context.experience.list(thread_id=args.thread):
        if args.json:
            print(json.dumps(asdict(record)))
        else:
            print(
                f"{record.score:.2f}  {record.thread_id}  {record.summary}  lesson: {record.lesson}"
            )
    return 0
