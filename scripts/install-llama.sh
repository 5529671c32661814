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
#   scripts/install-llama.sh VENV_PYTHON             # portable: plain x86-64, any CPU
#   LLAMA_BUILD=native scripts/install-llama.sh PY   # tuned to this CPU, faster, not portable
#   LLAMA_CMAKE_ARGS='-D...' scripts/install-llama.sh PY   # your own flags
set -euo pipefail

py="${1:?usage: install-llama.sh VENV_PYTHON}"
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
build="${LLAMA_BUILD:-portable}"

# Portable means the x86-64 baseline: every SIMD extension beyond it off (GGML_NATIVE=OFF
# alone still turns AVX2, FMA and F16C on, which older or emulated CPUs lack).
# llama-cpp-python cannot load GGML_BACKEND_DL variants (it has no ggml_backend_load_all),
# so runtime dispatch is not an option with it; docs/architecture.md has the numbers.
case "$build" in
  portable) flags="-DGGML_NATIVE=OFF -DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_BMI2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_AVX512=OFF" ;;
  native) flags="-DGGML_NATIVE=ON" ;;
  *) echo "install-llama.sh: LLAMA_BUILD is portable or native, not '$build'" >&2; exit 2 ;;
esac
flags="${LLAMA_CMAKE_ARGS:-$flags}"
# The x86 switches mean nothing elsewhere: there, portable is GGML_NATIVE=OFF alone.
if [ -z "${LLAMA_CMAKE_ARGS:-}" ] && [ "$build" = portable ]; then
  case "$(uname -m)" in x86_64 | amd64) ;; *) flags="-DGGML_NATIVE=OFF" ;; esac
fi

tag="$("$py" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}-{sysconfig.get_platform()}")')"
key="$(printf '%s|%s|%s' "$version" "$flags" "$tag" | sha256sum | cut -c1-16)"
cache="${DUCK_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ducklm/wheels}/llama-cpp-python-$version-$key"

prefix="$("$py" -c 'import sys; print(sys.prefix)')"
marker="$prefix/.ducklm-llama-build"
if [ -f "$marker" ] && [ "$(head -1 "$marker")" = "$key" ] \
  && "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llama_cpp") is None)'; then
  exit 0
fi

if ! compgen -G "$cache/*.whl" >/dev/null; then
  echo "Building llama-cpp-python $version ($build: $flags); about 10 minutes, once." >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  CMAKE_ARGS="$flags" FORCE_CMAKE=1 "$py" -m pip wheel --quiet --no-cache-dir --no-deps \
    --no-binary llama-cpp-python -w "$tmp" "llama-cpp-python==$version"
  mkdir -p "$cache"
  mv "$tmp"/*.whl "$cache/"
fi

whl="$(ls "$cache"/*.whl | head -1)"
# --force-reinstall: a venv may hold a build with other flags under the same version.
"$py" -m pip install --quiet --force-reinstall --no-deps "$whl"
"$py" -m pip install --quiet "$whl[server]"
# What `ducklm doctor` reports, and what the check above compares.
printf '%s\n%s\n%s\n' "$key" "$build" "$flags" > "$marker"
