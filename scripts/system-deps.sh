#!/usr/bin/env bash
# Debian packages DuckLM needs beside its Python ones: bubblewrap (the command sandbox).
# Installs what is missing; without root or sudo, says what to install instead.
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
elif command -v sudo >/dev/null 2>&1; then
  sudo apt-get update -qq && sudo apt-get install -y -qq "${need[@]}"
else
  echo "DuckLM: please install ${need[*]} (apt-get install ${need[*]}); until then shell" \
       "commands that write or use the network will ask first." >&2
fi
