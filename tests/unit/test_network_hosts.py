"""The hosts a network command's card approves, and the proxy's rules for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ducklm.tools.commands.hosts import describe_hosts, network_hosts
from ducklm.tools.commands.policy import load_command_policy
from ducklm.tools.policy import PolicyEnv, assess
from ducklm.tools.sandbox.egress import ANY_HOST, address_refusal, host_allowed

POLICY = load_command_policy()

HOSTS = [
    ("curl example.org", ("example.org",)),
    ("curl -sS -o page.html https://Example.ORG./x?y=1", ("example.org",)),
    ("wget -q http://user:pw@files.example.net:8080/a.tgz", ("files.example.net",)),
    ("curl --url https://api.example.com/v1", ("api.example.com",)),
    ("git clone https://github.com/a/b.git", ("github.com",)),
    ("git clone git@gitlab.com:a/b.git", ("gitlab.com",)),
    ("pip install requests", ("files.pythonhosted.org", "pypi.org")),
    ("npm view react", ("registry.npmjs.org",)),
    ("sudo -u duck timeout 5 curl http://x.example:81/", ("x.example",)),
    ("curl a.example && wget b.example/f", ("a.example", "b.example")),
    ("curl http://[2001:db8::1]:8080/", ("2001:db8::1",)),
    ("ping -c 1 10.0.0.7", ("10.0.0.7",)),
    # what the policy cannot read: any host, said so on the card
    ("curl $URL", (ANY_HOST,)),
    ("wget $(cat urls.txt)", (ANY_HOST,)),
    ("curl -K config.txt", (ANY_HOST,)),
    ("git fetch", (ANY_HOST,)),
]


@pytest.mark.parametrize(("command", "hosts"), HOSTS)
def test_the_hosts_a_command_names(command: str, hosts: tuple[str, ...], tmp_path: Path) -> None:
    assert network_hosts(POLICY, command, tmp_path) == hosts


def test_git_without_a_url_reaches_its_remotes(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = https://github.com/a/b.git\n'
        '[remote "fork"]\n\turl = git@codeberg.org:me/b.git\n'
    )
    assert network_hosts(POLICY, "git pull --rebase", tmp_path) == ("codeberg.org", "github.com")


def test_the_card_names_the_hosts(tmp_path: Path) -> None:
    env = PolicyEnv(workspace=tmp_path, commands=POLICY)
    verdict = assess("shell_exec", {"command": "curl https://example.org/x"}, env)

    assert verdict.action == "ask"
    assert verdict.network
    assert verdict.hosts == ("example.org",)
    assert "reaches only example.org" in verdict.reason


def test_the_card_says_when_there_is_no_proxy(tmp_path: Path) -> None:
    env = PolicyEnv(workspace=tmp_path, commands=POLICY, proxied=False)
    verdict = assess("shell_exec", {"command": "curl https://example.org/x"}, env)

    assert "own network" in verdict.reason
    assert describe_hosts((ANY_HOST,)).startswith("may reach any public host")


def test_a_command_without_the_network_names_no_hosts(tmp_path: Path) -> None:
    env = PolicyEnv(workspace=tmp_path, commands=POLICY)
    assert assess("shell_exec", {"command": "ls -la"}, env).hosts == ()


@pytest.mark.parametrize(
    ("host", "approved", "allowed"),
    [
        ("example.org", ("example.org",), True),
        ("www.example.org", ("example.org",), True),
        ("EXAMPLE.org.", ("example.org",), True),
        ("evilexample.org", ("example.org",), False),
        ("example.org.evil.net", ("example.org",), False),
        ("anything.net", (ANY_HOST,), True),
        ("other.org", (), False),
    ],
)
def test_which_hosts_an_approval_covers(
    host: str, approved: tuple[str, ...], allowed: bool
) -> None:
    assert host_allowed(host, approved) is allowed


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "127.9.9.9", "::1", "0.0.0.0", "::", "169.254.169.254", "fe80::1%eth0",
     "::ffff:127.0.0.1", "224.0.0.1"],
)  # fmt: skip
def test_local_addresses_are_never_reached(address: str) -> None:
    assert address_refusal(address, named=True) is not None


def test_private_addresses_need_their_name_on_the_card() -> None:
    assert address_refusal("192.168.1.10", named=False) is not None
    assert address_refusal("192.168.1.10", named=True) is None
    assert address_refusal("93.184.215.14", named=False) is None
