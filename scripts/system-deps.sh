#!/usr/bin/env bash
# Debian packages DuckLM needs beside its Python ones: bubblewrap (the command sandbox);
# with --test also chromium (the browser the web-chat tests drive through Playwright) and
# postgresql (the server the PostgreSQL backend's tests run on; scripts/test-postgres.sh
# starts it), the npm MCP servers the MCP tests start (tests/mcp_servers, `npm ci`), the
# MCP conformance suite with the Node 22 it needs (tests/mcp_conformance, `npm ci`) and
# agent-chat-ui, installed and built for its browser test (tests/agent_chat_ui, `npm ci`
# then build.sh, again whenever its package-lock.json changes).
# Installs what is missing; without root or sudo, says what to install instead.
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if [ "${1:-}" = "--test" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
fi
if [ "${1:-}" = "--test" ] && command -v npm >/dev/null 2>&1; then
  servers="$(dirname "$0")/../tests/mcp_servers"
  [ -d "$servers/node_modules/@modelcontextprotocol" ] ||
    npm ci --prefix "$servers" --no-audit --no-fund --loglevel=error
  conformance="$(dirname "$0")/../tests/mcp_conformance"
  [ "$conformance/node_modules/.package-lock.json" -nt "$conformance/package-lock.json" ] ||
    npm ci --prefix "$conformance" --no-audit --no-fund --loglevel=error
  ui="$(dirname "$0")/../tests/agent_chat_ui"
  [ "$ui/node_modules/.package-lock.json" -nt "$ui/package-lock.json" ] ||
    npm ci --prefix "$ui" --no-audit --no-fund --loglevel=error
  [ "$ui/dist/index.html" -nt "$ui/node_modules/.package-lock.json" ] || "$ui/build.sh"
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
elif command -v sudo >/dev/null 2>&1; then
  sudo apt-get update -qq && sudo apt-get install -y -qq "${need[@]}"
else
  echo "DuckLM: please install ${need[*]} (apt-get install ${need[*]})." >&2
  case " ${need[*]} " in
    *" bubblewrap "*) echo "Until then shell commands that write or use the network ask first." >&2 ;;
  esac
  case " ${need[*]} " in
    *" chromium "*) echo "Until then the browser tests (tests/e2e) are skipped." >&2 ;;
  esac
  case " ${need[*]} " in
    *" postgresql "*) echo "Until then the PostgreSQL tests are skipped." >&2 ;;
  esac
fi
