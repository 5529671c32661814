"""One call (a simple command, wrappers peeled off) and its classification by the lists.

A call is split into its name, its subcommand key ("git stash list"), options and
positionals; its class comes from the lists of the rules, read-only and risky flags,
the paths it writes and the secrets it reads. Tools with logic of their own add to
this in `command_tools`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from ducklm.tools.commands.findings import Findings
from ducklm.tools.commands.getopt import parse_options
from ducklm.tools.commands.option_tables import CODE_OPTION_TOOLS, FREE_FORM, OPTION_SPECS
from ducklm.tools.commands.options import Opt, flag_matches, names_option, split_options
from ducklm.tools.commands.rules import PermissionRules, RuleIndex
from ducklm.tools.commands.verdict import CLASS_REASONS, RANK, CommandClass
from ducklm.tools.commands.words import GLOB_CHARS, Pipes, Redirect, Word

UNKNOWN = "{name} is not known to the policy"
HIDDEN_OPTION = (
    "{name}: {word} is not literal and could be any option, one that runs a program or "
    "writes a file too"
)
FROM_XARGS = "<arguments from xargs>"


@dataclass(frozen=True)
class Ctx:
    """Where a simple command runs, as far as its classification cares."""

    pipes: Pipes = ()
    redirects: tuple[Redirect, ...] = ()
    sudo: bool = False
    root_shell: bool = False
    appended: bool = False
    """`xargs` adds arguments the policy cannot see."""
    depth: int = 0


@dataclass(frozen=True)
class Call:
    """A command line split into its name, subcommand key, options and positionals."""

    name: str
    key: str
    """"git stash list", or the name for tools without subcommands."""
    args: tuple[Word, ...]
    own: tuple[Opt, ...]
    """The tool's own options (for git: those before the subcommand)."""
    options: tuple[Opt, ...]
    """The subcommand's options."""
    positionals: tuple[Word, ...]
    problems: tuple[str, ...] = ()
    """Options the program's table does not have (`option_tables`): each asks."""

    @property
    def all_options(self) -> tuple[Opt, ...]:
        """The tool's own options and the subcommand's."""
        return (*self.own, *self.options)


def split_call(index: RuleIndex, name: str, args: list[Word]) -> Call:
    """Split `name args...`, finding the subcommand of tools listed with them.

    A tool with an option table (`option_tables`) has its options read as the
    program reads them; the others by the `value_options` of the rules.
    """
    value_options = index.rules.value_options
    if name in FREE_FORM:
        return Call(name, name, tuple(args), (), (), tuple(args))
    spec = OPTION_SPECS.get(name)
    problems: tuple[str, ...] = ()
    if spec is not None:
        parsed = parse_options(name, spec, args)
        own, rest, problems = parsed.opts, parsed.positionals, tuple(parsed.problems)
    elif name in index.subcommand_tools:
        own, _, rest = split_options(args, value_options.get(name, ()), stop=True)
    else:
        own, rest, _ = split_options(args, value_options.get(name, ()))
    if name not in index.subcommand_tools:
        return Call(name, name, tuple(args), tuple(own), (), tuple(rest), problems)
    if not rest:
        return Call(name, name, tuple(args), tuple(own), (), (), problems)
    key, rest = f"{name} {rest[0].text}", rest[1:]
    if rest and f"{key} {rest[0].text}" in index.known:
        key, rest = f"{key} {rest[0].text}", rest[1:]
    opts, positionals, _ = split_options(rest, value_options.get(key, ()))
    return Call(name, key, tuple(args), tuple(own), tuple(opts), tuple(positionals), problems)


def classify_call(found: Findings, call: Call, ctx: Ctx) -> CommandClass:
    """Classify a call by its lists, flag rules, written paths and secret reads."""
    rules = found.rules
    known = _rsync_class(call) or _lookup(found.index, call)
    read_only = _has_read_only_flag(rules, call)
    cls: CommandClass = "read_only" if read_only and known else known or "system"
    if known is None:
        found.add("system", UNKNOWN.format(name=call.key), ask=True)
    _apply_flag_rules(found, call)
    _option_table(found, call)
    network = not read_only and (
        cls == "network" or call.key in rules.needs_network or call.name in rules.needs_network
    )
    if network:
        found.downloads.append(ctx.pipes)
    targets = [] if read_only else _targets(rules, call, ctx)
    if known is not None and cls != "read_only" and (not targets or cls == "network"):
        found.add(cls, CLASS_REASONS[cls].format(name=call.key), network=network)
    elif network:
        found.add(cls, CLASS_REASONS["network"].format(name=call.key), network=True)
    _writes(found, call, cls, targets)
    if not read_only:
        _overwrites(found, call)
    if cls in ("workspace_write", "destructive") and not targets:
        found.check_cwd(call.key)
    if call.name not in rules.content_blind:
        for word in (*call.positionals, *(o.value for o in call.all_options if o.value)):
            found.secret(word)
    return cls


def _lookup(index: RuleIndex, call: Call) -> CommandClass | None:
    if call.key in index.rules.read_only_without_args and not call.positionals:
        return "read_only"
    return index.class_of(call.key)


def _rsync_class(call: Call) -> CommandClass | None:
    if call.name != "rsync":
        return None
    return "network" if any(_is_remote(w.text) for w in call.positionals) else "workspace_write"


def _has_read_only_flag(rules: PermissionRules, call: Call) -> bool:
    return any(
        flag_matches(o, f)
        for key in {call.name, call.key}
        for f in rules.read_only_flags.get(key, ())
        for o in call.all_options
    )


def _apply_flag_rules(found: Findings, call: Call) -> None:
    texts = [w.text for w in call.args]
    scopes = [(call.name, call.own if call.key != call.name else call.all_options)]
    if call.key != call.name:
        scopes.append((call.key, call.options))
    for key, opts in scopes:
        for rule in found.index.flag_rules.get(key, ()):
            if any(
                any(fnmatchcase(t, f) for t in texts)
                if "*" in f
                else any(flag_matches(o, f) for o in opts)
                for f in rule.flags
            ):
                found.add(rule.class_, rule.reason, ask=rule.class_ != "read_only")


def _option_table(found: Findings, call: Call) -> None:
    """What the program's option table says: unknown options, risky ones, written files."""
    for problem in call.problems:
        found.add("system", problem, ask=True)
    spec = OPTION_SPECS.get(call.name)
    flagged = {call.name, call.key} & found.index.flag_rules.keys()
    if call.name in CODE_OPTION_TOOLS or flagged or (spec and (spec.risky or spec.writes)):
        # `x=--compress-program=sh; sort $x f`, `rg $x`: a word whose value the policy
        # cannot see may be any option, a risky one too.
        hidden = [w for w in call.args if _may_be_option(w)]
        if hidden:
            found.add(
                "system", HIDDEN_OPTION.format(name=call.name, word=hidden[0].source), ask=True
            )
    if spec is None:
        return
    for opt in call.own:
        reason = spec.risky.get(opt.name)
        if reason is not None:
            found.add("system", f"{call.name} {opt.name} {reason}", ask=True)
        if opt.name in spec.writes and opt.value is not None:
            found.write(opt.value, "workspace_write", call.key, replaces=True)


def _may_be_option(word: Word) -> bool:
    """Whether `word`'s value may start with `-`: it is not literal, nor led by a literal."""
    if word.literal:
        return False
    lead = word.source.lstrip("\"'")
    return not lead or lead[0] in "$`"


def _targets(rules: PermissionRules, call: Call, ctx: Ctx) -> list[Word]:
    mode = rules.write_targets.get(call.key) or rules.write_targets.get(call.name)
    if mode is None:
        return []
    words = list(call.positionals)
    chosen = {"all": words, "last": words[-1:], "after_first": words[1:], "second": words[1:2]}
    extra = [Word(FROM_XARGS, FROM_XARGS, ("?",))] if ctx.appended else []
    remote_copy = call.name in ("scp", "rsync")
    return [w for w in chosen[mode] if not (remote_copy and _is_remote(w.text))] + extra


def _writes(found: Findings, call: Call, cls: CommandClass, targets: list[Word]) -> None:
    rules = found.rules
    opts = call.all_options
    recursive = any(
        flag_matches(o, f) for f in rules.recursive_flags.get(call.name, ()) for o in opts
    )
    write_cls = max(cls, "workspace_write", key=RANK.__getitem__)
    mode = rules.write_targets.get(call.key) or rules.write_targets.get(call.name)
    for target in targets:
        # `uniq IN OUT`, `xxd IN OUT`: the output file is replaced
        replaces = mode == "second" and target.text != FROM_XARGS
        found.write(target, write_cls, call.key, recursive=recursive, replaces=replaces)
    for key in {call.name, call.key}:
        for opt in opts:
            written = rules.write_options.get(key, ())
            if opt.value is not None and any(names_option(opt, w) for w in written):
                found.write(opt.value, write_cls, call.key, replaces=True)


COPIES = frozenset({"cp", "mv", "install", "ln"})
NO_CLOBBER = ("-n", "--no-clobber")


def _overwrites(found: Findings, call: Call) -> None:
    """The overwrite rule's part: files this call replaces or edits in place."""
    rules, opts = found.rules, call.all_options
    if call.key in rules.edits_in_place or call.name in rules.edits_in_place:
        found.edits(call.key)
    words = list(call.positionals)
    if call.name == "tee" and not any(flag_matches(o, "-a") or o.name == "--append" for o in opts):
        for word in words:
            found.may_replace(word, "tee")
    if call.name not in COPIES or len(words) < 2 or any(o.name in NO_CLOBBER for o in opts):
        return
    if call.name == "ln" and not any(flag_matches(o, "-f") or o.name == "--force" for o in opts):
        return
    target = words[-1]
    found.may_replace(target, call.name)
    for source in words[:-1]:  # onto a folder: the file of the same name inside it
        if not source.literal or any(c in GLOB_CHARS for c in source.text):
            if found.places.place(target) == "workspace":
                found.edits(call.name)  # which names land there is known only when it runs
            continue
        name = source.text.rstrip("/").rsplit("/", 1)[-1]
        found.may_replace(replace(target, text=f"{target.text.rstrip('/')}/{name}"), call.name)


def _is_remote(text: str) -> bool:
    """Whether a copy argument names another host (`host:path`, `rsync://...`)."""
    return "://" in text or ":" in text.split("/", 1)[0]
