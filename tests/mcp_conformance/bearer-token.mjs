// Loaded with `node --import` before the conformance suite: every HTTP request the suite
// makes to MCP_SERVER_URL's origin carries `Authorization: Bearer $MCP_BEARER_TOKEN`,
// as an MCP client configured with a token sends it. The suite's `server` command takes
// a URL only, and DuckLM's `/mcp` wants its API token. Requests elsewhere go untouched.
//
// Set as undici's global dispatcher, it serves both Node's fetch (the SDK's transport)
// and the suite's own `undici.request` (its raw Host/Origin probes).
import { Agent, setGlobalDispatcher } from 'undici';

const origin = new URL(process.env.MCP_SERVER_URL).origin;
const authorization = `Bearer ${process.env.MCP_BEARER_TOKEN}`;

function withToken(headers) {
  if (Array.isArray(headers)) {
    // undici takes flat [name, value, ...] arrays and arrays of pairs alike.
    return Array.isArray(headers[0])
      ? [...headers, ['authorization', authorization]]
      : [...headers, 'authorization', authorization];
  }
  return { ...headers, authorization };
}

setGlobalDispatcher(
  new Agent().compose((dispatch) => (options, handler) =>
    dispatch(
      String(options.origin) === origin
        ? { ...options, headers: withToken(options.headers) }
        : options,
      handler,
    ),
  ),
);
