"""The MCP servers file: the common shape, DuckLM's keys, and errors that name what is wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ducklm.mcp.config import McpConfigError, load_mcp_config, parse_mcp_config
from ducklm.mcp.variables import UnsetVariable


def _servers(**servers: object) -> str:
    return json.dumps({"mcpServers": servers})


def test_stdio_and_http_servers_in_the_common_shape() -> None:
    text = _servers(
        fs={"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"A": "1"}},
        web={"url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}, "trust": "trusted"},
        off={"command": "x", "disabled": True},
    )
    fs, web, off = parse_mcp_config(text)
    assert (fs.name, fs.transport, fs.args, fs.env, fs.trusted) == (
        "fs",
        "stdio",
        ("-y", "server-filesystem", "/tmp"),
        {"A": "1"},
        False,
    )
    assert (web.transport, web.headers, web.trusted, web.active) == (
        "http",
        {"X-Key": "k"},
        True,
        True,
    )
    assert not off.active


@pytest.mark.parametrize(
    ("server", "says"),
    [
        (
            {"command": "x", "trust": "yes"},
            "server 'a': trust: Input should be 'untrusted' or 'trusted'",
        ),
        ({"command": "x", "autoApprove": []}, "server 'a': autoApprove: unknown field"),
        ({"command": "x", "url": "http://h"}, "server 'a': give either 'command' (stdio) or 'url'"),
        ({}, "server 'a': give either 'command' (stdio) or 'url'"),
        ({"url": "ftp://h"}, "server 'a': 'url' must start with http:// or https://"),
        ({"url": "http://h", "cwd": "/"}, "server 'a': 'args', 'env' and 'cwd' are for stdio"),
        ({"command": "x", "args": "one"}, "server 'a': args: Input should be a valid tuple"),
        ({"command": "x", "timeout_s": 0}, "server 'a': timeout_s: Input should be greater than 0"),
        (
            {"command": "x", "env": {"T": "${DUCK_API_TOKEN}"}},
            "server 'a': env: T: DuckLM's own DUCK_* variables are not passed to servers",
        ),
        ("npx", "server 'a': expected an object"),
    ],
)
def test_a_bad_server_names_the_server_and_the_field(server: object, says: str) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_mcp_config(_servers(a=server), "mcp.json")
    assert says in str(caught.value)
    assert "${DUCK_API_TOKEN}" not in str(caught.value)  # values are never echoed


@pytest.mark.parametrize("name", ["a__b", "", "-a", "a b", "x" * 40])
def test_server_names_fit_tool_names(name: str) -> None:
    with pytest.raises(McpConfigError, match="a server name is"):
        parse_mcp_config(_servers(**{name: {"command": "x"}}))


def test_not_json_and_not_the_shape(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{\n  nope")
    with pytest.raises(McpConfigError, match=r"mcp.json: not JSON \(line 2"):
        load_mcp_config(path)
    with pytest.raises(McpConfigError, match="expected"):
        parse_mcp_config('{"mcpServers": []}')


def test_no_file_is_no_servers(tmp_path: Path) -> None:
    assert load_mcp_config(tmp_path / "missing.json") == ()


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"servers": {"fs": {"command": "x"}}}, "'servers' is VS Code's spelling"),
        ({"mcpServers": {}, "inputs": []}, "unknown top-level key 'inputs'"),
    ],
)
def test_other_shapes_and_unknown_keys_are_refused(raw: object, says: str) -> None:
    with pytest.raises(McpConfigError, match=re.escape(says)):
        parse_mcp_config(json.dumps(raw))


@pytest.mark.parametrize(
    "server",
    [
        {"command": "x", "args": ["--token=${DUCK_API_TOKEN}"]},
        {"url": "http://h/${DUCK_API_TOKEN}/mcp"},
        {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${DUCK_API_TOKEN}"}},
    ],
)
def test_duck_variables_are_refused_everywhere(server: object) -> None:
    with pytest.raises(McpConfigError, match=r"DuckLM's own DUCK_\* variables"):
        parse_mcp_config(_servers(s=server))


def test_variables_fill_env_headers_args_and_url() -> None:
    (web,) = parse_mcp_config(
        _servers(web={"url": "${BASE:-http://127.0.0.1:9}/mcp", "headers": {"A": "Bearer ${KEY}"}})
    )
    (cli,) = parse_mcp_config(
        _servers(cli={"command": "x", "args": ["${DIR}"], "env": {"K": "${KEY}"}})
    )
    environ = {"KEY": "k1", "DIR": "/srv"}
    assert web.expanded(environ).url == "http://127.0.0.1:9/mcp"
    assert web.expanded(environ).headers == {"A": "Bearer k1"}
    assert web.expanded({**environ, "BASE": "https://x"}).url == "https://x/mcp"
    assert (cli.expanded(environ).args, cli.expanded(environ).env) == (("/srv",), {"K": "k1"})
    with pytest.raises(UnsetVariable, match=r"KEY is not set \(named in env.K\)"):
        cli.expanded({"DIR": "/srv"})
