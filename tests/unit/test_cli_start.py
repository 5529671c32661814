"""The CLI starts light: building its parser loads none of the heavy libraries.

Every `ducklm` command builds the whole parser, so one module-level import of LangChain
or the MCP session anywhere under `ducklm.cli` costs seconds on every `ducklm threads`.
`tests/integration/test_operator_cli.py` checks whole commands; this catches the import
in a second, in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "langgraph", "langchain_core", "openai", "qdrant_client", "ducklm.graph")

SCRIPT = """
import json, sys
from ducklm.cli.main import build_parser
build_parser()
heavy = json.loads(sys.argv[1])
loaded = [m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy)]
print(json.dumps(sorted(loaded)))
"""


def test_building_the_parser_loads_no_heavy_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(HEAVY)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert loaded == [], f"the CLI's parser imported {loaded[:5]} (of {len(loaded)})"
