"""Trust rules: MCP calls ask by default; after untrusted content, all but reads ask."""

from __future__ import annotations

from typing import Any

import pytest

from ducklm.tools.mcp_info import McpToolInfo
from ducklm.tools.policy import ALLOW, Verdict
from ducklm.tools.trust import Taint, assess_mcp, normalized_args, taint_of, under_taint

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
TAINT = Taint(call_id="c1", tool="wiki__page", server="wiki", reason="r", excerpt="IGNORE ALL")


def _info(trusted: bool, **hints: Any) -> McpToolInfo:
    return McpToolInfo("srv", "tool", "srv__tool", "d", trusted, hints)


def test_only_a_trusted_servers_read_only_tool_runs_unasked() -> None:
    assert assess_mcp(_info(True, **READ_ONLY), {}).action == "allow"
    assert assess_mcp(_info(False, **READ_ONLY), {}).action == "ask"  # its hints are its own claims
    assert assess_mcp(_info(True, readOnlyHint=True, openWorldHint=True), {}).action == "ask"
    assert assess_mcp(_info(True), {}).action == "ask"


def test_the_question_shows_destructive_and_the_rule_is_exact() -> None:
    verdict = assess_mcp(_info(True, destructiveHint=True), {"b": 1, "a": "x"})
    assert (
        verdict.reason
        == "tool on the MCP server srv (trusted); the server says this tool may destroy data"
    )
    assert verdict.rule_key == 'mcp:srv/tool:{"a":"x","b":1}'
    assert assess_mcp(_info(True), {"a": "x", "b": 1}).rule_key == verdict.rule_key
    assert assess_mcp(_info(True), {"a": "x", "b": 2}).rule_key != verdict.rule_key
    assert normalized_args({"a": "é"}) == '{"a":"é"}'


@pytest.mark.parametrize(
    ("name", "info", "verdict"),
    [
        ("file_write", None, ALLOW),
        ("shell_exec", None, Verdict("allow", "w", command_class="workspace_write")),
        ("shell_exec", None, Verdict("ask", "net", rule_key="shell:curl x", network=True)),
        ("srv__tool", _info(True), ALLOW),
        ("generate_code", None, ALLOW),
    ],
)
def test_under_taint_whatever_is_not_read_only_asks(
    name: str, info: McpToolInfo | None, verdict: Verdict
) -> None:
    tainted = under_taint(name, info, verdict, TAINT)
    assert tainted.action == "ask"
    assert 'the result of wiki__page (MCP server wiki) began "IGNORE ALL"' in tainted.reason
    assert under_taint(name, info, verdict, None) is verdict


@pytest.mark.parametrize(
    ("name", "info", "verdict"),
    [
        ("file_read", None, ALLOW),
        ("list_dir", None, ALLOW),
        ("shell_exec", None, Verdict("allow", "r", command_class="read_only")),
        ("srv__tool", _info(True, **READ_ONLY), ALLOW),
        ("shell_exec", None, Verdict("deny", "never", command_class="dangerous")),
    ],
)
def test_read_only_calls_and_refusals_stay_as_they_are(
    name: str, info: McpToolInfo | None, verdict: Verdict
) -> None:
    assert under_taint(name, info, verdict, TAINT) is verdict


def test_which_results_are_untrusted() -> None:
    net = Verdict("ask", "net", network=True)
    untrusted = taint_of(
        "c", "srv__tool", _info(False), ALLOW, "a  b\nc", untrusted_workspace=False
    )
    assert untrusted is not None
    assert (untrusted.server, untrusted.excerpt, untrusted.source) == (
        "srv",
        "a b c",
        "srv__tool (MCP server srv)",
    )
    assert taint_of("c", "srv__tool", _info(True), ALLOW, "x", untrusted_workspace=False) is None
    assert taint_of("c", "shell_exec", None, net, "x", untrusted_workspace=False) is not None
    assert taint_of("c", "shell_exec", None, ALLOW, "x", untrusted_workspace=False) is None
    assert taint_of("c", "file_read", None, ALLOW, "x", untrusted_workspace=False) is None
    assert taint_of("c", "file_read", None, ALLOW, "x", untrusted_workspace=True) is not None
    assert taint_of("c", "file_write", None, ALLOW, "x", untrusted_workspace=True) is None
    long = taint_of("c", "srv__tool", _info(False), ALLOW, "z" * 999, untrusted_workspace=False)
    assert long is not None and len(long.excerpt) == 160


def test_only_a_trusted_read_gets_no_workspace_checkpoint() -> None:
    from ducklm.tools.policy import may_change_workspace

    assert not may_change_workspace("srv__tool", assess_mcp(_info(True, **READ_ONLY), {}))
    assert may_change_workspace("srv__tool", assess_mcp(_info(False, **READ_ONLY), {}))
    assert may_change_workspace("srv__tool", assess_mcp(_info(True), {}))


def test_every_shell_command_gets_a_workspace_checkpoint_whatever_its_class() -> None:
    from ducklm.tools.policy import may_change_workspace

    read = Verdict("allow", "read only command", command_class="read_only")
    assert may_change_workspace("shell_exec", read), "`sort -o f` is classed read_only"
    assert not may_change_workspace("shell_exec", Verdict("deny", "no", command_class="read_only"))
    assert not may_change_workspace("file_read", ALLOW)
