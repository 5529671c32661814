"""`ducklm search QUERY [--json] [-k N]`: conversations by title and by what was said.

Goes to the running server when there is one (`GET /v1/search`), else opens DuckLM
in-process; either way `ducklm.runtime.conversation_search` does the search. Each line
names the conversation (for `ducklm history ID` / `ducklm open ID`) and what matched.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ducklm.cli.remote_client import DuckServer
    from ducklm.config.settings import Settings
    from ducklm.runtime.facade import DuckLM

NOTHING = "nothing found for {query!r} in conversation titles or in what was said"
LINE = "{conversation_id}  {where}  {snippet}"


def add_search_command(sub: Any) -> None:
    """Register `search` on `sub`."""
    search = sub.add_parser(
        "search", help="find conversations by title and by anything said in them"
    )
    search.add_argument("query", help="words to look for")
    search.add_argument("-k", type=int, default=20, help="at most this many results (20)")
    search.add_argument("--json", action="store_true", help="the results as JSON")
    search.set_defaults(command_fn=cmd_search, remote_fn=remote_search)


async def cmd_search(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm search` in-process."""
    found = await duck.search(args.query, k=max(1, args.k))
    return _show(args, [asdict(h) for h in found.hits], found.warning)


async def remote_search(server: DuckServer, settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm search` through the running server."""
    answer = await server.call("GET", "/v1/search", params={"q": args.query, "k": max(1, args.k)})
    return _show(args, answer["hits"], answer.get("warning"))


def _show(args: argparse.Namespace, hits: list[dict[str, Any]], warning: str | None) -> int:
    if args.json:
        print(json.dumps({"query": args.query, "hits": hits, "warning": warning}, indent=2))
        return 0
    if warning:
        print(f"note: {warning}")
    if not hits:
        print(NOTHING.format(query=args.query))
    for hit in hits:
        where = "title" if hit["kind"] == "title" else f"{hit['speaker']} said"
        print(
            LINE.format(conversation_id=hit["conversation_id"], where=where, snippet=hit["snippet"])
        )
    return 0
