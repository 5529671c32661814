// The MCP servers in the activity drawer: name, trust, state and tool count, read from
// GET /v1/mcp/servers each time the drawer opens (a server may have started or died).

import { get } from "./api.js";
import { h } from "./dom.js";

/** Fill `list` with this server process's MCP servers; a failure is said in the list. */
export async function showMcpServers(list) {
  let servers;
  try {
    ({ servers } = await get("/v1/mcp/servers"));
  } catch (error) {
    list.replaceChildren(h("li", { class: "muted", text: `MCP servers unavailable: ${error.message}` }));
    return;
  }
  list.replaceChildren(
    ...servers.map((server) =>
      h(
        "li",
        { testid: "mcp-server", dataset: { server: server.name, state: server.state, trust: server.trust } },
        h("strong", { text: server.name }),
        ` · ${server.trust} · ${server.state} · ${server.tools} tools`,
        server.error ? h("p", { class: "muted", text: server.error }) : "",
      ),
    ),
  );
}
