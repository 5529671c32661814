"""shell_exec: run a bash command in the workspace, inside the sandbox.

Whether a command may run at all is decided before it gets here (`tools/policy.py`,
approvals in the tool node). This module only runs what was allowed, with what the
tool node injects: the sandbox to use, whether the network is open for this command,
and, for an approved sudo command, the password to feed on stdin.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg, tool

from ducklm.tools.errors import ToolError
from ducklm.tools.sandbox.egress import ANY_HOST
from ducklm.tools.sandbox.runner import ExecResult, Limits, Protection, run_sandboxed
from ducklm.tools.workspace import resolve_in_workspace

MAX_TIMEOUT_S = 600.0
HOSTS_REFUSED = (
    "the sandbox let no connection through to {hosts}: not a host the person approved, "
    "or a local address"
)
NOT_A_FOLDER = "cwd {cwd!r} is not a folder in the workspace"
# Any `sudo` in the command reads the password from stdin, without a prompt of its own.
SUDO_FROM_STDIN = "sudo() { command sudo -S -p '' \"$@\"; }\n"


@dataclass(frozen=True)
class ShellEnv:
    """What shell_exec needs besides its arguments; filled by the tool node."""

    workspace: Path
    protection: Protection
    readonly: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    """DuckLM's data dir and configs: absent from the command's view."""
    secret_names: tuple[str, ...] = ()
    """Name globs of the workspace files the command sees empty."""
    reveal_secrets: bool = False
    """The person approved this command's secret read."""
    control_writable: bool = False
    """The person approved this command's writes to git repositories (`git commit`)."""
    network: bool = False
    hosts: tuple[str, ...] = ()
    """With `network`: the hosts the person approved (the card's list)."""
    limits: Limits = field(default_factory=Limits)
    sudo_password: str | None = field(default=None, repr=False)


@tool(parse_docstring=True, response_format="content_and_artifact")
async def shell_exec(  # noqa: D417  shell is injected, not the model's
    command: str,
    shell: Annotated[ShellEnv, InjectedToolArg],
    cwd: str = ".",
    timeout_s: float = 60.0,
) -> tuple[str, dict[str, Any]]:
    """Run a bash command in the workspace; returns its exit code and output.

    Read-only commands run at once. Commands that change files outside the workspace,
    use the network, or need sudo are shown to the user for approval first.

    Args:
        command: The bash command line, e.g. "ls -la" or "grep -rn TODO src".
        cwd: Folder to run in, relative to the workspace.
        timeout_s: Seconds before the command is stopped (1 to 600).
    """
    folder = await asyncio.to_thread(_folder, shell.workspace, cwd)
    limits = replace(shell.limits, timeout_s=min(max(timeout_s, 1.0), MAX_TIMEOUT_S))
    sudo = shell.sudo_password is not None
    result = await run_sandboxed(
        SUDO_FROM_STDIN + command if sudo else command,
        workspace=shell.workspace,
        cwd=folder,
        protection=shell.protection,
        network=shell.network,
        hosts=shell.hosts or (ANY_HOST,),
        readonly=shell.readonly,
        hidden=shell.hidden,
        secret_names=shell.secret_names,
        reveal_secrets=shell.reveal_secrets,
        control_writable=shell.control_writable,
        limits=limits,
        stdin_data=(shell.sudo_password + "\n").encode() if sudo else None,  # type: ignore[operator]
        unsandboxed=sudo,  # setuid sudo cannot work inside a user namespace
    )
    return render(result), artifact(result)


def _folder(workspace: Path, cwd: str) -> Path:
    folder = resolve_in_workspace(workspace, cwd)
    if not folder.is_dir():
        raise ToolError(NOT_A_FOLDER.format(cwd=cwd))
    return folder


def render(result: ExecResult) -> str:
    """What the model reads: how the command ended, then its output."""
    if result.timed_out:
        head = f"timed out after {result.duration_s:.0f}s (the command was stopped)"
    else:
        head = f"exit code {result.exit_code}"
    if result.hosts_refused:  # curl says only "CONNECT tunnel failed, response 403"
        head += "\n" + HOSTS_REFUSED.format(hosts=", ".join(result.hosts_refused))
    return f"{head}\n{result.output}" if result.output else head


def artifact(result: ExecResult) -> dict[str, Any]:
    """The facts the audit log keeps about a command, besides its output."""
    return {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration_s": round(result.duration_s, 3),
        "output_bytes": result.output_bytes,
        "truncated": result.truncated,
        "protection": result.protection,
        **({"hosts_reached": list(result.hosts_reached)} if result.hosts_reached else {}),
        **({"hosts_refused": list(result.hosts_refused)} if result.hosts_refused else {}),
    }
