#!/usr/bin/env bash
# Build agent-chat-ui as npm's create-agent-chat-app ships it (templates/vite, unchanged)
# into dist/, for tests/e2e/test_agent_chat_ui_real.py. Needs `npm ci` here first
# (scripts/system-deps.sh --test does both). Only `vite build`: the template's own
# `tsc -b` type check adds time and tells DuckLM nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
template="$here/node_modules/create-agent-chat-app/templates/vite"
rm -rf "$here/app" "$here/dist"
cp -R "$template" "$here/app"  # app/ finds ../node_modules as Node and Vite walk up
rm "$here/app/package.json"    # its dependencies are ours, pinned in ../package-lock.json
"$here/node_modules/.bin/vite" build "$here/app" --outDir "$here/dist" --logLevel error
