#!/usr/bin/env bash
# Installs llama-cpp-python (the local model server of DuckLM's `local` extra) into a venv,
# built so that it runs on the CPU it lands on.
#
# Why not plain `pip install llama-cpp-python`: llama.cpp's default build is tuned to the
# build machine (GGML_NATIVE), and pip's wheel cache keys a build on the source archive
# alone, not on CMAKE_ARGS. A native build made on one machine was reused on another and
# died there with SIGILL (exit 132) on the first completion. So this script builds with
# explicit flags, never through pip's cache, and keeps the wheel in a cache of its own
# whose key holds the version, the flags, the Python tag and the platform: a build made
# with other flags is never picked up.
#
#   scripts/install-llama.sh VENV_PYTHON             # portable: any x86-64 CPU, best code chosen at run time
#   LLAMA_BUILD=native scripts/install-llama.sh PY   # tuned to this CPU, faster, not portable
#   LLAMA_CMAKE_ARGS='-D...' scripts/install-llama.sh PY   # your own flags
#   scripts/install-llama.sh --wheel-only PY         # build (or find) the wheel, print its path
set -euo pipefail

wheel_only=0
if [ "${1:-}" = "--wheel-only" ]; then wheel_only=1; shift; fi
py="${1:?usage: install-llama.sh [--wheel-only] VENV_PYTHON}"
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
build="${LLAMA_BUILD:-portable}"

# Portable means runtime dispatch: llama.cpp's CPU code is built once per x86-64 level
# (x64, sse42, haswell, skylakex, icelake, zen4, ...; GGML_CPU_ALL_VARIANTS) as libraries
# that ggml picks from at run time (GGML_BACKEND_DL), by what the CPU says it runs. It
# runs on any x86-64 CPU and still uses AVX2/AVX-512 where they exist.
# llama-cpp-python cannot load those libraries itself: ducklm/models/local/dispatch.py does.
# The build takes longer (each variant compiles ggml's CPU code again): about 12 minutes
# of CPU here, once.
case "$build" in
  portable) flags="-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON" ;;
  native) flags="-DGGML_NATIVE=ON" ;;
  *) echo "install-llama.sh: LLAMA_BUILD is portable or native, not '$build'" >&2; exit 2 ;;
esac
flags="${LLAMA_CMAKE_ARGS:-$flags}"
# The variants are x86's: elsewhere portable is GGML_NATIVE=OFF alone.
if [ -z "${LLAMA_CMAKE_ARGS:-}" ] && [ "$build" = portable ]; then
  case "$(uname -m)" in x86_64 | amd64) ;; *) flags="-DGGML_NATIVE=OFF" ;; esac
fi

tag="$("$py" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}-{sysconfig.get_platform()}")')"
key="$(printf '%s|%s|%s' "$version" "$flags" "$tag" | sha256sum | cut -c1-16)"
cache="${DUCK_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ducklm/wheels}/llama-cpp-python-$version-$key"

prefix="$("$py" -c 'import sys; print(sys.prefix)')"
marker="$prefix/.ducklm-llama-build"
if [ "$wheel_only" = 0 ] && [ -f "$marker" ] && [ "$(head -1 "$marker")" = "$key" ] \
  && "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llama_cpp") is None)'; then
  exit 0
fi

if ! compgen -G "$cache/*.whl" >/dev/null; then
  echo "Building llama-cpp-python $version ($build: $flags); 10-20 minutes, once." >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  CMAKE_ARGS="$flags" FORCE_CMAKE=1 "$py" -m pip wheel --quiet --no-cache-dir --no-deps \
    --no-binary llama-cpp-python -w "$tmp" "llama-cpp-python==$version"
  mkdir -p "$cache"
  mv "$tmp"/*.whl "$cache/"
fi

whl="$(ls "$cache"/*.whl | head -1)"
if [ "$wheel_only" = 1 ]; then echo "$whl"; exit 0; fi
# --force-reinstall: a venv may hold a build with other flags under the same version.
"$py" -m pip install --quiet --force-reinstall --no-deps "$whl"
"$py" -m pip install --quiet "$whl[server]"
# What `ducklm doctor` reports, and what the check above compares.
printf '%s\n%s\n%s\n' "$key" "$build" "$flags" > "$marker"
