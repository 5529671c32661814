"""What model servers say, word for word: their refusals and llama-server's `/props`.

Shared by the server matrix (`tests/support/server_matrix.py`) and the unit tests of
what DuckLM reads from them (`tests/unit/test_capabilities.py`).
"""

from __future__ import annotations

import json
from typing import Any

VLLM_NO_PARSER = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)
OLLAMA_NO_TOOLS = "registry.ollama.ai/library/gemma:2b does not support tools"
LLAMA_CPP_PYTHON_422 = json.dumps({"detail": [{
    "type": "literal_error", "loc": ["body", "response_format", "type"],
    "msg": "Input should be 'text' or 'json_object'", "input": "json_schema",
    "ctx": {"expected": "'text' or 'json_object'"},
}]})  # fmt: skip
"""llama-cpp-python's server (FastAPI) on `response_format: json_schema`."""


def llama_server_props(*, tools: bool) -> dict[str, Any]:
    """llama-server's `GET /props`, as b11434 sends it (the fields DuckLM reads)."""
    caps = {"supports_tools": tools, "supports_tool_calls": tools, "supports_system_role": True,
            "supports_parallel_tool_calls": tools}  # fmt: skip
    return {
        "default_generation_settings": {"n_ctx": 8192, "params": {}},
        "total_slots": 1,
        "model_alias": "local",
        "chat_template_caps": caps,
        "build_info": "b11434-scripted",
    }
