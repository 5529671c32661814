// The MCP servers in the activity drawer: name, trust, state and tool count, read from
// GET /v1/mcp/servers each time the drawer opens (a server may have started or died).
// A server behind OAuth that nobody signed in to says "needs sign-in" and offers Connect:
// the sign-in opens in a new tab and comes back to DuckLM's own callback page; the list
// is read again until the server runs.

import { get, post } from "./api.js";
import { h } from "./dom.js";

const POLL_MS = 2000;
const POLL_TIMES = 150; // 5 minutes: as long as a sign-in waits for its redirect

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
        ` · ${server.trust} · ${stateText(server)} · ${server.tools} tools`,
        server.needs_sign_in ? connectButton(server.name, list) : "",
        server.error ? h("p", { class: "muted", text: server.error }) : "",
      ),
    ),
  );
}

function connectButton(name, list) {
  const button = h("button", { type: "button", testid: "mcp-connect", text: "Connect" });
  button.addEventListener("click", () => connect(name, list, button));
  return button;
}

function stateText(server) {
  if (server.needs_sign_in) return "needs sign-in";
  return server.state === "running" && server.transport === "http" ? "connected" : server.state;
}

async function connect(name, list, button) {
  // Opened on the click itself (a tab opened after an await is a blocked popup), and cut
  // off from this page: the sign-in pages are another site's.
  const tab = window.open("", "_blank");
  if (tab) tab.opener = null;
  button.disabled = true;
  let answer;
  try {
    answer = await post(`/v1/mcp/servers/${encodeURIComponent(name)}/connect`);
  } catch (error) {
    tab?.close();
    button.disabled = false;
    button.after(h("p", { class: "muted", testid: "mcp-connect-error", text: error.message }));
    return;
  }
  // Only a web page is opened: the URL comes from the server's metadata, not from DuckLM.
  const url = /^https?:\/\//i.test(answer.authorization_url ?? "") ? answer.authorization_url : null;
  if (url && tab) {
    tab.location.href = url;
  } else if (url) {
    button.after(h("a", { href: url, target: "_blank", rel: "noopener", text: "Open the sign-in page" }));
  } else {
    tab?.close();
  }
  for (let i = 0; i < POLL_TIMES && list.isConnected; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const { servers } = await get("/v1/mcp/servers").catch(() => ({ servers: [] }));
    if (servers.some((s) => s.name === name && s.state === "running")) break;
  }
  if (list.isConnected) await showMcpServers(list);
}
