"""A "read-only" command runs no code: every form that hides a program asks (issue 41.3).

Each family of `HIDDEN_CODE` is a way a command the policy reads as read-only can still
start a program: an abbreviated wrapper option, `watch`, a login or interactive shell,
a variable set by a form other than a prefix, an array subscript or other arithmetic,
git config reached through a glob. `ORDINARY` is what a model sends every day; it must
keep running without a question.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ducklm.tools.commands.arithmetic import parameter_code
from ducklm.tools.commands.policy import CommandPolicy, CommandVerdict, load_command_policy
from ducklm.tools.commands.variables import environment_style
from tests.support.sandbox_corpus import READ_ONLY_CODE

WS = Path("/home/duck/ws")
HOME = Path("/home/duck")

HIDDEN_CODE: dict[str, list[str]] = {
    # GNU getopt takes any unambiguous prefix of a long option
    "abbreviated_options": [
        "env --sp='sh x'",
        "env --split-s='sh x'",
        "env --spl 'sh x'",
        "env --s='sh x'",
        "env -vS'sh x'",
        "env --ignore-env git status",
        "env --un=GIT_CONFIG_COUNT git diff",
        "env --ch=/ ls",
        "env --frobnicate ls",
        "xargs --process-slot=BASH_ENV bash -c true",
        "xargs --arg=.env echo",
        "timeout --sig=KILL 5 sh x",
        "nice --adj=5 sh x",
        "stdbuf --out=L sh x",
        "time --out=/etc/x ls",
        # an option hidden in a variable, for a tool with options that run programs
        "x=--pre=sh; rg $x foo",
        'less "$o" f',
        "man $o ls",
    ],
    "watch": [
        "watch -g 'sh x'",
        "watch -d 'sh x'",
        "watch -gd 'sh x'",
        "watch --chg 'sh x'",
        "watch -d=cumulative 'sh x'",
        "watch -n1 -g sh x",
        "watch --interval=1 'sh x'",
        "watch -x sh x",
        "watch --exec sh -c 'sh x'",
        "watch -e -b -t 'sh x'",
        "watch --frobnicate ls",
    ],
    "startup_files": [
        "bash -lc true",
        "bash -l -c true",
        "bash -ilc true",
        "bash --login -c ls",
        "bash --rcfile x -i",
        "bash -i <<< ls",
        "sh -l -c ls",
        "sh -i -c ls",
        "dash -l -c ls",
        "ksh -i -c ls",
        "zsh -c ls",
        "fish -c ls",
        "echo 'sh x' > /tmp/.bash_profile; bash -lc true",
        "exec -l bash",
        "exec -a -bash bash -c ls",
    ],
    "variables": [
        "for PAGER in 'sh x'; do git log; done",
        "for BASH_ENV in x.sh; do bash -c true; done",
        "for PS4 in '$(sh x)'; do set -x; ls; done",
        "for PROMPT_COMMAND in 'sh x'; do bash -i; done",
        "for LESSOPEN in '|sh x %s'; do less f; done",
        "for LESSCLOSE in 'sh x'; do less f; done",
        "for HOME in /tmp/h; do less f; done",
        "for PATH in /tmp/evil; do ls; done",
        "for GIT_DIR in x; do git status; done",
        "for GIT_CONFIG_COUNT in 0; do git diff; done",
        "for GIT_EXEC_PATH in /tmp/x; do git status; done",
        "for LD_PRELOAD in /tmp/x.so; do ls; done",
        "for EDITOR in 'sh x'; do git config -e; done",
        "for MY_TOOL_HOOK in x; do ls; done",
        "read BASH_ENV <<< x.sh; bash -c true",
        "read -r HOME < f; less g",
        "read -a PATH <<< /tmp/x; ls",
        "IFS=: read -r A PAGER <<< 'a:sh x'; git log",
        "printf -v PAGER %s 'sh x'; git log",
        "printf -vPAGER %s x; git log",
        "declare PS4='$(sh x)'; set -x; ls",
        "declare -x FOO=1; ls",
        "typeset GIT_DIR=x; git status",
        "local LESSOPEN='|sh x'; less f",
        "export ENV=x.sh; sh -i",
        "export lowercase=1; ls",
        "readonly PROMPT_COMMAND='sh x'",
        "mapfile PATH < f; ls",
        "readarray -t HOME < f",
        "getopts a: LESSOPEN -a x",
        "wait -p PAGER",
        "unset GIT_CONFIG_COUNT; git diff",
        "unset -v HOME; ls ~",
        "PAGER='sh x'; git log",
        "HOME=/tmp/h; less f",
        "set -a; pager='sh x'; ls",
        "set -o allexport; x=1; ls",
        "set -k; ls",
        "declare -n ref=PAGER; ref='sh x'; git log",
        'read "$name"',
        "export $name=1",
        "HOME=/tmp/h less f",
        "XDG_CONFIG_HOME=/tmp/c less f",
        "TAR_OPTIONS=-Ish tar tf x.tar",
        "SYSTEMD_PAGER='sh x' journalctl",
        "LESS='+!sh x' less f",
        "GIT_INDEX_FILE=x git status",
        "GCONV_PATH=/tmp/x iconv -l",
        "env GIT_DIR=x git status",
    ],
    "subscripts": [
        "test -v 'a[$(sh x)]'",
        "[ -v 'a[$(sh x)]' ]",
        "test -v 'a[i]'",
        "test -R 'r[$(sh x)]'",
        "test -n x -a -v 'a[$(sh x)]'",
        "printf -v 'a[$(sh x)]' %s x",
        "printf -v 'a[i]' %s x",
        "read 'a[$(sh x)]' <<< x",
        "read -r -a 'a[$(sh x)]' <<< x",
        "declare 'a[$(sh x)]=1'",
        'local "a[\\$(sh x)]"=1',
        "unset 'a[$(sh x)]'",
        "getopts a 'a[$(sh x)]'",
        "wait -p 'a[$(sh x)]'",
        "mapfile -C 'sh x' -c 1 a < f",
        "readarray -C cb a < f",
        "let 'x=a[$(sh x)]'",
        "((x=a[i]))",
        "(( a[i] ))",
        "echo $(( a[$(sh x)] ))",
        "echo $[a[i]]",
        "i='a[$(sh x)]'; echo ${b[i]}",
        "echo ${b[$i]}",
        "echo ${b[i+1]}",
        "echo ${#b[i]}",
        "echo ${x:i}",
        "echo ${x:1:n}",
        "echo ${x:-${b[i]}}",
        "echo ${!x}",
        "echo ${!x[1]}",
        "x='$(sh x)'; echo ${x@P}",
        "declare -i n; n='a[$(sh x)]'",
        "local -i n=1",
        "a[i]=1",
        "a[$(sh x)]=1 ls",
        "for ((i=0; i<3; i++)); do ls; done",
        "[[ -v 'a[$(sh x)]' ]]",
        "[[ a[i] -eq 1 ]]",
    ],
    "git_config": [
        "git -c include.path=evil.cfg status",
        "git -cinclude.path=evil.cfg status",
        "git --config-env=include.path=X status",
        "git -c includeIf.gitdir:/.path=x status",
        "cd re?o && git status",
        "cd 're[p]o' && git log",
        "git -C 're*o' status",
        "git -C re?o log -p",
        "git --git-dir=.g?t status",
        "git --git-dir='.g[i]t' log",
        # writes into a .git through a glob (`>> repo/.gi?/config`: PLANTING, 41.1), after
        # bash's brace expansion and with its `[^...]`
        "printf '[core]\\n\\tfsmonitor = sh x\\n' >> repo/.{g,x}it/config",
        "printf x >> repo/.{f..h}it/config",
        "printf x >> repo/.{A..Z}IT/config",
        "tee -a repo/.g[^x]t/config < x",
        "echo 'hooks: [sh x]' > mi?e.toml",
        "git config include.path x",
        "git config --add include.path x",
        "git config -f .git/config includeIf.gitdir:/.path x",
        "git -C sub/../re* status",
        "cd $(ls -d re*) && git status",
    ],
}

ORDINARY = [
    "ls",
    "ls -la",
    "ls -lah src/",
    "ls -R docs | head -50",
    "ls -1 *.py",
    "pwd",
    "cat README.md",
    "cat -n src/main.py",
    "head -n 40 src/app.py",
    "head -20 notes.md",
    "tail -n 100 logs/app.log",
    "wc -l src/*.py",
    "wc -w todo.md",
    "grep -rn TODO .",
    "grep -rn 'def main' --include='*.py' src",
    "grep -ril error logs/ | head",
    "grep -c import src/app.py",
    "grep -E '^(class|def) ' src/app.py",
    "rg -n 'fn main' src",
    "find . -name '*.py' -type f",
    "find . -maxdepth 2 -type d",
    "find src -name '*.test.js' | wc -l",
    "find . -type f -newer setup.py | head",
    "find . -name '*.md' -print0 | xargs -0 wc -l",
    "tree -L 2",
    "du -sh .",
    "du -sh * | sort -h",
    "df -h",
    "stat README.md",
    "file data.bin",
    "git status",
    "git status --short",
    "git log --oneline -10",
    "git log -p -3 -- src/app.py",
    "git log --stat --since='2 weeks ago'",
    "git diff",
    "git diff --stat HEAD~3",
    "git diff main...feature -- docs",
    "git show HEAD",
    "git show --name-only HEAD~1",
    "git branch -a",
    "git remote -v",
    "git blame src/app.py",
    "git ls-files | head",
    "git rev-parse --abbrev-ref HEAD",
    "git stash list",
    "git tag",
    "git shortlog -sn",
    "git config user.email",
    "git config --get remote.origin.url",
    "git -C sub log -1",
    "git --no-pager log -5",
    "sort names.txt | uniq -c | sort -rn | head",
    "cut -d, -f1 data.csv | sort -u",
    "awk -F, '{print $2}' data.csv",
    "awk '{s+=$1} END {print s}' nums.txt",
    "sed -n '10,20p' src/app.py",
    "sed 's/foo/bar/g' input.txt",
    "diff -u old.txt new.txt",
    "cmp a.bin b.bin",
    "md5sum *.tar.gz",
    "sha256sum dist/app.whl",
    "jq '.dependencies' package.json",
    "jq -r '.version' package.json",
    "python3 --version",
    "node --version",
    "which python3",
    "command -v git",
    "type ls",
    "uname -a",
    "date",
    "date +%Y-%m-%d",
    "whoami",
    "id",
    "env",
    "printenv PATH",
    "echo $HOME",
    "echo \"$PATH\" | tr ':' '\\n'",
    "echo ${#arr[@]} ${arr[0]} ${name:-none} ${s:1:3} ${s: -2}",
    "printf '%s\\n' a b c",
    "printf '%s\\n' FOO BAR",
    "test -f setup.py && echo yes",
    "[ -d .git ] && git status",
    "[ -v HOME ] && echo set",
    "test -v name",
    'for f in *.py; do wc -l "$f"; done',
    'for f in src/*.js; do echo "== $f"; head -3 "$f"; done',
    "for i in 1 2 3; do echo $i; done",
    'while read -r line; do echo "$line"; done < list.txt',
    "while read -r a b; do echo $b; done < pairs.txt",
    'while IFS= read -r line; do echo "$line"; done < list.txt',
    'IFS=, read -r a b <<< "x,y"; echo "$b"',
    "read -r first < list.txt; echo $first",
    "n=$(wc -l < list.txt); echo $n",
    "x=1; echo $x",
    'name=world; echo "hello $name"',
    "cd src && ls",
    "cd docs; grep -l api *.md",
    "(cd src && ls)",
    "ls | head -5",
    "cat a.txt b.txt | sort | uniq",
    "ps aux | grep python",
    "free -h",
    "nproc",
    "uptime",
    "seq 1 5",
    "sleep 1",
    "tar -tzf archive.tar.gz | head",
    "zcat log.gz | head",
    "base64 -d <<< aGk=",
    "xxd data.bin | head",
    "od -c small.bin",
    "strings binary | head",
    "nl -ba src/app.py | sed -n '5,15p'",
    "column -t -s, data.csv",
    "less README.md",
    "man ls",
    "bash -c 'ls -la'",
    "sh -c 'echo hi'",
    "timeout 10 ls -R",
    "time ls",
    "nice -n 10 grep -r foo .",
    "env LC_ALL=C sort names.txt",
    "LC_ALL=C sort names.txt",
    "TZ=UTC date",
    "NO_COLOR=1 ls",
    "FOO=1 ls",
    "watch -n 5 ls",
    "xargs -n1 echo < list.txt",
    "basename /a/b/c.txt",
    "dirname src/app.py",
    "realpath .",
    "readlink -f link",
    "export",
    "declare -p",
    "set -euo pipefail; ls",
    "set -e; ls",
    "set -x; ls",
    "local -a arr",
    "true",
    "touch file{1..3}.txt",
    "mkdir -p src/{a,b}/c",
    "cp notes.{md,bak}",
    "echo done",
]
"""What a model sends every day: each runs without a question."""


@pytest.fixture(scope="module")
def policy() -> CommandPolicy:
    return load_command_policy()


def classify(policy: CommandPolicy, command: str) -> CommandVerdict:
    return policy.classify(command, workspace=WS, home=HOME)


CASES = [
    pytest.param(command, id=f"{family}-{i}")
    for family, commands in HIDDEN_CODE.items()
    for i, command in enumerate(commands)
]


@pytest.mark.parametrize("command", CASES)
def test_code_hidden_in_a_read_only_command_asks(policy: CommandPolicy, command: str) -> None:
    verdict = classify(policy, command)
    assert verdict.action in ("ask", "deny"), (command, verdict)
    assert verdict.command_class != "read_only" or verdict.secrets, (command, verdict)


@pytest.mark.parametrize("command", READ_ONLY_CODE)
def test_the_sandbox_corpus_of_hidden_code_asks(policy: CommandPolicy, command: str) -> None:
    # tests/integration/test_sandbox_view.py runs them in the sandbox too
    assert classify(policy, command).action == "ask", command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_still_run_unasked(policy: CommandPolicy, command: str) -> None:
    verdict = classify(policy, command)
    assert verdict.action == "allow", (command, verdict.reasons)


def test_each_family_is_covered_by_cases_of_its_own() -> None:
    assert all(len(commands) >= 10 for commands in HIDDEN_CODE.values())
    assert len(ORDINARY) >= 120


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("env --sp='sh x'", "sh runs code the policy cannot read"),
        ("env --frobnicate ls", "env: option --frobnicate is not known to the policy"),
        ("env --ch=/ ls", "env --chdir runs the command in another folder"),
        ("watch --frob ls", "watch: option --frob is not known to the policy"),
        ("bash -lc true", "bash -lc reads profile or rc files"),
        ("zsh -c ls", "zsh reads its rc files at every start"),
        ("for PAGER in x; do :; done", "PAGER= changes which code runs"),
        ("for MY_HOOK in x; do :; done", "for sets MY_HOOK, a variable the commands after"),
        ("read -r X < f", "read sets X, a variable the commands after it may obey"),
        ("export lowercase=1", "export puts lowercase in the environment of every command"),
        ("set -a", "set -a puts every variable set after it in the environment"),
        ("test -v 'a[$(id)]'", "bash evaluates the subscript of 'a[$(id)]' as arithmetic"),
        ("echo ${!x}", "${!x} expands a variable named at run time"),
        ("echo ${x@P}", "${x@P} expands the variable as a prompt"),
        ("((x=1))", "((...)) evaluates arithmetic, which can run commands"),
        ("let x=1", "let evaluates arithmetic, which can run commands"),
        ("declare -i n", "declare -i makes later assignments arithmetic"),
        ("mapfile -C cb a < f", "mapfile -C runs a command"),
        ("cd re?o && git status", "git works in a repository known only when it runs"),
    ],
)
def test_reasons_say_what_hides_the_code(policy: CommandPolicy, command: str, reason: str) -> None:
    reasons = classify(policy, command).reasons
    assert any(reason in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("value", "runs"),
    [
        ("x", False),
        ("a[0]", False),
        ("a[-1]", False),
        ("a[@]", False),
        ("#a[*]", False),
        ("x:1:2", False),
        ("x: -2", False),
        ("x:-default", False),
        ("x:=default", False),
        ("!prefix*", False),
        ("!a[@]", False),
        ("#", False),
        ("x@Q", False),
        ("a[i]", True),
        ("a[$i]", True),
        ("#a[n]", True),
        ("x:n", True),
        ("x:1:$n", True),
        ("!x", True),
        ("x@P", True),
        ("x:-${a[i]}", True),
    ],
)
def test_parameter_arithmetic(value: str, runs: bool) -> None:
    assert (parameter_code(value) is not None) is runs, value


def test_environment_style_names() -> None:
    assert [n for n in ("PAGER", "GIT_DIR", "X1", "_X", "path", "Path", "_", "__") if
            environment_style(n)] == ["PAGER", "GIT_DIR", "X1", "_X"]  # fmt: skip
