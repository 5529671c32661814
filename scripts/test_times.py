"""Print where the last `make test` spent its time: each phase, each test folder, the
40 slowest tests (the same table as the CI log's tail).

    make test; .venv/bin/python scripts/test_times.py

The phases come from test-artifacts/times/phases.tsv (written by scripts/phase.sh), the
tests' figures from test-artifacts/times/tests.json (tests/support/timing_report.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.timing_report import RECORD, table  # noqa: E402

PHASES = ROOT / "test-artifacts/times/phases.tsv"


def main() -> int:
    """Print the table, or say which record is missing."""
    if not PHASES.exists() and not (ROOT / RECORD).exists():
        print("no record of a run yet: run `make test` first", file=sys.stderr)
        return 1
    if PHASES.exists():
        print("phases:")
        total = 0.0
        for line in PHASES.read_text().splitlines():
            name, seconds, code = line.split("\t")
            total += float(seconds)
            failed = "" if code == "0" else f"  (exit {code})"
            print(f"  {float(seconds):8.1f} s  {name}{failed}")
        print(f"  {total:8.1f} s  in all")
    if (ROOT / RECORD).exists():
        print("\n".join(table(json.loads((ROOT / RECORD).read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
