"""Enter to the first visible event: nothing waits in the dark, whatever ran before.

One `ducklm serve` process (the in-process MiniLM, as shipped) on the scripted model
server, whose critic takes `REVIEW_S` to answer, so the review behind every reviewed
answer is still going when the next message comes. Measured at an SSE client, from the
request to the first event (`run_started`) and to the first `token`:

1. cold: the first message, sent as soon as the server answers, while the embedding
   model still loads (`/health` says `loading`): the turn goes on without recall;
2. interleaved rounds on a warm server: (a) the baseline, a message on a thread with
   nothing pending (critic and memory off); (b) a message on a thread whose previous
   answer's review is going on (the critic is out): the review is deferred, not waited
   for. (b)/(a) is what a pending review costs the person.

Before this change (b) waited for the review: 82-129 s on the bundled model, `REVIEW_S`
here. Target: (b)'s first event <= 1 s.

    .venv/bin/python scripts/bench/first_event.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _common import Reply, ScriptedLLM, header, median_ms, p90_ms, reply, table, verdict
from server_latency import ducklm_serve

from tests.support.langgraph_dev import tail

ROUNDS = 15
REVIEW_S = 10.0
TOKEN = "bench-token-0123456789abcdef"


def respond(body: dict[str, Any]) -> Reply:
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    if schema == "Critique":
        return reply(json.dumps({"score": 0.8, "summary": "fine"}), delay_s=REVIEW_S)
    if schema == "MemoryProposal":
        return reply(json.dumps({"should_store": False}))
    return reply("An answer in a few words.")


async def timed_turn(
    client: httpx.AsyncClient, message: str, conversation: str | None, *, reviewed: bool
) -> tuple[float, float, str]:
    """Seconds to the first event and to the first token, and the conversation's id."""
    body: dict[str, Any] = {"message": message, "critic": reviewed, "memory": reviewed}
    if conversation is not None:
        body["conversation_id"] = conversation
    first = token = 0.0
    start = time.perf_counter()
    async with client.stream("POST", "/v1/chat/stream", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            first = first or time.perf_counter() - start
            if event.get("type") == "token" and not token:
                token = time.perf_counter() - start
            conversation = event.get("thread_id") or conversation
    assert conversation is not None
    return first, token, conversation


async def health(client: httpx.AsyncClient) -> str:
    state: str = (await client.get("/health")).json()["checks"]["embeddings"]
    return state


async def while_loading(client: httpx.AsyncClient) -> None:
    """How long the model loads behind the server, and how `/health` answers meanwhile."""
    started, answers = time.perf_counter(), []
    while True:
        asked = time.perf_counter()
        state = await health(client)
        answers.append(time.perf_counter() - asked)
        if state != "loading":
            break
        await asyncio.sleep(0.25)
    took = time.perf_counter() - started
    print(f"embeddings {state!r} {took:.1f} s after the first turn; /health meanwhile "
          f"p50 {median_ms(answers):.1f} ms, p90 {p90_ms(answers):.1f} ms "
          f"({len(answers)} asked)\n")  # fmt: skip


async def bench(url: str) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    # Idle connections expire before uvicorn's own 5 s keep-alive can close one under us.
    limits = httpx.Limits(keepalive_expiry=1.0)
    client = await asyncio.to_thread(
        httpx.AsyncClient, base_url=url, headers=headers, timeout=300, limits=limits
    )
    async with client:
        state = await health(client)
        cold_first, cold_token, _ = await timed_turn(client, "Hello there.", None, reviewed=False)
        print(f"cold: /health said {state!r}; first event {cold_first * 1000:.1f} ms, "
              f"first token {cold_token * 1000:.1f} ms")  # fmt: skip
        await while_loading(client)
        # The reviewed thread: each answer leaves a review going for REVIEW_S.
        _, _, busy = await timed_turn(client, "Explain what a duck is.", None, reviewed=True)
        idle: list[tuple[float, float]] = []
        pending: list[tuple[float, float]] = []
        for n in range(ROUNDS):
            first, token, _ = await timed_turn(client, f"Hello {n}.", None, reviewed=False)
            idle.append((first, token))
            first, token, _ = await timed_turn(
                client, f"Explain duck number {n}.", busy, reviewed=True
            )
            pending.append((first, token))
    rows = []
    for name, runs in (("(a) nothing pending (baseline)", idle), ("(b) review pending", pending)):
        firsts, tokens = [r[0] for r in runs], [r[1] for r in runs]
        rows.append([name, median_ms(firsts), p90_ms(firsts), median_ms(tokens), p90_ms(tokens)])
    table(["warm server", "first event p50 ms", "p90", "first token p50 ms", "p90"], rows)
    ratio = rows[1][1] / rows[0][1]
    print(f"(b)/(a) first event {ratio:.2f}x, first token {rows[1][3] / rows[0][3]:.2f}x")
    print(f"before: (b) waited for the review, {REVIEW_S:g} s here\n")
    verdict("(b) first event p90", rows[1][2] / 1000, 1.0, " s")


def main() -> None:
    header(
        "Enter to the first visible event, with a review pending",
        f"ducklm serve with in-process MiniLM; scripted model, critic answers in {REVIEW_S:g} s;",
        f"{ROUNDS} interleaved rounds; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        llm.set_responder(respond)
        root = Path(tmp)
        (root / "workspace").mkdir()
        env = {
            "DUCK_LLM_BASE_URL": llm.base_url,
            "DUCK_WORKSPACE": str(root / "workspace"),
            "DUCK_DATA_DIR": str(root / "data"),
            "DUCK_API_TOKEN": TOKEN,
            "DUCK_MODEL_RETRY_INITIAL_INTERVAL": "0.01",
        }
        with ducklm_serve(root, env) as (url, log_path):
            try:
                asyncio.run(bench(url))
            except httpx.HTTPError:
                print(f"the server broke off; its log ends:\n{tail(log_path)}")
                raise
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
