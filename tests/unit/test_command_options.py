"""Options read as the program reads them, and git whose repository config could run programs.

`OPTION_SPELLINGS` is the corpus of hostile spellings: long, abbreviated, bundled,
with `=` and as a separate word, after `-W` and after `--`. The sandbox corpus imports it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ducklm.tools.commands.getopt import OptionSpec, parse_options
from ducklm.tools.commands.git_repo import risky_keys
from ducklm.tools.commands.option_tables import OPTION_SPECS
from ducklm.tools.commands.policy import CommandPolicy, load_command_policy
from ducklm.tools.commands.words import Word
from ducklm.tools.sandbox.git_config import SAFE_SETTINGS, git_env

WS = Path("/home/duck/ws")
HOME = Path("/home/duck")

OPTION_SPELLINGS: list[tuple[str, str]] = [
    # sed: scripts that run commands, by every name of -e and -f
    ("sed --expression='1e id' f", "ask"),
    ("sed --expr='1e id' f", "ask"),
    ("sed --e='1e id' f", "ask"),
    ("sed --expr '1e id' f", "ask"),
    ("sed -e '1e id' f", "ask"),
    ("sed -ne '1e id' f", "ask"),
    ("sed -n -e1eid f", "ask"),
    ("sed --file=evil.sed f", "ask"),
    ("sed --fil=evil.sed f", "ask"),
    ("sed --fi evil.sed f", "ask"),
    ("sed -nfevil.sed f", "ask"),
    ("sed -f evil.sed f", "ask"),
    ("sed --in-pl f", "ask"),
    ("sed --in-place=.bak s/a/b/ f", "ask"),
    ("sed -ni.bak p f", "ask"),
    ("sed -n -i p f", "ask"),
    ("sed --s f", "ask"),  # ambiguous: --silent, --separate, --sandbox
    ("sed -- '1e id' f", "ask"),
    # sort: an output file, a compressor
    ("sort --compress-program=sh f", "ask"),
    ("sort --compress=sh f", "ask"),
    ("sort --comp sh f", "ask"),
    ("sort --frobnicate f", "ask"),
    ("sort -X f", "ask"),
    # awk: programs from files, loaded code, written profiles, -W spellings
    ("awk -f prog.awk", "ask"),
    ("awk --file=prog.awk", "ask"),
    ("awk --fi prog.awk", "ask"),
    ("awk -fprog.awk", "ask"),
    ("awk -W exec prog.awk", "ask"),
    ("awk -W e prog.awk", "ask"),
    ("awk -Wexec prog.awk", "ask"),
    ("awk -W exec=prog.awk", "ask"),
    ("mawk -W exec prog.awk", "ask"),
    ("nawk -W exec prog.awk", "ask"),
    ("gawk --exec prog.awk", "ask"),
    ("gawk -E prog.awk", "ask"),
    ("gawk -l ext 1", "ask"),
    ("gawk --load ext 1", "ask"),
    ("gawk --lo=ext 1", "ask"),
    ("gawk -i lib.awk 1", "ask"),
    ("gawk --include=lib.awk 1", "ask"),
    ("gawk --incl lib.awk 1", "ask"),
    ("gawk -p 1 f", "ask"),
    ("gawk --profile=out 1 f", "ask"),
    ("gawk -o 1 f", "ask"),
    ("gawk --dump-variables 1 f", "ask"),
    ("awk -e 'BEGIN{system(\"id\")}'", "ask"),
    ("awk --source='BEGIN{system(\"id\")}'", "ask"),
    ("awk -v x=1 -e 'BEGIN { print x | \"sh\" }'", "ask"),
    ("awk -- 'BEGIN{system(\"id\")}'", "ask"),
    ("awk --frobnicate 1", "ask"),
    # git: options before the subcommand, and subcommands' risky options abbreviated
    ("git --frobnicate status", "ask"),
    ("git --git-d=x status", "ask"),  # git does not abbreviate its own options
    ("git -c core.pager=id log", "ask"),
    ("git -ccore.pager=id log", "ask"),
    ("git --config-env=core.pager=X log", "ask"),
    ("git --exec-path=/tmp/x status", "ask"),
    ("git diff --ext-diff", "ask"),
    ("git diff --ext", "ask"),
    ("git diff --output=x", "ask"),
    ("git diff --out=x", "ask"),
    ("git log --ext-diff -p", "ask"),
    ("git grep -O foo", "ask"),
    ("git grep -Ovim foo", "ask"),
    ("git grep --open foo", "ask"),
    ("git help --web log", "ask"),
    # the environment the sandbox gives git
    ("unset GIT_CONFIG_COUNT; git diff", "ask"),
    ("unset GIT_PAGER && git log", "ask"),
    ("env -i git status", "ask"),
    ("env -u GIT_CONFIG_COUNT git diff", "ask"),
    ("env --unset=GIT_CONFIG_GLOBAL git status", "ask"),
    ("exec -c git status", "ask"),
    ("GIT_CONFIG_COUNT=0 git status", "ask"),
    ("export GIT_CONFIG_GLOBAL=/tmp/g; git status", "ask"),
    # other read-only tools with options that run code
    ("fd -x rm", "ask"),
    ("fd --exec rm", "ask"),
    ("fd --exec-batch rm", "ask"),
    ("rg --pre sh foo", "ask"),
    ("rg --pr=sh foo", "ask"),
    ("man -P id ls", "ask"),
    ("man --pager=id ls", "ask"),
    ("man -C evil.conf ls", "ask"),
    ("less --log=x f", "ask"),
    ("file -C -m magic", "ask"),
    ("date --set=now", "ask"),
    ("date --se now", "ask"),
    ("grep --frobnicate x f", "ask"),
    ("cat --frobnicate f", "ask"),
    # read-only spellings stay read-only
    ("sed -n 1p f", "allow"),
    ("sed --quiet --expression=1p f", "allow"),
    ("sed --qui --expr=1p f", "allow"),
    ("sed -ne 1p f", "allow"),
    ("sed -n -- 1p f", "allow"),
    ("sed -E -n 's/a/b/p' f", "allow"),
    ("sort -rn f", "allow"),
    ("sort -k2,2 -t, f", "allow"),
    ("sort -- --output=x", "allow"),  # after --, a file name
    ("awk '{print $1}' f", "allow"),
    ("awk -F: '{print $1}' /etc/passwd", "allow"),
    ("awk -v n=1 'NR==n' f", "allow"),
    ("awk '{print}' -f x", "allow"),  # after the program: awk's operands
    ("head -5 f", "allow"),
    ("head -n 5 f", "allow"),
    ("tail -n +2 f", "allow"),
    ("tail -f log", "allow"),
    ("grep -rn foo .", "allow"),
    ("grep -C3 -e foo -- -f", "allow"),
    ("grep --incl='*.py' -rn foo .", "allow"),
    ("ls -la --col=never", "allow"),
    ("cut -d: -f1 f", "allow"),
    ("wc -l f", "allow"),
    ("uniq -c f", "allow"),
    ("diff -u a b", "allow"),
    ("od -An -tx1 f", "allow"),
    ("echo --output=x -e", "allow"),
    ("printf '%s\\n' --file", "allow"),
    ("test -f --file", "allow"),
    ("git status --porcelain", "allow"),
    ("git -C sub status", "allow"),
    ("git --no-pager log -p", "allow"),
    ("git -P diff", "allow"),
    ("git --exec-path", "ask"),  # the flag rule asks for any --exec-path
]
"""(command, action) pairs: hostile spellings, and the harmless ones they resemble."""

WRITES: list[tuple[str, str]] = [
    ("sort --output=precious.txt /dev/null", "precious.txt"),
    ("sort --out=precious.txt /dev/null", "precious.txt"),
    ("sort --o precious.txt /dev/null", "precious.txt"),
    ("sort -o precious.txt f", "precious.txt"),
    ("sort -oprecious.txt f", "precious.txt"),
    ("sort -rnoprecious.txt f", "precious.txt"),
    ("xxd -r -p in.hex precious.txt", "precious.txt"),
    ("xxd in precious.txt", "precious.txt"),
    ("uniq in precious.txt", "precious.txt"),
    ("tree -o precious.txt", "precious.txt"),
]


@pytest.fixture(scope="module")
def policy() -> CommandPolicy:
    return load_command_policy()


@pytest.mark.parametrize(("command", "action"), OPTION_SPELLINGS)
def test_each_spelling_gets_its_action(policy: CommandPolicy, command: str, action: str) -> None:
    got = policy.classify(command, workspace=WS, home=HOME)
    assert got.action == action, (command, got)


@pytest.mark.parametrize(("command", "written"), WRITES)
def test_an_output_option_is_a_write_under_the_overwrite_rule(
    policy: CommandPolicy, command: str, written: str
) -> None:
    got = policy.classify(command, workspace=WS, home=HOME)
    assert got.command_class == "workspace_write", got
    assert got.replaces == (written,), got


def test_an_output_option_outside_the_workspace_asks(policy: CommandPolicy) -> None:
    got = policy.classify("sort --out=/etc/passwd f", workspace=WS, home=HOME)
    assert got.command_class == "dangerous"


def test_reasons_name_the_option(policy: CommandPolicy) -> None:
    reasons = policy.classify("sort --frobnicate f", workspace=WS, home=HOME).reasons
    assert "sort: option --frobnicate is not known to the policy" in reasons
    reasons = policy.classify("sed --s f", workspace=WS, home=HOME).reasons
    assert any("ambiguous (--silent, --separate, --sandbox)" in r for r in reasons)
    reasons = policy.classify("awk -W e prog.awk", workspace=WS, home=HOME).reasons
    assert "awk --exec runs a program read from a file" in reasons


def _words(line: str) -> list[Word]:
    return [Word(w, w) for w in line.split()]


SED = OPTION_SPECS["sed"]


@pytest.mark.parametrize(
    ("line", "options", "positionals"),
    [
        ("-ni.bak p f", [("-n", None), ("-i", ".bak")], ["p", "f"]),
        ("-n -i p f", [("-n", None), ("-i", None)], ["p", "f"]),
        ("--expr=1p f", [("--expression", "1p")], ["f"]),
        ("--expr 1p f", [("--expression", "1p")], ["f"]),
        ("-e1p -- -i", [("-e", "1p")], ["-i"]),
        ("-nfprog f", [("-n", None), ("-f", "prog")], ["f"]),
        ("f --in-pl", [("--in-place", None)], ["f"]),  # GNU permutes
        ("--in-place=.b f", [("--in-place", ".b")], ["f"]),
        ("- f", [], ["-", "f"]),
    ],
)
def test_getopt_reads_like_gnu(
    line: str, options: list[tuple[str, str | None]], positionals: list[str]
) -> None:
    parsed = parse_options("sed", SED, _words(line))
    assert [(o.name, o.value.text if o.value else None) for o in parsed.opts] == options
    assert [w.text for w in parsed.positionals] == positionals
    assert parsed.problems == []


def test_getopt_problems() -> None:
    parsed = parse_options("sed", SED, _words("-X --frob --s -nQ f"))
    assert parsed.problems == [
        "sed: option -X is not known to the policy",
        "sed: option --frob is not known to the policy",
        "sed: option --s is ambiguous (--silent, --separate, --sandbox)",
        "sed: option -Q is not known to the policy",
    ]


def test_getopt_stop_and_w_long_and_numbers() -> None:
    awk = OPTION_SPECS["awk"]
    parsed = parse_options("awk", awk, _words("-F: -W exec p.awk x -f y"))
    assert [(o.name, o.value.text if o.value else None) for o in parsed.opts] == [
        ("-F", ":"),
        ("--exec", "p.awk"),
    ]
    assert [w.text for w in parsed.positionals] == ["x", "-f", "y"]
    head = parse_options("head", OPTION_SPECS["head"], _words("-20 f"))
    assert (head.problems, [w.text for w in head.positionals]) == ([], ["f"])
    exact = OptionSpec(long="git-dir=", abbrev=False)
    assert parse_options("git", exact, _words("--git-d=x")).problems


def test_every_table_is_well_formed() -> None:
    for name, spec in OPTION_SPECS.items():
        kinds = spec.long_kinds
        for option in (*spec.writes, *spec.risky):
            known = kinds.get(option[2:]) if option.startswith("--") else spec.short_kind(option[1])
            assert known is not None, (name, option)
        assert all(n.replace("-", "").replace("_", "").isalnum() for n in kinds), name


# -- git: what the repository's config makes git run ------------------------------------

GIT_CONFIG = """\
[core]
\tpager = less
[filter "lfs"]
\tclean = git-lfs clean -- %f
[diff.pdf]
\ttextconv = pdftotext
[Alias]
\tst = status
\tx = "!sh -c id"
[merge "ours"] driver = true
# [diff "commented"] textconv = x
[include]
\tpath = other.cfg
[includeIf "gitdir:/x/"]
\tpath = y
[diff]
\texternal = evil
[submodule "m"]
\tupdate = !evil
[gpg "ssh"]
\tdefaultKeyCommand = evil
"""


def test_risky_keys_names_each_key_a_person_would_see() -> None:
    # a key on its header's line counts; a commented-out header does not
    assert risky_keys(GIT_CONFIG) == [
        "filter.lfs.clean",
        "diff.pdf.textconv",
        "alias.x",
        "merge.ours.driver",
        "include.path",
        "includeif.gitdir:/x/.path",
        "diff.external",
        "submodule.m.update",
        "gpg.ssh.defaultkeycommand",
    ]


def _repo(path: Path, *settings: tuple[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for key, value in settings:
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)
    return path


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("filter.x.clean", "touch MARK"),
        ("filter.x.smudge", "touch MARK"),
        ("filter.x.process", "touch MARK"),
        ("diff.x.textconv", "touch MARK"),
        ("diff.x.command", "touch MARK"),
        ("diff.external", "touch MARK"),
        ("merge.x.driver", "touch MARK"),
        ("alias.st", "!touch MARK"),
        ("include.path", "other"),
        ("includeIf.gitdir:/.path", "other"),
    ],
)
@pytest.mark.parametrize("command", ["git status", "git diff", "git log -p", "cd sub && git log"])
def test_git_asks_naming_a_key_git_would_run(
    policy: CommandPolicy, tmp_path: Path, key: str, value: str, command: str
) -> None:
    ws = _repo(tmp_path / "ws", (key, value))
    (ws / "sub").mkdir()
    got = policy.classify(command, workspace=ws)
    assert got.action == "ask"
    assert any(
        key.lower().split(".")[0] in r.lower() and "repository's config" in r for r in got.reasons
    )


def test_git_in_a_plain_repository_runs(policy: CommandPolicy, tmp_path: Path) -> None:
    ws = _repo(tmp_path / "ws", ("core.pager", "touch MARK"), ("core.fsmonitor", "touch M"))
    for command in ("git status", "git diff", "git log -p", "git -C . status"):
        assert policy.classify(command, workspace=ws).action == "allow", command


def test_git_finds_the_config_of_a_worktree_file_and_of_git_dir(
    policy: CommandPolicy, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _repo(ws / "real", ("filter.x.clean", "evil"))
    (ws / "linked").mkdir()
    (ws / "linked" / ".git").write_text("gitdir: ../real/.git\n")
    assert policy.classify("cd linked && git status", workspace=ws).action == "ask"
    assert policy.classify("git -C linked status", workspace=ws).action == "ask"
    assert policy.classify("git --git-dir=real/.git log", workspace=ws).action == "ask"
    assert policy.classify("git --git-dir=$D log", workspace=ws).action == "ask"
    assert policy.classify("git status", workspace=ws).action == "allow"  # no repo here


def test_the_sandbox_env_overrides_fixed_keys() -> None:
    env = git_env()
    assert env["GIT_CONFIG_COUNT"] == str(len(SAFE_SETTINGS))
    settings = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(len(SAFE_SETTINGS))
    }
    assert settings["core.fsmonitor"] == "false"
    assert settings["core.hooksPath"] == "/dev/null"
    assert settings["core.pager"] == "cat"
    assert "diff.external" not in settings  # empty breaks git diff: the policy asks instead
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_PAGER"] == "cat"
