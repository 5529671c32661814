"""Shared bits of the benchmark scripts: timing stats, tables, verdict lines, settings.

The scripts are measurements, not tests: they print ratios against a baseline taken in
the same run (absolute times depend on the machine) and never fail on a missed target.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# The scripts run as `python scripts/bench/x.py`, which puts only this folder on the path;
# the repository root is needed for the scripted model server in `tests/support`.
REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from ducklm.config.settings import Settings, load_settings  # noqa: E402
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply  # noqa: E402

__all__ = [
    "Reply",
    "ScriptedLLM",
    "at_least",
    "call",
    "duck_settings",
    "header",
    "median_ms",
    "p90_ms",
    "percentile_ms",
    "reply",
    "table",
    "verdict",
]


def median_ms(seconds: Sequence[float]) -> float:
    """Median of durations in seconds, in milliseconds."""
    return statistics.median(seconds) * 1000


def p90_ms(seconds: Sequence[float]) -> float:
    """90th percentile (nearest rank) of durations in seconds, in milliseconds."""
    ordered = sorted(seconds)
    rank = max(1, math.ceil(0.9 * len(ordered)))
    return ordered[rank - 1] * 1000


def percentile_ms(seconds: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (`share` in 0..1, e.g. 0.95) of durations in seconds, in ms."""
    ordered = sorted(seconds)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1] * 1000


def header(title: str, *lines: str) -> None:
    """Print what the script measures, before any result."""
    print(f"== {title} ==")
    for line in lines:
        print(f"   {line}")
    print()


def table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print rows as a plain aligned table; floats get two decimals."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        # First column is a label (left), the rest are numbers (right).
        first, *rest = row
        print(
            "  ".join(
                [
                    first.ljust(widths[0]),
                    *(v.rjust(w) for v, w in zip(rest, widths[1:], strict=True)),
                ]
            )
        )
    print()


def verdict(name: str, value: float, limit: float, unit: str = "") -> None:
    """One target line: PASS when `value <= limit`, MISS otherwise."""
    mark = "PASS" if value <= limit else "MISS"
    print(f"{mark}  {name}: {value:.2f}{unit} (target <= {limit:g}{unit})")


def at_least(name: str, value: float, floor: float, unit: str = "") -> None:
    """One target line for a floor: PASS when `value >= floor`, MISS otherwise."""
    mark = "PASS" if value >= floor else "MISS"
    print(f"{mark}  {name}: {value:.2f}{unit} (target >= {floor:g}{unit})")


@contextmanager
def bench_world(
    files: dict[str, str], respond: Callable[[dict[str, Any]], Reply]
) -> Iterator[tuple[Path, ScriptedLLM]]:
    """A scratch folder with `workspace/` holding `files`, and a scripted server using `respond`."""
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        root = Path(tmp)
        (root / "workspace").mkdir()
        for name, text in files.items():
            (root / "workspace" / name).write_text(text, encoding="utf-8")
        llm.set_responder(respond)
        yield root, llm


def duck_settings(base_url: str, root: Path) -> Settings:
    """DuckLM settings on the scripted server, with data and workspace under `root`.

    Reads no `.env` and drops `DUCK_*` variables, so the machine's configuration cannot
    change the run (as the test suite does).
    """
    for name in [n for n in os.environ if n.startswith("DUCK_")]:
        del os.environ[name]
    return load_settings(
        env_file=None,
        llm_base_url=base_url,
        data_dir=root / "data",
        workspace=root / "workspace",
        model_retry_initial_interval=0.01,
    )


def postgres_url() -> str:
    """The PostgreSQL server the benches on several workers use (`DUCK_TEST_DATABASE_URL`).

    Read before `duck_settings`, which drops every `DUCK_*` variable.
    """
    url = os.environ.get("DUCK_TEST_DATABASE_URL")
    if not url:
        raise SystemExit("set DUCK_TEST_DATABASE_URL (scripts/test-postgres.sh prints one)")
    return url


def _cell(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)
