"""Where the suite's time goes: seconds per test folder, and the slowest tests.

A pytest plugin (tests/conftest.py loads it). Under pytest-xdist the controller receives
every worker's reports, so one table covers the whole run. The folder figures add up the
tests' own durations (set-up, call, tear-down), not wall time: with several workers the
folders run side by side. The table is printed at the end of the run (the CI log's tail)
and written to `test-artifacts/times/tests.json`, which `scripts/test_times.py` reads back
beside the phase times that the Makefile records.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

RECORD = Path("test-artifacts/times/tests.json")
SLOWEST = 40

_durations: dict[str, float] = defaultdict(float)
_started = time.monotonic()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each phase of each test to its test's total."""
    _durations[report.nodeid] += report.duration


def folder_of(nodeid: str) -> str:
    """`tests/integration/test_x.py::case` -> `integration`."""
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else parts[0]


def summary(durations: dict[str, float], wall_s: float) -> dict[str, Any]:
    """The record of one run: wall time, seconds and count per folder, the slowest tests."""
    folders: dict[str, dict[str, float]] = defaultdict(lambda: {"seconds": 0.0, "tests": 0})
    for nodeid, seconds in durations.items():
        folder = folders[folder_of(nodeid)]
        folder["seconds"] += seconds
        folder["tests"] += 1
    slowest = sorted(durations.items(), key=lambda item: item[1], reverse=True)[:SLOWEST]
    return {
        "wall_s": wall_s,
        "folders": dict(sorted(folders.items(), key=lambda item: -item[1]["seconds"])),
        "slowest": [{"test": nodeid, "seconds": seconds} for nodeid, seconds in slowest],
    }


def table(record: dict[str, Any]) -> list[str]:
    """The record as the lines the CI log and `scripts/test_times.py` print."""
    lines = [f"tests: {record['wall_s']:.0f} s wall", "seconds per folder (tests' own time):"]
    for name, folder in record["folders"].items():
        lines.append(f"  {folder['seconds']:8.1f} s  {int(folder['tests']):5d} tests  {name}")
    lines.append(f"the {len(record['slowest'])} slowest tests:")
    lines.extend(f"  {row['seconds']:8.1f} s  {row['test']}" for row in record["slowest"])
    return lines


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the table and keep it for `scripts/test_times.py` (the controller only)."""
    if hasattr(config, "workerinput") or not _durations:
        return
    record = summary(_durations, time.monotonic() - _started)
    terminalreporter.write_sep("=", "where the time went")
    for line in table(record):
        terminalreporter.write_line(line)
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1))
