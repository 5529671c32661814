#!/usr/bin/env bash
# Type-check the `ducklm` package as it is installed: setuptools maps graph/, nodes/,
# tools/ ... onto ducklm.* at import time, which mypy cannot follow, so mypy reads a
# tree of links laid out the way Python imports it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree="$root/build/typecheck"
rm -rf "$tree" && mkdir -p "$tree"
cp -rs "$root/ducklm" "$tree/ducklm"
for pkg in graph nodes tools server config prompts; do
  # -n: if a concurrent run already made the link, replace it; never link inside it.
  ln -sfn "$root/$pkg" "$tree/ducklm/$pkg"
done
cd "$tree"
exec "${MYPY:-$root/.venv/bin/mypy}" --config-file "$root/pyproject.toml" -p ducklm "$@"
