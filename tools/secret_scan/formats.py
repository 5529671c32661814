"""Credentials known by their shape: detect-secrets' detectors, and a few it lacks.

The first line is Yelp's detect-secrets: every detector of it that knows a credential by
its format (AWS, GitHub, GitLab, Slack, Stripe, private keys, JWTs, passwords in URLs,
npm, PyPI, OpenAI, SendGrid, Twilio, ...), used by its own compiled patterns
(`denylist`) and its own checks (a JWT's parts must decode). The patterns run over the
whole text at once; the library's line scan (`scan_line`) builds a code snippet and runs
its filter chain for every line and detector, about a hundred times slower.

Left out: its IP address detector (an address is no secret), its high-entropy string
detectors (any quoted hash or fixture would be a marker; values assigned to secret names
get an entropy test in `keywords.py` instead), and its IBM, Cloudant and SoftLayer
detectors: each is a name beside a value (`ibm_cloud_iam_key = ...`), which `keywords.py`
finds, and their patterns, free to start anywhere, cost more than all the others together
(55 ms for 200 KB against bubblewrap's ~40 ms start).

A pattern that cannot start with a fixed text runs only around the spots where a
pattern of its fixed part matches (`_ANCHORS`): Python's `re` tries such a pattern at
every position, ten times slower than a search for a fixed start.

`OWN_FORMATS` is the second line, only for formats detect-secrets 1.5 does not know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import unquote

from ducklm.tools.secret_scan.found import Found
from ducklm.tools.secret_scan.keywords import entropy

MIN_FORMAT_ENTROPY = 2.0
"""Bits per character; a real key has 4 or more, `AKIAXXXXXXXXXXXXXXXX` under 1."""
AWS_SECRET = "AWS secret key"
PRIVATE_KEY = "private key"

# The library's `secret_type` is its own label; these read better in a marker.
_LABELS = {
    "AWS Access Key": "AWS access key",
    "Basic Auth Credentials": "password in a URL",
    "Private Key": PRIVATE_KEY,
    "JSON Web Token": "JSON Web Token",
    "GitHub Token": "GitHub token",
    "GitLab Token": "GitLab token",
    "Slack Token": "Slack token",
    "Stripe Access Key": "Stripe key",
}
# IP addresses are no secret; high-entropy strings flag every hash (see the docstring).
_LEFT_OUT = frozenset(
    {"IPPublicDetector", "Base64HighEntropyString", "HexHighEntropyString"}
    | {"IbmCloudIamDetector", "IbmCosHmacDetector", "CloudantDetector", "SoftlayerDetector"}
)
# Where a match of a pattern that starts with a class or an alternation can be, found by
# a pattern that starts with a fixed text: the full pattern runs only around those spots.
_ANCHORS = {
    "ArtifactoryDetector": re.compile(r"AKC|AP[\dA-F]"),
    "MailchimpDetector": re.compile(r"-us\d"),
    "StripeDetector": re.compile(r"k_live_"),
    "TelegramBotTokenDetector": re.compile(r":[\w-]{35}"),
    "DiscordBotTokenDetector": re.compile(r"\.[\w-]{6}\."),
}
# A URL's password that is lower-case words (`user:password@`, `:choose-one@`, `a%20secret`) or a
# template (`<password>`, `${PW}`) is what docs and examples write; a real one has a
# digit or a capital (a weak one slips by).
_URL_PLACEHOLDER = re.compile(r"[a-z]+(?:[- ][a-z]+)*|<[^>]*>|\$\{?\w+\}?|\{\{?[^}]*\}\}?")


def _jwt_check(value: str) -> bool:
    """The library's check that a JWT's parts decode (its header and payload as JSON)."""
    from detect_secrets.plugins.jwt import JwtTokenDetector  # noqa: PLC0415  loaded by `detectors()`

    return JwtTokenDetector.is_formally_valid(value)


_CHECKS: dict[str, Callable[[str], bool]] = {
    "JwtTokenDetector": _jwt_check,
    "BasicAuthDetector": lambda value: _URL_PLACEHOLDER.fullmatch(unquote(value)) is None,
}
_REACH = 256
"""How far from its anchor a match may begin or end (each of these is shorter)."""

# Second line: formats detect-secrets 1.5.0 does not know (checked against its plugins).
OWN_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # No Google detector in the library.
    ("Google API key", re.compile(r"AIza[0-9A-Za-z_\-]{35}(?![\w-])")),
    ("Google OAuth client secret", re.compile(r"GOCSPX-[0-9A-Za-z_\-]{28}(?![\w-])")),
    # Its GitHub detector knows the classic prefixes only, not fine-grained tokens.
    ("GitHub token", re.compile(r"github_pat_[0-9A-Za-z_]{22,255}")),
    # Its OpenAI detector knows only the legacy `T3BlbkFJ` keys.
    ("OpenAI key", re.compile(r"sk-(?:proj|svcacct|admin)-[0-9A-Za-z_\-]{20,}")),
    ("Anthropic key", re.compile(r"sk-ant-[a-z0-9]{2,8}-[0-9A-Za-z_\-]{20,}")),
    ("Hugging Face token", re.compile(r"hf_[A-Za-z]{34}\b")),
    # Password hashes (.htpasswd, /etc/shadow lines, crypt(3)): no detector.
    (
        "password hash",
        re.compile(
            r"\$(?:apr1|1|5|6|2[abxy]?|y|gy|7)\$[./0-9A-Za-z$]{8,}[./0-9A-Za-z=]"
            r"|\{S?SHA\}[0-9A-Za-z+/]{20,}={0,2}"
        ),
    ),
    # An HTTP bearer token in a header or a curl command: no detector.
    ("bearer token", re.compile(r"(?:Bearer|bearer|BEARER)\s+([0-9A-Za-z._~+/\-]{16,}=*)")),
)
_OWN_ANCHORS = {"password hash": re.compile(r"\$|\{S"), "bearer token": re.compile("earer|EARER")}
# A private key detector matches the block's first line; the rest of the block is the key.
_BLOCK_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|^Private-MAC: \S+$", re.M)
_EDGES = " \t\r\n\"'=:"
# The group that is the value, where the rest of the match is not secret (a URL's user
# and host, a config's name); other groups are prefixes (`(ghp|gho|...)_`).
_VALUE_GROUP = {"BasicAuthDetector": 1, "AWSKeyDetector": 1, "NpmDetector": 1}


@dataclass(frozen=True)
class Detector:
    """One format: its label, its pattern, and the library's check of a match, if any."""

    kind: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    group: int = 0
    """The match's group that is the value; 0: the whole match."""
    anchor: re.Pattern[str] | None = None
    """Where a match can be: the pattern runs only around its matches (none: everywhere)."""

    def matches(self, text: str) -> Iterator[re.Match[str]]:
        """The pattern's matches in `text`."""
        if self.anchor is None:
            yield from self.pattern.finditer(text)
            return
        windows: list[tuple[int, int]] = []
        for hit in self.anchor.finditer(text):
            start, end = max(0, hit.start() - _REACH), hit.end() + _REACH
            if windows and start <= windows[-1][1]:
                start = windows.pop()[0]  # overlaps the last one: one window
            windows.append((start, end))
        for start, end in windows:
            yield from self.pattern.finditer(text, start, end)


@cache
def detectors() -> tuple[Detector, ...]:
    """The format detectors, built once (importing detect-secrets takes ~0.2 s)."""
    # Imported on the first scan, off the event loop: detect-secrets takes ~0.2 s to load.
    from detect_secrets.core.plugins.util import (  # noqa: PLC0415
        get_mapping_from_secret_type_to_class,
    )
    from detect_secrets.plugins.base import RegexBasedDetector  # noqa: PLC0415

    found: list[Detector] = []
    # Any: the classes' `secret_type` and `denylist` are class attributes that the
    # library types as abstract properties.
    plugins: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    for plugin in plugins:
        if plugin.__name__ in _LEFT_OUT or not issubclass(plugin, RegexBasedDetector):
            continue
        kind: str = _LABELS.get(plugin.secret_type, plugin.secret_type)
        check = _CHECKS.get(plugin.__name__)
        patterns: list[re.Pattern[str]] = list(plugin.denylist)
        for index, pattern in enumerate(patterns):
            # The AWS detector's second pattern is the secret key beside an `aws...key` name.
            label = AWS_SECRET if plugin.secret_type == "AWS Access Key" and index else kind
            group = _VALUE_GROUP.get(plugin.__name__, 0) if pattern.groups else 0
            anchor = _ANCHORS.get(plugin.__name__)
            found.append(Detector(label, pattern, check, group, anchor))
    found.extend(
        Detector(kind, pattern, None, pattern.groups and 1, _OWN_ANCHORS.get(kind))
        for kind, pattern in OWN_FORMATS
    )
    return tuple(found)


def find_formats(text: str) -> Iterator[Found]:
    """Every credential in `text` known by its format."""
    for detector in detectors():
        for match in detector.matches(text):
            start, end = _value_span(match, detector.group)
            value = text[start:end]
            if not value or (detector.check is not None and not detector.check(value)):
                continue
            if detector.kind != PRIVATE_KEY and entropy(value) < MIN_FORMAT_ENTROPY:
                continue  # `ACxxxxxxxxxxxxxxxx` in a comment: a placeholder
            if detector.kind == PRIVATE_KEY:
                end = _block_end(text, start)
                start = text.rfind("\n", 0, start) + 1  # the whole `-----BEGIN` line
            yield Found(start, end, detector.kind)


def _value_span(match: re.Match[str], group: int) -> tuple[int, int]:
    """The secret's span: the detector's value group if it has one, else the whole match."""
    start, end = match.span(group) if group and match.group(group) else match.span()
    text = match.string
    # Some patterns take the character around the value (`(?:\s|"|^)AKC...(?:\s|"|$)`).
    while start < end and text[start] in _EDGES:
        start += 1
    while end > start and text[end - 1] in _EDGES:
        end -= 1
    return start, end


def _block_end(text: str, start: int) -> int:
    """Where a private key block begun at `start` ends: its END line, or the text's end."""
    match = _BLOCK_END.search(text, start)
    return match.end() if match is not None else len(text)
