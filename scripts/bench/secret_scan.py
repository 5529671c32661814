"""The secret scan of tool results: its markers on ordinary source, and its cost per result.

Every tool result crosses `tools/secret_scan/hide.py:hide_secrets` before the model sees
it. Two measures:

1. False markers: every text file of DuckLM's own tree (`git ls-files`) and the source of
   a public package from site-packages (`requests`, `httpx`, `yaml`), each file scanned as
   one tool result. Prints lines scanned, markers, markers per 10,000 lines (target: at
   most 1 false one) and, with `--show`, each marker to judge by hand: a fixture such as
   `TOKEN = "test-token-0123..."` is meant to be one.
2. Cost per tool result: the scan of results of 2,000, 8,000 (the model's share of one,
   `DUCK_MAX_TOOL_OUTPUT_CHARS`), 65,536 (a command's whole output) and 200,000 chars (a
   whole `file_read`), cut from the files above; the median of several rounds.

    .venv/bin/python scripts/bench/secret_scan.py [--show]
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import REPO_ROOT, header, median_ms, table

from ducklm.tools.secret_scan.hide import hide_secrets

PACKAGES = ("requests", "httpx", "yaml")
# The scan's own canaries: files written to be full of secrets, not ordinary source.
CANARY_FILES = frozenset(
    {
        "tests/support/secret_canaries.py",
        "tests/unit/test_secret_scan.py",
        "tests/integration/test_secret_readers.py",
    }
)
SIZES = (2_000, 8_000, 65_536, 200_000)
ROUNDS = 15


def own_tree() -> dict[str, str]:
    """DuckLM's tracked text files by path."""
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return _texts(REPO_ROOT, [name for name in listed.stdout.split() if name not in CANARY_FILES])


def package_tree(name: str) -> dict[str, str]:
    """The text files of an installed package's source by path."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return {}
    root = Path(spec.origin).parent
    files = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    return _texts(root, files)


def _texts(root: Path, names: list[str]) -> dict[str, str]:
    found = {}
    for name in names:
        try:
            found[name] = (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    return found


def false_markers(trees: dict[str, dict[str, str]], show: bool) -> None:
    rows = []
    for label, files in trees.items():
        lines = markers = 0
        for path, text in files.items():
            lines += text.count("\n") + 1
            found = hide_secrets(text, source=path).markers
            markers += len(found)
            if show:
                for marker in found:
                    print(f"   {label}: {marker}")
        rows.append([label, len(files), lines, markers, markers / lines * 10_000])
    table(["tree", "files", "lines", "markers", "per 10k lines"], rows)


def cost_per_result(corpus: str) -> None:
    hide_secrets("warm up: import detect-secrets and build the patterns")
    rows = []
    for size in SIZES:
        pieces = [corpus[at : at + size] for at in range(0, len(corpus) - size, size)][:ROUNDS]
        times = []
        for piece in pieces:
            started = time.perf_counter()
            hide_secrets(piece)
            times.append(time.perf_counter() - started)
        ms = median_ms(times)
        rows.append([f"{size:,} chars", len(pieces), ms, ms * 1e6 / size])
    table(["tool result", "results", "median ms", "us per 1,000 chars"], rows)


def main() -> None:
    show = "--show" in sys.argv
    trees = {"DuckLM": own_tree()}
    trees.update({name: files for name in PACKAGES if (files := package_tree(name))})
    header(
        "secret scan: false markers on ordinary source, cost per tool result",
        f"load average {os.getloadavg()[0]:.2f}",
    )
    false_markers(trees, show)
    print()
    cost_per_result("".join(text for files in trees.values() for text in files.values()))


if __name__ == "__main__":
    main()
