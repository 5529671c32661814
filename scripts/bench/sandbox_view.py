"""The sandbox view's cost per shell command on a 10,000-file workspace.

Each `shell_exec` builds its view (`tools/sandbox/view.py`): the secret files of the
workspace are found by one scan and masked. Measured, interleaved, in the same run:

1. baseline: `true` in bubblewrap with no secret names (the scan for `.git` folders and
   what else runs by itself, 12 read-only binds; no masks);
2. view: `true` in bubblewrap with permissions.yaml's secret names (the same scan,
   matching secret names too, and 5 masks);
3. the scan alone (`scan_workspace`), off the sandbox;
4. the secret scan every tool result passes before the model sees it
   (`tools/secret_scan/`), per result of 8,000 and 65,536 chars: its target is at most
   bubblewrap's own start per call.

Ratios are against the baseline; the load average is printed because absolute times
move with other work on the machine.

    .venv/bin/python scripts/bench/sandbox_view.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from _common import header, median_ms, table
from secret_scan import own_tree

from ducklm.tools.commands.policy import load_command_policy
from ducklm.tools.sandbox.runner import Limits, run_sandboxed
from ducklm.tools.sandbox.view import scan_workspace
from ducklm.tools.secret_scan.hide import hide_secrets

FILES = 10_000
ROUNDS = 15


def make_workspace(root: Path) -> Path:
    """100 folders of 100 files, and five secrets among them."""
    for i in range(FILES // 100):
        folder = root / f"pkg{i}"
        folder.mkdir()
        for j in range(100):
            (folder / f"mod{j}.py").write_text("x = 1\n")
    for name in (".env", "pkg1/.env.local", "pkg2/server.pem", "pkg3/id_ed25519", ".npmrc"):
        (root / name).write_text("secret\n")
    for i in range(0, FILES // 100, 10):  # ten nested repositories, and two autorun files
        (root / f"pkg{i}" / ".git" / "hooks").mkdir(parents=True)
        (root / f"pkg{i}" / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (root / ".envrc").write_text("export A=1\n")
    (root / "pkg5" / ".vscode").mkdir()
    return root


async def launch(workspace: Path, names: tuple[str, ...]) -> float:
    started = time.perf_counter()
    result = await run_sandboxed(
        "true",
        workspace=workspace,
        cwd=workspace,
        protection="bubblewrap",
        secret_names=names,
        limits=Limits(timeout_s=10),
    )
    assert result.exit_code == 0, result.output
    return time.perf_counter() - started


async def main() -> None:
    names = load_command_policy().secret_names
    with tempfile.TemporaryDirectory(dir="/var/tmp") as root:
        workspace = make_workspace(Path(root))
        found = scan_workspace(workspace, names)
        assert len(found.secrets) == 5, found
        assert (len(found.control), len(found.runs_itself)) == (10, 2), found
        base, view, scan = [], [], []
        for _ in range(ROUNDS):
            base.append(await launch(workspace, ()))
            view.append(await launch(workspace, names))
            started = time.perf_counter()
            scan_workspace(workspace, names)
            scan.append(time.perf_counter() - started)
    header(
        f"sandbox view on a {FILES}-file workspace, {ROUNDS} rounds interleaved",
        f"load average {os.getloadavg()[0]:.2f}",
    )
    b = median_ms(base)
    table(
        ["row", "median ms", "vs baseline"],
        [
            ["baseline: bubblewrap, read-only binds, no masks", b, "1.00x"],
            ["view: scan + masks", median_ms(view), f"{median_ms(view) / b:.2f}x"],
            ["the scan alone", median_ms(scan), f"{median_ms(scan) / b:.2f}x"],
            *(
                [f"secret scan of one {size:,}-char tool result", ms, f"{ms / b:.2f}x"]
                for size, ms in secret_scan_ms(ROUNDS).items()
            ),
        ],
    )


def secret_scan_ms(rounds: int) -> dict[int, float]:
    """The median cost of the secret scan every tool result passes, by result size.

    8,000 chars is what the model gets of one result (`DUCK_MAX_TOOL_OUTPUT_CHARS`),
    65,536 a command's whole output; the results are cut from DuckLM's own source.
    """
    corpus = "".join(own_tree().values())
    hide_secrets("warm up: import detect-secrets, build the patterns")
    found = {}
    for size in (8_000, 65_536):
        times = []
        for at in range(rounds):
            piece = corpus[at * size : (at + 1) * size]
            started = time.perf_counter()
            hide_secrets(piece)
            times.append(time.perf_counter() - started)
        found[size] = median_ms(times)
    return found


if __name__ == "__main__":
    asyncio.run(main())
