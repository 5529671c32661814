"""OAuth 2.1 for MCP servers over HTTP, through the `mcp` SDK's own providers.

`spec` is the `oauth` block of a server in `mcp.json` (light: read with the config);
`storage` keeps a server's tokens and client registration 0600 in the data dir;
`loopback` is the one-shot listener that takes the authorization redirect; `person`
is how a person authorizes (the URL shown and opened, the redirect awaited); `provider`
builds the SDK's `httpx2.Auth` for a server. The last three import the SDK and load only
when a server starts.
"""
