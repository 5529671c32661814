"""MCP: tools from other servers, under DuckLM's policy, approvals and audit.

`config` reads the servers file, `server` keeps one server's session open (and restarts
it), `servers` holds them all, `tools` adapts their tools to `<server>__<tool>`,
`selection` picks the ones a turn offers when they do not all fit.
"""
