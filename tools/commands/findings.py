"""What classifying a command finds, part by part, and the verdict the parts add up to.

Every risky part of a command is one `Finding`; the riskiest decides the class, which
maps to an action. Code the policy cannot read, secrets and sudo make it ask whatever
the class maps to.
"""

from __future__ import annotations

from dataclasses import dataclass

from ducklm.tools.commands.paths import Places
from ducklm.tools.commands.rules import PermissionRules, RuleIndex
from ducklm.tools.commands.verdict import RANK, CommandClass, CommandVerdict
from ducklm.tools.commands.words import GLOB_CHARS, Pipes, Redirect, Word

WRITES = "{name} {verb} {path}"
WRITES_UNKNOWN = "{name} {verb} {path}, which is only known when it runs"
WRITES_GIT = "{name} {verb} {path}, which runs later without asking: {runner}"
RUNS_ELSEWHERE = "{name} works in {path}, outside the workspace"
SECRET = "reads secrets: {path}"
SOCKET = "redirection opens a network connection: {path}"
INLINE_CODE = "{name} runs code the policy cannot read"
DOWNLOAD_RUN = "runs code downloaded from the network with {name}"


@dataclass(frozen=True)
class Finding:
    """One risky part of a command."""

    cls: CommandClass
    reason: str
    ask: bool = False
    """Ask whatever the class maps to: code the policy cannot read."""
    network: bool = False
    sudo: bool = False
    secrets: bool = False
    replaces: str | None = None
    """A workspace path this part overwrites if it exists."""
    edits: bool = False
    """This part rewrites existing files in place."""
    writes_git: bool = False
    """This part writes a git repository's control folder (`git commit`, `> .git/x`)."""


REPLACING_REDIRECTS = frozenset({">", ">|", "&>"})
EDITS_IN_PLACE = "{name} rewrites existing files in place"
OVERWRITE_ASKS = "overwriting existing files asks (overwrite: ask in permissions.yaml)"


class Findings:
    """The findings of one classification, and the paths and pipes they depend on."""

    def __init__(self, index: RuleIndex, places: Places) -> None:
        self.index = index
        self.rules = index.rules
        self.places = places
        self.found: list[Finding] = []
        # interpreters reading code from a pipe, and the network commands feeding
        # pipes: together they spot `curl ... | sh`
        self.readers: list[tuple[str, Pipes]] = []
        self.downloads: list[Pipes] = []

    def add(
        self,
        cls: CommandClass,
        reason: str,
        *,
        ask: bool = False,
        network: bool = False,
        sudo: bool = False,
        secrets: bool = False,
        edits: bool = False,
        writes_git: bool = False,
    ) -> None:
        """Record one risky part; the flags are those of `Finding`."""
        self.found.append(
            Finding(cls, reason, ask, network, sudo, secrets, edits=edits, writes_git=writes_git)
        )

    def redirect(self, redirect: Redirect) -> None:
        """Record what a redirection opens: a socket, a secret, or a file it writes."""
        if redirect.target is None or redirect.op in ("<<<", "<&"):
            return
        if self.places.is_socket(redirect.target):
            self.add("network", SOCKET.format(path=redirect.target.text), network=True)
        elif redirect.op == "<":
            self.secret(redirect.target)
        else:
            replaces = redirect.op in REPLACING_REDIRECTS
            self.write(redirect.target, "workspace_write", "redirection", replaces=replaces)

    def write(
        self,
        word: Word,
        base: CommandClass,
        name: str,
        *,
        recursive: bool = False,
        verb: str = "",
        replaces: bool = False,
    ) -> None:
        """Record a write to `word`, classed by where it lands.

        `replaces`: the write overwrites `word` if it exists (the overwrite rule).
        """
        if word.text == "-" and word.literal:
            return  # standard output
        place = self.places.place(word)
        if replaces:
            self.may_replace(word, name)
        verb = verb or ("deletes" if base == "destructive" else "writes to")
        shown = word.text if word.literal else word.source
        text = WRITES.format(name=name, verb=verb, path=shown)
        raised = max(base, "system", key=RANK.__getitem__)
        if place in ("workspace", "scratch"):
            self.add(base, text)
        elif place == "git":
            runner = self.places.runner(word)
            text = WRITES_GIT.format(name=name, verb=verb, path=shown, runner=runner)
            self.add(raised, text, writes_git=True)
        elif place == "protected":
            self.add("dangerous", text)
        elif place in ("critical", "outside"):
            deleting = base == "destructive" and (recursive or place == "critical")
            self.add(
                "dangerous" if deleting or (place == "critical" and recursive) else raised, text
            )
        elif place == "unknown":
            self.add(raised, WRITES_UNKNOWN.format(name=name, verb=verb, path=shown), ask=True)

    def may_replace(self, word: Word, name: str) -> None:
        """Record that `name` overwrites `word` if it exists.

        Only in the workspace: other places have rules of their own. A name known only
        when it runs (`$f`, a glob) counts as an edit in place.
        """
        if self.places.place(word) != "workspace":
            return
        if word.literal and not any(c in GLOB_CHARS for c in word.text):
            self.found.append(Finding("read_only", "", replaces=word.text))
        else:
            self.edits(name)

    def edits(self, name: str) -> None:
        """Record that `name` rewrites existing files in place."""
        self.add("workspace_write", EDITS_IN_PLACE.format(name=name), edits=True)

    def secret(self, word: Word) -> None:
        """Record reading `word` when it may hold secrets."""
        if self.places.is_secret(word):
            self.add("read_only", SECRET.format(path=word.text), secrets=True)

    def check_cwd(self, name: str, folder: Word | None = None) -> None:
        """Check the folder a write with no named target lands in (the working folder)."""
        if self.places.place(folder or Word(".", ".")) not in ("workspace", "scratch"):
            shown = folder.text if folder else str(self.places.cwd or "an unknown folder")
            self.add("system", RUNS_ELSEWHERE.format(name=name, path=shown), ask=True)

    def opaque_code(self, name: str, code: Word) -> None:
        """Code the policy cannot read: dangerous when it comes from a download."""
        if self.downloads_in(code):
            self.add("dangerous", DOWNLOAD_RUN.format(name=name))
        else:
            self.add("system", INLINE_CODE.format(name=name), ask=True)

    def downloads_in(self, word: Word) -> bool:
        """Whether a substitution in `word` runs a network command (`$(curl ...)`)."""
        return any(self.index.class_of(name) == "network" for name in word.inner)


def combine(
    rules: PermissionRules, findings: list[Finding], normalized: str, sandboxed: bool
) -> CommandVerdict:
    """The verdict for a command from its findings: the riskiest decides the class."""
    ordered = sorted(findings, key=lambda f: -RANK[f.cls])
    cls = ordered[0].cls if ordered else "read_only"
    action = rules.actions.model_dump()[cls]
    if not sandboxed:
        action = rules.unsandboxed_actions.model_dump()[cls] or action
    if action == "allow" and any(f.ask or f.secrets or f.sudo or f.writes_git for f in findings):
        action = "ask"
    edits = any(f.edits for f in findings)
    reasons = [f.reason for f in ordered if f.reason]
    if action == "allow" and edits and rules.overwrite == "ask":
        action = "ask"
        reasons.append(OVERWRITE_ASKS)
    return CommandVerdict(
        action=action,
        command_class=cls,
        reasons=tuple(dict.fromkeys(reasons)),
        replaces=tuple(dict.fromkeys(f.replaces for f in findings if f.replaces)),
        edits_in_place=edits,
        normalized=normalized,
        network=any(f.network for f in findings),
        sudo=any(f.sudo for f in findings),
        secrets=any(f.secrets for f in findings),
        writes_git=any(f.writes_git for f in findings),
    )
