"""Rules for tools whose arguments say more than the lists can: git, sed, awk, find, tar, dd, test.

Each rule runs after the generic classification of a call (`command_calls`) and adds
findings for what the tool's own syntax reveals: a sed script that writes files, the
folder `tar -x` fills, the files `find -delete` removes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from ducklm.tools.commands import git_repo
from ducklm.tools.commands.calls import Call
from ducklm.tools.commands.findings import Findings
from ducklm.tools.commands.options import flag_matches
from ducklm.tools.commands.paths import expand_path
from ducklm.tools.commands.sed import sed_script_is_risky
from ducklm.tools.commands.variables import tested_names
from ducklm.tools.commands.verdict import RANK, CommandClass
from ducklm.tools.commands.words import GLOB_CHARS, Word

GIT_CONFIG = "git config can set commands git runs (core.pager, core.fsmonitor...)"
GIT_WRITES = (
    "{name} writes the repository's .git, whose config and hooks git runs later; approved, "
    "the workspace's .git folders are writable for this command"
)
GIT_REPO_UNKNOWN = (
    "git works in a repository known only when it runs, whose config can run programs"
)
SED_SCRIPT = "the sed script writes files or runs commands"
AWK_PROGRAM = "the awk program can run commands or write files"
_AWK_RISKY = ("system", "|", ">", "@load")
_GIT_CONFIG_WRITES = ("--add", "--unset", "--unset-all", "--replace-all", "--rename-section",
                      "--remove-section", "--edit", "-e")  # fmt: skip
_TAR_MODES = {"x": "extract", "c": "create", "r": "create", "u": "create", "A": "create"}
_TAR_LONG_MODES = {"--extract": "extract", "--get": "extract", "--create": "create",
                   "--append": "create", "--update": "create", "--catenate": "create"}  # fmt: skip
_TAR_VALUE_LETTERS = "fCTXbKNgIFVL"
_FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
_HERE = Word(".", ".")

ToolRule = Callable[[Findings, Call, CommandClass], None]
"""Adds findings for one call, given the class the generic rules gave it."""


def tool_args(name: str, args: list[Word]) -> list[Word]:
    """The arguments as the generic rules read them: `tar xzf` is `tar -xzf`."""
    if name == "tar" and args and not args[0].text.startswith("-"):
        return [replace(args[0], text="-" + args[0].text), *args[1:]]
    return args


def find_exec_commands(call: Call) -> Iterator[list[Word]]:
    """The command of each `-exec CMD {} ;` of a `find`, once per start folder."""
    args = call.args
    for i, word in enumerate(args):
        if word.text not in _FIND_EXEC:
            continue
        end = next((j for j in range(i + 1, len(args)) if args[j].text in (";", "+")), len(args))
        for start in _find_starts(call):
            found = replace(start, text=f"{start.text}/*", source=f"{start.source}/*")
            yield [found if w.text == "{}" else w for w in args[i + 1 : end]]


def _git(found: Findings, call: Call, cls: CommandClass) -> None:
    if call.key == "git config":
        first = call.positionals[0].text if call.positionals else ""
        writes = any(o.name in _GIT_CONFIG_WRITES for o in call.options)
        if writes or first in ("set", "unset", "edit") or len(call.positionals) >= 2:
            found.add("system", GIT_CONFIG, ask=True, writes_git=True)
    elif RANK[cls] >= RANK["workspace_write"]:
        # every git but a reader writes the repository (index, refs, objects, config)
        found.add(cls, GIT_WRITES.format(name=call.key), writes_git=True)
    repo = next((o.value for o in call.own if o.name == "-C" and o.value), None)
    if repo is not None and RANK[cls] >= RANK["workspace_write"]:
        found.check_cwd(call.key, repo)
    _git_repository(found, call)


def _git_repository(found: Findings, call: Call) -> None:
    """Ask when the repository's own config names programs git would run."""
    places = found.places
    start, git_dir = places.cwd, None
    for opt in call.own:
        if opt.name == "-C" and opt.value is not None and start is not None:
            start = expand_path(opt.value, start, places.home)
        elif opt.name == "--git-dir" and opt.value is not None:
            git_dir = expand_path(opt.value, start, places.home)
            if git_dir is None:
                break
    unknown = git_dir is None and any(o.name == "--git-dir" for o in call.own)
    # a glob names the repository only when it runs: `cd re?o && git status`
    if start is None or unknown or any(c in str(git_dir or start) for c in GLOB_CHARS):
        found.add("system", GIT_REPO_UNKNOWN, ask=True)
        return
    try:
        if git_dir is not None:
            files = git_repo.git_dir_files(Path(str(git_dir)))
        else:
            files = git_repo.config_files(start, places.workspace)
    except (OSError, ValueError):
        found.add("system", GIT_REPO_UNKNOWN, ask=True)
        return
    for reason in git_repo.reasons(files):
        found.add("system", reason, ask=True)


def _sed(found: Findings, call: Call, cls: CommandClass) -> None:
    opts = call.all_options
    scripts = [o.value for o in opts if o.name in ("-e", "--expression") and o.value]
    files = list(call.positionals)
    from_file = any(o.name in ("-f", "--file") for o in opts)
    if not scripts and files and not from_file:
        scripts, files = [files[0]], files[1:]
    if from_file or any(not s.literal or sed_script_is_risky(s.text) for s in scripts):
        found.add("system", SED_SCRIPT, ask=True)
    if any(flag_matches(o, f) for o in opts for f in ("-i", "--in-place")):
        for word in files:
            found.write(word, "workspace_write", "sed -i")
        found.edits("sed -i")


def _awk(found: Findings, call: Call, cls: CommandClass) -> None:
    # the program is the first positional, or the text of `-e`/`--source` (gawk);
    # `-f`, `--exec`, `--include` and `--load` ask by the option table
    sources = [o.value for o in call.own if o.name in ("-e", "--source") and o.value]
    program = sources or list(call.positionals[:1])
    if any(not p.literal or any(t in p.text for t in _AWK_RISKY) for p in program):
        found.add("system", AWK_PROGRAM, ask=True)


def _find_starts(call: Call) -> list[Word]:
    starts: list[Word] = []
    for word in call.args:
        if word.text[:1] in ("-", "(", "!"):
            break
        starts.append(word)
    return starts or [_HERE]


def _find(found: Findings, call: Call, cls: CommandClass) -> None:
    if any(w.text == "-delete" for w in call.args):
        for start in _find_starts(call):
            found.write(start, "destructive", "find -delete", recursive=True)


def _tar(found: Findings, call: Call, cls: CommandClass) -> None:
    mode, archive, folder = _tar_options(call.args)
    if mode == "extract":
        found.write(folder or _HERE, "workspace_write", "tar -x")
    elif mode == "create" and archive is not None and archive.text != "-":
        found.write(archive, "workspace_write", "tar")


def _tar_options(args: tuple[Word, ...]) -> tuple[str, Word | None, Word | None]:
    """Tar's mode ("extract", "create" or ""), its archive (`-f`) and folder (`-C`)."""
    mode, archive, folder = "", None, None
    i = 0
    while i < len(args):
        name, eq, value = args[i].text.partition("=")
        if name.startswith("--"):
            mode = _TAR_LONG_MODES.get(name, mode)
            if name in ("--file", "--directory") and not eq and i + 1 < len(args):
                i += 1
            chosen = replace(args[i], text=value) if eq else args[i]
            archive = chosen if name == "--file" else archive
            folder = chosen if name == "--directory" else folder
        elif name.startswith("-"):
            for letter in args[i].text[1:]:
                mode = _TAR_MODES.get(letter, mode)
                if letter in _TAR_VALUE_LETTERS and i + 1 < len(args):
                    i += 1
                    archive = args[i] if letter == "f" else archive
                    folder = args[i] if letter == "C" else folder
        i += 1
    return mode, archive, folder


def _test(found: Findings, call: Call, cls: CommandClass) -> None:
    tested_names(found, call.args)


def _dd(found: Findings, call: Call, cls: CommandClass) -> None:
    for word in call.positionals:
        key, eq, value = word.text.partition("=")
        if eq and key in ("of", "if"):
            target = replace(word, text=value, tilde=value.startswith("~"))
            if key == "of":
                found.write(target, "destructive", "dd", verb="overwrites")
            else:
                found.secret(target)


TOOL_RULES: dict[str, ToolRule] = {
    "git": _git,
    "sed": _sed,
    "find": _find,
    "tar": _tar,
    "dd": _dd,
    "test": _test,
    "[": _test,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
}
"""The extra rule of each tool that has one."""
