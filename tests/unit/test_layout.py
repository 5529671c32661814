"""The house: a file's path tells its import path, and pyproject packages every folder."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGE_DIRS = {package: ROOT / folder for package, folder in SETUPTOOLS["package-dir"].items()}


def _package_folders() -> dict[str, Path]:
    """Every folder with an `__init__.py`, by the import name the mapping gives it."""
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for init in folder.rglob("__init__.py"):
            parts = init.parent.relative_to(folder).parts
            found[".".join([package, *parts])] = init.parent
    return found


def test_pyproject_lists_every_package() -> None:
    assert sorted(SETUPTOOLS["packages"]) == sorted(_package_folders())


def test_every_module_imports_from_the_file_its_name_says() -> None:
    wrong = []
    for package, folder in _package_folders().items():
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            spec = importlib.util.find_spec(name)
            if spec is None or Path(spec.origin or "").resolve() != path.resolve():
                wrong.append((name, str(path.relative_to(ROOT)), spec and spec.origin))
    assert wrong == []


def test_ducklm_holds_subpackages_and_the_library_surface_only() -> None:
    flat = sorted(p.name for p in (ROOT / "ducklm").glob("*.py"))
    assert flat == ["__init__.py"]
