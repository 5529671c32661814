"""Type-check the `ducklm` package in the tree as it is: no copy, no links.

The design card fixes the top-level folders (graph/, nodes/, tools/, server/, ...), and
pyproject.toml's `[tool.setuptools] package-dir` maps each onto `ducklm.<folder>`. mypy
names a file by the folders above it (python/mypy#10564: it cannot read setuptools'
mapping), so it would call graph/builder.py `graph.builder` while every import says
`ducklm.graph.builder`. This script hands mypy every file with the module name the one
mapping gives it, read from pyproject.toml, and mypy reports errors at the files' real
paths.

    scripts/typecheck.py [MYPY_OPTIONS ...]
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


def package_dirs() -> dict[str, Path]:
    """Each mapped package and its folder, from pyproject.toml's `package-dir`."""
    config = tomllib.loads(PYPROJECT.read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {package: ROOT / folder for package, folder in mapping.items()}


def module_name(path: Path, dirs: dict[str, Path]) -> str:
    """The import name of `path`, by the mapping whose folder holds it most closely."""
    package, folder = max(
        ((p, d) for p, d in dirs.items() if path.is_relative_to(d)),
        key=lambda item: len(item[1].parts),
    )
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def sources(dirs: dict[str, Path]) -> list[BuildSource]:
    """Every Python file of the package, named as Python imports it."""
    files = {path for folder in dirs.values() for path in folder.rglob("*.py")}
    return [BuildSource(os.path.relpath(path), module_name(path, dirs)) for path in sorted(files)]


def main(argv: list[str]) -> int:
    """Run mypy over the package with pyproject.toml's settings; the exit code says."""
    # mypy reads its options the usual way; the file list it is given is replaced below.
    _, options = process_options(
        ["--config-file", str(PYPROJECT), *argv, str(PYPROJECT.parent / "ducklm")],
        require_targets=False,
    )
    files = sources(package_dirs())
    try:
        result = build.build(files, options)
    except CompileError as error:  # a syntax error: mypy stops at once
        print("\n".join(error.messages))
        return 2
    for line in result.errors:
        print(line)
    if result.errors:
        count = sum(": error:" in line for line in result.errors)
        print(f"Found {count} errors in {len(files)} source files")
        return 1
    print(f"Success: no issues found in {len(files)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
