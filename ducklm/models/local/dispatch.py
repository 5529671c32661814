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

The one variant built with AMX (`sapphirerapids`) is left out unless `DUCK_LLAMA_AMX` is true
(`Settings.llama_amx`, passed here as the first argument `--ducklm-amx`):
on a virtual machine whose CPU reports AMX (CPUID, /proc/cpuinfo and the kernel's
permission call all say yes) its first `tileloadd` in a prompt of a few dozen tokens still
died with SIGILL, and nothing short of running an AMX instruction tells the two apart.
ggml's own loader (`ggml_backend_load_all_from_path`) would pick it there, so this script
scores the variants itself, as that loader does, and loads the best one that is allowed.
Without AMX the next best variant (zen4: AVX-512 with VNNI and BF16) runs instead.

Started as `python -I <this file> [--ducklm-amx] <server args>` (`llama.Launch.argv`), for
the reasons `ducklm.models.local.supervisor` gives. The AMX choice comes as an argument
from the process that read `Settings`: this script is stdlib only and cannot load them, and
reading `DUCK_LLAMA_AMX` from its environment would miss a `.env` that set it.
"""

from __future__ import annotations

import ctypes
import runpy
import sys
from pathlib import Path

VARIANT_GLOB = "libggml-cpu-*.so"
AMX_FLAG = "--ducklm-amx"
"""First argument when `Settings.llama_amx` allows the AMX variant; not passed on to the server."""
AMX_VARIANTS = frozenset({"sapphirerapids"})
"""ggml's CPU variants built with AMX (ggml/src/CMakeLists.txt: AMX_TILE, AMX_INT8)."""


def variants_dir(package_dir: Path) -> Path | None:
    """Where the wheel put the CPU variants: `bin/` beside the package, if it has them."""
    for folder in (package_dir.parent / "bin", package_dir / "lib"):
        if any(folder.glob(VARIANT_GLOB)):
            return folder
    return None


def load_cpu_backend(*, amx: bool) -> str | None:
    """Load the best allowed CPU variant into llama.cpp's registry; the file loaded.

    `amx` allows the AMX variant (`Settings.llama_amx`).
    """
    import llama_cpp  # noqa: PLC0415  loads libllama, and with it libggml.so.0

    package_dir = Path(llama_cpp.__file__).parent
    folder = variants_dir(package_dir)
    if folder is None:
        return None
    ggml = ctypes.CDLL(str(package_dir / "lib" / "libggml.so.0"))
    ggml.ggml_backend_reg_count.restype = ctypes.c_size_t
    if ggml.ggml_backend_reg_count() > 0:
        return None  # CPU code built in: nothing to choose
    best = best_variant(folder, amx=amx)
    if best is None:
        return None  # no variant runs here: llama.cpp says so when it finds no backend
    ggml.ggml_backend_load.restype = ctypes.c_void_p
    ggml.ggml_backend_load.argtypes = [ctypes.c_char_p]
    ggml.ggml_backend_load(str(best).encode())
    return str(best)


def variant_name(path: Path) -> str:
    """`zen4` for `libggml-cpu-zen4.so`."""
    return path.name.removeprefix("libggml-cpu-").removesuffix(".so")


def best_variant(folder: Path, *, amx: bool) -> Path | None:
    """The variant with the highest score this CPU gives it (0: it cannot run here).

    Each variant exports `ggml_backend_score`, which checks the CPU's features against
    what the variant was built with; ggml's loader picks by the same number.
    """
    best: tuple[int, Path] | None = None
    for path in sorted(folder.glob(VARIANT_GLOB)):
        if variant_name(path) in AMX_VARIANTS and not amx:
            continue
        score_fn = getattr(ctypes.CDLL(str(path)), "ggml_backend_score", None)
        if score_fn is None:
            continue
        score_fn.restype = ctypes.c_int
        score = int(score_fn())
        if score > 0 and (best is None or score > best[0]):
            best = (score, path)
    return best[1] if best else None


def main() -> None:
    """Load the CPU code, then run llama-cpp-python's server with this process's args."""
    amx = sys.argv[1:2] == [AMX_FLAG]
    if amx:
        del sys.argv[1]  # DuckLM's, not an argument of llama_cpp.server
    load_cpu_backend(amx=amx)
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
