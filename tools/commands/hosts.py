"""Which hosts a network command reaches, as far as its words say: what the card approves.

Approving `curl https://example.org/x` approves `example.org` (and its subdomains) for
that run, no more: the sandbox's egress proxy (`tools/sandbox/egress.py`) lets nothing
else through. The hosts come from the literal words of each network call: URLs
(`scheme://host`), scp-style remotes (`git@host:repo`), bare host names given to the
tools that take one (`curl example.org`, `ping host`), the remotes of the workspace's
repository for `git fetch`/`pull`/`push` without a URL, and the registries of the package
managers (`DEFAULT_HOSTS`). Where a word is not literal (`curl $URL`) or a network call
names no host, the answer is `ANY_HOST`, and the card says the command may reach any
public host: the person then decides knowing that.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path, PurePosixPath

from ducklm.tools.commands.calls import split_call
from ducklm.tools.commands.git_repo import config_files, read_config
from ducklm.tools.commands.options import Opt, next_option
from ducklm.tools.commands.parse import CommandParseError, parse_command
from ducklm.tools.commands.rules import RuleIndex
from ducklm.tools.commands.words import Word
from ducklm.tools.sandbox.egress import ANY_HOST

DEFAULT_HOSTS: dict[str, tuple[str, ...]] = {
    "pip": ("pypi.org", "files.pythonhosted.org"),
    "pip3": ("pypi.org", "files.pythonhosted.org"),
    "npm": ("registry.npmjs.org",),
}
"""Where a package manager goes when no URL is named (its index or registry)."""
BARE_HOST_TOOLS = frozenset({
    "curl", "wget", "http", "aria2c", "ping", "dig", "nslookup", "host", "whois",
    "traceroute", "telnet", "nc", "ncat", "netcat", "ftp", "ssh", "sftp",
})  # fmt: skip
"""Tools whose positional arguments may be bare host names (`curl example.org/x`)."""
REMOTE_TOOLS = frozenset({"git", "scp", "rsync", "ssh", "sftp"})
"""Tools that take scp-style `user@host:path` remotes."""
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@?#]*@)?(\[[^\]]+\]|[^/:?#]+)")
_SCP = re.compile(r"^(?:[^@/:]+@)?([^@/:\[]+):(?!//)")
_NAME = re.compile(r"^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
                   r"[A-Za-z][A-Za-z0-9-]{0,62}$")  # fmt: skip
_REMOTE_URL = re.compile(r"^\s*(?:push)?url\s*=\s*(\S+)", re.MULTILINE)


def network_hosts(index: RuleIndex, command: str, workspace: Path) -> tuple[str, ...]:
    """The hosts `command`'s network calls name, sorted; `(ANY_HOST,)` when unsure.

    Reads the workspace's `.git/config` for git remotes: call it off the event loop.
    """
    try:
        parsed = parse_command(command)
    except CommandParseError:
        return (ANY_HOST,)
    hosts: set[str] = set()
    network_calls = 0
    for simple in parsed.commands:
        words = _unwrapped(index, list(simple.words))
        if not words or not words[0].literal:
            continue
        name = words[0].text.rsplit("/", 1)[-1]
        call = split_call(index, name, words[1:])
        if not _is_network(index, call.key, name):
            continue
        network_calls += 1
        found = _call_hosts(name, call.positionals, call.all_options, workspace)
        if found is None:
            return (ANY_HOST,)
        hosts |= found
    if not network_calls or not hosts:
        return (ANY_HOST,)
    return tuple(sorted(hosts))


def describe_hosts(hosts: tuple[str, ...], *, proxied: bool = True) -> str:
    """The card's words for the hosts a network command may reach.

    `proxied`: the egress proxy holds it to them; otherwise (Landlock, no sandbox, sudo)
    the command has the machine's own network, and the card says so.
    """
    if not proxied:
        return "uses this machine's own network, local services included (no egress proxy here)"
    if ANY_HOST in hosts:
        return "may reach any public host (the policy could not tell which)"
    return "reaches only " + ", ".join(hosts)


def _is_network(index: RuleIndex, key: str, name: str) -> bool:
    needs = index.rules.needs_network
    return index.class_of(key) == "network" or key in needs or name in needs


def _unwrapped(index: RuleIndex, words: list[Word]) -> list[Word]:
    """The words from the wrapped command on: `sudo -u x timeout 5 curl ...` -> `curl ...`.

    By the wrappers' rules of the permissions file, as the classifier reads them.
    """
    while words and (rule := index.rules.wrappers.get(words[0].text.rsplit("/", 1)[-1])):
        i = 1
        while i < len(words) and words[i].text.startswith("-") and words[i].text != "-":
            if words[i].text == "--":
                i += 1
                break
            i = next_option(words, i, (*rule.value_options, *rule.code_options))[1]
        while rule.assignments and i < len(words) and "=" in words[i].text:
            i += 1
        words = words[i + rule.skip :]
    return words


def _call_hosts(
    name: str, positionals: tuple[Word, ...], options: tuple[Opt, ...], workspace: Path
) -> set[str] | None:
    """The hosts one network call names, or None when a word hides them."""
    hosts: set[str] = set()
    values = [o.value for o in options if o.value is not None]
    for word in (*positionals, *values):
        if not word.literal:
            return None
        host = _host_of(word.text, name, bare=word in positionals)
        if host:
            hosts.add(host)
    if not hosts and name == "git":
        return _git_remotes(workspace) or None
    if not hosts:
        hosts.update(DEFAULT_HOSTS.get(name, ()))
    return hosts or None


def _host_of(text: str, name: str, *, bare: bool) -> str | None:
    if match := _URL.match(text):
        return _clean(match.group(1))
    if name in REMOTE_TOOLS and (match := _SCP.match(text)):
        return _clean(match.group(1))
    if bare and name in BARE_HOST_TOOLS:
        candidate = text.rpartition("@")[2].split("/", 1)[0].split(":", 1)[0]
        if _NAME.match(candidate) or _is_ip(candidate) or candidate == "localhost":
            return _clean(candidate)
    return None


def _git_remotes(workspace: Path) -> set[str]:
    """The hosts of the remotes of the repository git finds in `workspace`.

    Its config files as the policy reads them (`git_repo.config_files`: a worktree's
    and the common dir's too).
    """
    root = PurePosixPath(os.path.abspath(workspace))
    hosts: set[str] = set()
    for path in config_files(root, root):
        try:
            text = read_config(path)
        except (OSError, ValueError):
            continue  # missing, unreadable or too large: no hosts from it
        urls = _REMOTE_URL.findall(text)
        hosts |= {h for url in urls if (h := _host_of(url, "git", bare=False))}
    return hosts


def _clean(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
