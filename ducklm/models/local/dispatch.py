"""Starts llama-cpp-python's server on the best CPU code this machine runs. Stdlib only.

DuckLM builds llama.cpp with `GGML_BACKEND_DL` and `GGML_CPU_ALL_VARIANTS`
(scripts/install-llama.sh): its CPU code comes as one library per instruction set (x64,
sse42, haswell, skylakex, zen4, ...), and ggml picks, at run time, the best one that this
CPU says it runs. A build tuned to the build machine died with SIGILL elsewhere; this one
runs on any x86-64 CPU and still uses AVX2 or AVX-512 where they exist.

llama-cpp-python does not load those libraries itself (it has no `ggml_backend_load_all`),
so this script does, then runs `llama_cpp.server` as `python -m` would. It must call the
very `libggml.so.0` that `libllama` linked: a wheel stores the `.so` names as copies, and
another copy has a registry of its own. A build without variants (native, or another
server) has its CPU code built in, and nothing is loaded.

Started as `python -I <this file> <server args>` (`llama.Launch.argv`), for the reasons
`ducklm.models.local.supervisor` gives.
"""

from __future__ import annotations

import ctypes
import runpy
import sys
from pathlib import Path

VARIANT_GLOB = "libggml-cpu-*.so"


def variants_dir(package_dir: Path) -> Path | None:
    """Where the wheel put the CPU variants: `bin/` beside the package, if it has them."""
    for folder in (package_dir.parent / "bin", package_dir / "lib"):
        if any(folder.glob(VARIANT_GLOB)):
            return folder
    return None


def load_cpu_backend() -> str | None:
    """Load the best CPU variant into llama.cpp's registry; the folder it came from."""
    import llama_cpp  # noqa: PLC0415  loads libllama, and with it libggml.so.0

    package_dir = Path(llama_cpp.__file__).parent
    folder = variants_dir(package_dir)
    if folder is None:
        return None
    ggml = ctypes.CDLL(str(package_dir / "lib" / "libggml.so.0"))
    ggml.ggml_backend_reg_count.restype = ctypes.c_size_t
    if ggml.ggml_backend_reg_count() > 0:
        return None  # CPU code built in: nothing to choose
    ggml.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
    ggml.ggml_backend_load_all_from_path(str(folder).encode())
    return str(folder)


def main() -> None:
    """Load the CPU code, then run llama-cpp-python's server with this process's args."""
    load_cpu_backend()
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
