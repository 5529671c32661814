"""The secret scan: credentials found by content become markers that say what and where.

What every reader's result goes through (`tools/secret_scan/`, applied by the tool step);
the readers themselves are tested in tests/integration/test_secret_readers.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ducklm.tools.commands.policy import load_command_policy
from ducklm.tools.policy import PolicyEnv, assess
from ducklm.tools.secret_scan import keywords
from ducklm.tools.secret_scan.hide import MAX_SCAN_CHARS, hide_secrets
from tests.support import secret_canaries as c

CASES = [
    (".envrc", [("AWS access key", 1), ("GitHub token", 2)]),
    (".aws/credentials", [("AWS access key", 2), ("AWS secret key", 3), ("token", 4)]),
    (".docker/config.json", [("credential", 4)]),
    (".kube/config", [("key", 4), ("token", 5)]),
    ("prod.tfvars", [("password", 2), ("token", 3)]),
    (".htpasswd", [("password hash", 1)]),
    ("wp-config.php", [("password", 3), ("credential", 4)]),
    ("site/settings.py", [("secret", 2)]),
    ("keys/deploy.txt", [("private key", 1)]),
    ("notes/chat.md", [("Google API key", 1), ("Slack token", 2)]),
]


@pytest.mark.parametrize(("name", "expected"), CASES, ids=[name for name, _ in CASES])
def test_each_format_becomes_a_marker_with_its_kind_and_line(
    name: str, expected: list[tuple[str, int]]
) -> None:
    hidden = hide_secrets(c.FILES[name], source=name)
    assert hidden.markers == tuple(
        f"[secret hidden: {kind}, {name} line {line}]" for kind, line in expected
    )
    assert [k for k, v in c.CANARIES.items() if v in hidden.text] == []


def test_only_the_value_is_hidden_and_the_rest_stays() -> None:
    hidden = hide_secrets(c.FILES[".aws/credentials"], source=".aws/credentials")
    lines = hidden.text.splitlines()
    assert lines[0] == "[default]"
    assert (
        lines[2]
        == "aws_secret_access_key = [secret hidden: AWS secret key, .aws/credentials line 3]"
    )


def test_a_private_key_block_is_hidden_whole_and_what_follows_stays() -> None:
    text = c.FILES["keys/deploy.txt"] + "after the key\n"
    hidden = hide_secrets(text)
    assert hidden.text == "[secret hidden: private key, output line 1]\nafter the key\n"


def test_places_in_grep_lines_and_in_a_diff_name_the_file_and_its_line() -> None:
    grep = f"src/app.py:12: password = 'Gr3p-Canary-Pw!'\n{'x' * 10}\n"
    assert hide_secrets(grep).markers == ("[secret hidden: password, src/app.py line 12]",)
    diff = (
        "commit 0123456789abcdef0123456789abcdef01234567\n\n    add env\n\n"
        "diff --git a/.env b/.env\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1,3 @@\n"
        + "".join(f"+{line}\n" for line in c.ENV.splitlines())
        + f"commit 1123456789abcdef0123456789abcdef01234567\n\n    token={c.TF_TOKEN}\n"
    )
    assert hide_secrets(diff).markers == (
        "[secret hidden: Stripe key, .env line 2]",
        "[secret hidden: password in a URL, .env line 3]",
        "[secret hidden: token, output line 14]",  # a commit message after the diff
    )


def test_a_remote_url_keeps_its_host_and_loses_its_token() -> None:
    line = f"origin\thttps://x-access-token:{c.REMOTE_TOKEN}@github.com/o/r.git (fetch)\n"
    hidden = hide_secrets(line)
    assert c.REMOTE_TOKEN not in hidden.text
    assert hidden.text.endswith("@github.com/o/r.git (fetch)\n")


ORDINARY = [
    "password = get_password()",
    "token = self.token",
    "    token_number = self.tokens_taken+len(self.tokens)",
    'fetch(url, { credentials: "same-origin" })',
    "for _, secret in secrets:\n    print(secret)",
    "const password = this.input.value;",
    'env = {"DUCK_API_TOKEN": first.token}',
    "DUCK_DATABASE_URL=postgresql://user:password@host:5432/db",
    'proxy_url="socks5h://<username>:<password>@proxy-host"',
    'url = httpx.URL("https://jo%40email.com:a%20secret@example.com")',
    ":param auth: (optional) Auth tuple to enable Basic/Digest/Custom HTTP Auth.",
    "api_key: str | None = None",
    'SECRET_KEY = os.environ["SECRET_KEY"]',
    "# Account SID (ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx)",
    "token_url = https://example.com/oauth/token",
    'password = "${DB_PASSWORD}"',
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_gets_no_marker(text: str) -> None:
    assert hide_secrets(text + "\n").markers == ()


def test_every_name_of_the_library_is_found_by_a_root() -> None:
    """The line search uses `str.find` on roots: each keyword name must contain one."""
    from detect_secrets.plugins.keyword import DENYLIST

    names = [*DENYLIST, *keywords._OWN_NAMES]
    missed = [n for n in names if not any(root in n for root in keywords._ROOTS)]
    assert missed == []


def test_entropy_test_keeps_random_values_and_drops_repeats() -> None:
    assert hide_secrets("password = 'aaaaaaaaaaaa'\n").markers == ()
    assert hide_secrets("password = 'k9#Lq2!vZ8@m'\n").markers != ()


def test_a_huge_text_is_cut_before_the_scan_and_its_tail_is_scanned() -> None:
    text = "x\n" * MAX_SCAN_CHARS + f"token = {c.TF_TOKEN}\n"
    hidden = hide_secrets(text)
    assert c.TF_TOKEN not in hidden.text
    assert "chars cut before the secret scan" in hidden.text
    assert len(hidden.text) < MAX_SCAN_CHARS + 200


def test_file_read_of_a_secret_name_asks_by_its_real_path(tmp_path: Path) -> None:
    (tmp_path / ".env.local").write_text("PIN=4711\n")
    (tmp_path / "notes.txt").symlink_to(".env.local")
    (tmp_path / "readme.md").write_text("hello\n")
    env = PolicyEnv(workspace=tmp_path, commands=load_command_policy())
    for path in (".env.local", str(tmp_path / ".env.local"), "notes.txt"):
        verdict = assess("file_read", {"path": path}, env)
        assert (verdict.action, verdict.secrets) == ("ask", True), path
        assert verdict.reason == "reads secrets: .env.local"
    assert assess("file_read", {"path": "readme.md"}, env).action == "allow"
    assert assess("file_read", {"path": "../outside"}, env).action == "allow"  # the tool refuses
