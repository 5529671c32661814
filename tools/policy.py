"""Which tool calls run at once, which ask a person first, and which never run.

The verdict is computed before anything happens, and again when a paused run resumes
(the tool node re-runs from its top), so it must be free of side effects. Each "ask"
may carry a `rule_key`: the normalized action a person can allow forever. Rules are
exact matches on that key, so allowing `git status` never allows
`git status && rm -rf x`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ducklm.tools import autorun
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.commands.findings import SECRET
from ducklm.tools.commands.hosts import describe_hosts, network_hosts
from ducklm.tools.commands.policy import CommandPolicy
from ducklm.tools.commands.verdict import Action, CommandClass
from ducklm.tools.file_ops import FILE_OP_NAMES, destination_of, named_path
from ducklm.tools.sandbox.view import scan_workspace
from ducklm.tools.secret_scan.names import is_secret_name
from ducklm.tools.workspace import PathError, is_within, relative_name, resolve_in_workspace

READ_ONLY_TOOLS = frozenset({"file_read", "list_dir", "search_files", "search_conversations"})
NO_COMMAND_POLICY = "no command policy is loaded"
OVERWRITES = "overwrites existing file {names} (overwrite: ask in permissions.yaml)"
AUTORUN_WRITE = "write {path}, which runs later without asking: {runner}"
DELETES = "delete {path}"
REPLACES = "{verb} replaces existing file {path}"
CHANGES_WORKSPACE = "changes only the workspace (undo can put it back)"


@dataclass(frozen=True)
class PolicyEnv:
    """What the policy looks at besides the call itself."""

    workspace: Path
    protected: tuple[Path, ...] = ()
    """DuckLM's own config and data: writes there always ask."""
    commands: CommandPolicy | None = None
    """The shell command policy (`config/permissions.yaml`)."""
    sandboxed: bool = True
    """Whether commands run in a sandbox; without one, writes and network ask."""
    proxied: bool = True
    """Whether approved network goes through the egress proxy (bubblewrap), which lets
    only the card's hosts through; otherwise it is the machine's own network."""


@dataclass(frozen=True)
class Verdict:
    """What to do with one tool call before it runs."""

    action: Literal["allow", "ask", "deny"]
    reason: str
    rule_key: str | None = None
    """For "ask": the normalized action an `allow_forever` decision stores."""
    command_class: str | None = None
    """For shell commands: the class of the riskiest part; for the file operations
    (`tools/file_ops.py`), the class of the command that does the same."""
    network: bool = False
    """For shell commands: the network must be open for it."""
    sudo: bool = False
    """For shell commands: it runs through sudo and needs the password."""
    secrets: bool = False
    """For shell commands: it names a secret file; approved, the sandbox shows secrets."""
    hosts: tuple[str, ...] = ()
    """For network commands: the hosts the card approves (`tools.commands.hosts`)."""
    writes_git: bool = False
    """For shell commands: it writes a git repository's control folder or what else runs by
    itself (`tools/autorun.py`); it ran asked or allowed, so the sandbox lets it."""
    overwrites: bool = False
    """For `file_write`, `file_move` and `file_copy`: it replaces an existing file, as the
    overwrite rule lets it (asked, or `overwrite: allow`), so the call runs with
    `overwrite` whatever the model passed."""
    replaced: tuple[str, ...] = ()
    """The existing files (workspace-relative) whose content the call replaces, where the
    policy knows them: the card compares them with the request (`tool_step/intent.py`)."""


ALLOW = Verdict("allow", "runs without asking")


def assess(name: str, args: dict[str, Any], env: PolicyEnv) -> Verdict:  # noqa: PLR0911  a tool per return
    """The verdict for calling tool `name` with `args`. Blocking (stat calls)."""
    if name == "file_read":
        return _assess_read(args, env)
    if name in READ_ONLY_TOOLS:
        return ALLOW
    if name == "file_write":
        return _assess_write(args, env)
    if name in CODER_TOOL_NAMES:
        # The coder replaces the whole file: as a write, so changing an existing file
        # asks (with the diff), creating one does not.
        return _assess_write(args, env)
    if name == "shell_exec":
        return _assess_shell(args, env)
    if name in FILE_OP_NAMES:
        return _assess_file_op(name, args, env)
    return Verdict("ask", f"{name} is not known to the policy")


def may_change_workspace(name: str, verdict: Verdict) -> bool:
    """Whether a call the policy judged `verdict` may change the workspace's files.

    Such a call gets a workspace checkpoint before it runs (`ducklm.undo`). Every
    `shell_exec` does, its class whatever it is: the class is a guess from the command's
    words, and a command classed `read_only` can still write (`sort -o f`, `xxd -r in
    out`), so the snapshot, not the class, says what a command changed. Only the
    read-only tools (whose code DuckLM owns) and an MCP tool whose verdict says
    `command_class="read_only"` (a trusted server's read) get none; tools the policy
    does not know do.
    """
    if verdict.action == "deny" or name in READ_ONLY_TOOLS:
        return False
    return name == "shell_exec" or verdict.command_class != "read_only"


def _assess_read(args: dict[str, Any], env: PolicyEnv) -> Verdict:
    """`file_read` of a file with a secret's name asks, as a command that reads one does.

    By the name it is read by and by its real path, so a link to `.env` and the
    workspace's `.env.local` by its absolute path ask too; approved, it is read in clear.
    """
    path = args.get("path")
    if not isinstance(path, str) or env.commands is None:
        return ALLOW  # the tool's own validation reports the bad argument
    try:
        target = resolve_in_workspace(env.workspace, path)
    except PathError:
        return ALLOW  # the tool refuses it with the reason; nothing to approve
    names = env.commands.secret_names
    if not (is_secret_name(Path(path), names) or is_secret_name(target, names)):
        return ALLOW
    rel = relative_name(env.workspace, target)
    return Verdict("ask", SECRET.format(path=rel), rule_key=f"read:{rel}", secrets=True)


def _assess_write(args: dict[str, Any], env: PolicyEnv) -> Verdict:
    path = args.get("path")
    if not isinstance(path, str):
        return ALLOW  # the tool's own validation reports the bad argument
    try:
        target = resolve_in_workspace(env.workspace, path)
    except PathError:
        return ALLOW  # the tool refuses it with the reason; nothing to approve
    rel = relative_name(env.workspace, target)
    if (guarded := _guarded(target, rel, env)) is not None:
        return guarded
    if not target.is_file():
        return ALLOW
    # An existing file is an overwrite whatever the model's `overwrite` says: a small
    # model told to call again with overwrite=true never did, so the person decides.
    if overwrite_rule(env) == "ask":
        reason = f"overwrite existing file {rel}"
        return Verdict("ask", reason, rule_key=f"overwrite:{rel}", overwrites=True, replaced=(rel,))
    return Verdict(
        "allow", f"overwrites {rel} (overwrite: allow)", overwrites=True, replaced=(rel,)
    )


def _assess_file_op(name: str, args: dict[str, Any], env: PolicyEnv) -> Verdict:
    """A file operation (`tools/file_ops.py`), asked as the command doing it would be.

    A delete asks as `rm` does (destructive); a move or copy onto an existing file is an
    overwrite; an append loses nothing and runs. Each asks first where a write would:
    what runs by itself, and DuckLM's own files.
    """
    places = _op_places(name, args, env)
    if places is None:
        return ALLOW  # the tool refuses the bad argument with the reason; nothing to ask
    for target, shown in places.touched:
        if (guarded := _guarded(target, shown, env)) is not None:
            return guarded
    if name == "file_delete":
        return _by_class(
            env, "destructive", DELETES.format(path=places.rel), f"delete:{places.rel}"
        )
    if name == "file_copy" and (secret := _assess_read({"path": places.named}, env)) != ALLOW:
        return secret
    if places.to is not None and places.to[0].is_file():
        reason = REPLACES.format(verb=name.removeprefix("file_"), path=places.to[1])
        action: Literal["ask", "allow"] = "ask" if overwrite_rule(env) == "ask" else "allow"
        key = f"overwrite:{places.to[1]}" if action == "ask" else None
        return Verdict(action, reason, rule_key=key, command_class="workspace_write",
                       overwrites=True, replaced=(places.to[1],))  # fmt: skip
    return Verdict("allow", CHANGES_WORKSPACE, command_class="workspace_write")


@dataclass(frozen=True)
class _Places:
    """The paths a file operation touches, as the policy judges them."""

    named: str
    rel: str
    """The path acted on (the source), relative to the workspace."""
    touched: tuple[tuple[Path, str], ...]
    """The real paths it changes, with their names: what `_guarded` looks at."""
    to: tuple[Path, str] | None
    """Where a move or copy puts it."""


def _op_places(name: str, args: dict[str, Any], env: PolicyEnv) -> _Places | None:
    """The places of a file operation's call; `None` for arguments the tool refuses."""
    named, dest = args.get("path", args.get("source")), args.get("destination")
    if not isinstance(named, str) or (
        name in ("file_move", "file_copy") and not isinstance(dest, str)
    ):
        return None
    try:
        target = named_path(env.workspace, named)
        real = resolve_in_workspace(env.workspace, named)
        rel = relative_name(env.workspace, target)
        to = destination_of(env.workspace, target, dest) if isinstance(dest, str) else None
    except PathError:
        return None
    moved = (to, relative_name(env.workspace, to)) if to is not None else None
    # A copy leaves its source as it is; every other operation changes it.
    touched = ((real, rel),) if name != "file_copy" else ()
    return _Places(named, rel, touched + ((moved,) if moved else ()), moved)


def _by_class(env: PolicyEnv, cls: CommandClass, reason: str, key: str) -> Verdict:
    """The verdict `permissions.yaml` gives a command of class `cls` (ask without one)."""
    action: Action = getattr(env.commands.rules.actions, cls) if env.commands else "ask"
    return Verdict(action, reason, rule_key=key if action == "ask" else None, command_class=cls)


def _guarded(target: Path, rel: str, env: PolicyEnv) -> Verdict | None:
    """The question for a write to what a tool runs by itself or to DuckLM's own files.

    `target` is real (links followed), so a link to a `.git` is seen as the `.git`.
    """
    root = env.workspace.resolve()
    runner = autorun.runner_of(target.relative_to(root).parts)
    if runner is None and autorun.inside_git_folder(target, root):
        runner = autorun.CONTROL_FOLDERS[".git"]
    if runner is None:
        # the sandbox's own scan: git folders a gitfile names, core.hooksPath folders
        found = scan_workspace(root, ())
        if any(is_within(p, target) for p in (*found.control, *found.runs_itself)):
            runner = autorun.LINKED
    if runner is not None:
        reason = AUTORUN_WRITE.format(path=rel, runner=runner)
        return Verdict("ask", reason, rule_key=f"write:{rel}")
    if any(is_within(p, target) for p in env.protected):
        return Verdict("ask", f"write to DuckLM's own files: {rel}", rule_key=f"write:{rel}")
    return None


def overwrite_rule(env: PolicyEnv) -> str:
    """`overwrite` of `config/permissions.yaml`: `ask` (the default) or `allow`.

    One rule for replacing an existing file's content, whichever tool does it:
    `file_write` onto an existing file, the coder tools, and shell commands (`>`, tee, cp or
    mv onto a file, `sed -i`, patch, formatters: `tools.commands`).
    """
    return env.commands.rules.overwrite if env.commands is not None else "ask"


def _assess_shell(args: dict[str, Any], env: PolicyEnv) -> Verdict:
    command = args.get("command")
    if not isinstance(command, str):
        return ALLOW  # the tool's own validation reports the bad argument
    if env.commands is None:
        return Verdict("ask", NO_COMMAND_POLICY)
    found = env.commands.classify(command, workspace=env.workspace, sandboxed=env.sandboxed)
    action, reasons = found.action, list(found.reasons)
    cwd = args.get("cwd") if isinstance(args.get("cwd"), str) else "."
    existing = [p for p in found.replaces if _is_file(env.workspace, str(cwd), p)]
    if action == "allow" and overwrite_rule(env) == "ask" and existing:
        action = "ask"
        reasons.append(OVERWRITES.format(names=", ".join(existing)))
    hosts = network_hosts(env.commands, command, env.workspace) if found.network else ()
    if hosts:
        # sudo runs outside the sandbox, so outside its proxy too.
        reasons.append(describe_hosts(hosts, proxied=env.proxied and not found.sudo))
    return Verdict(
        action,
        "; ".join(reasons) or f"{found.command_class.replace('_', ' ')} command",
        rule_key=f"shell:{found.normalized}" if action == "ask" else None,
        command_class=found.command_class,
        network=found.network,
        sudo=found.sudo,
        secrets=found.secrets,
        writes_git=found.writes_git,
        hosts=hosts,
        replaced=tuple(existing),
    )


def _is_file(workspace: Path, cwd: str, path: str) -> bool:
    """Whether `path` (as a command in `cwd` names it) is an existing file. Blocking."""
    target = Path(path) if path.startswith("/") else workspace / cwd / path
    return target.is_file()
