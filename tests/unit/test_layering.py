"""The floors stack: nothing imports upward, and no two folders import each other.

Read from the source (with pyproject's package-dir mapping), not from `sys.modules`, so
a lazy import inside a function counts as much as one at the top. Imports under
`TYPE_CHECKING` do not run and are left out. The one exception is the state schema
(`ducklm.graph.state`): the turn's logic, the tools and the stores read the shape of the
state the graph checkpoints, as LangGraph's own nodes do.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGE_DIRS = {package: ROOT / folder for package, folder in SETUPTOOLS["package-dir"].items()}

FLOORS: tuple[frozenset[str], ...] = (
    frozenset({"ducklm", "ducklm.server", "ducklm.cli"}),  # the doors (and the library)
    frozenset({"ducklm.runtime"}),  # the run service every door calls
    frozenset({"ducklm.graph"}),  # the StateGraph, its context and dependencies
    frozenset({"ducklm.nodes"}),
    frozenset({"ducklm.turn"}),  # the turn's logic
    frozenset(
        {
            "ducklm.tools",
            "ducklm.mcp",
            "ducklm.memory",
            "ducklm.models",
            "ducklm.learning",
            "ducklm.undo",
        }
    ),
    frozenset({"ducklm.stores"}),
    frozenset({"ducklm.config", "ducklm.kit", "ducklm.prompts", "ducklm.ui"}),  # the ground
)
DOORS = FLOORS[0]
STATE_SCHEMA = "ducklm.graph.state"


def _modules() -> dict[str, Path]:
    """Every module of the package by its import name, as the mapping lays it out."""
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join([package, *parts]).removesuffix(".__init__")
            found.setdefault(name, path)
    return found


def _folder(module: str) -> str:
    """The concern a module belongs to: `ducklm.<folder>`, or `ducklm` for the surface."""
    return ".".join(module.split(".")[:2])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that `module` imports when it runs."""

    class _Collector(ast.NodeVisitor):
        def __init__(self) -> None:
            self.names: list[str] = []

        def visit_If(self, node: ast.If) -> None:
            if _is_type_checking(node):
                for child in node.orelse:
                    self.visit(child)
            else:
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            self.names.extend(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = node.module or ""
            if node.level:
                package = module.split(".")
                if path.name != "__init__.py":
                    package = package[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([node.module] if node.module else [])])
            self.names.append(base)
            self.names.extend(f"{base}.{alias.name}" for alias in node.names)

    collector = _Collector()
    collector.visit(ast.parse(path.read_text(), str(path)))
    return {found for name in collector.names if (found := _known_prefix(name, known))}


def _known_prefix(name: str, known: set[str]) -> str:
    """The module an imported name lives in (`a.b.f` -> `a.b`), or "" outside the package."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def _edges() -> dict[tuple[str, str], list[str]]:
    """Folder -> folder imports at run time, each with the module pairs behind it."""
    modules = _modules()
    known = set(modules)
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, path in modules.items():
        for target in _run_time_imports(module, path, known):
            if _folder(module) != _folder(target) and target != STATE_SCHEMA:
                edges[_folder(module), _folder(target)].append(f"{module} -> {target}")
    return edges


def _floor(folder: str) -> int:
    for level, floor in enumerate(FLOORS):
        if folder in floor:
            return level
    raise AssertionError(f"{folder} is on no floor: add it to FLOORS in {__file__}")


def test_every_folder_is_on_a_floor() -> None:
    for module in _modules():
        _floor(_folder(module))


def test_nothing_imports_a_floor_above_it() -> None:
    upward = {
        pair: sorted(found) for pair, found in _edges().items() if _floor(pair[1]) < _floor(pair[0])
    }
    assert upward == {}


def test_no_two_folders_import_each_other() -> None:
    edges = _edges()
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    cycles = []
    for source, target in edges:
        if _reaches(graph, target, source):
            cycles.append((source, target, sorted(edges[source, target])))
    assert cycles == []


def test_no_lower_floor_imports_a_door() -> None:
    into_doors = {
        pair: sorted(found)
        for pair, found in _edges().items()
        if pair[1] in DOORS and pair[0] not in DOORS
    }
    assert into_doors == {}


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The reader finds a lazy import inside a function and skips `TYPE_CHECKING`."""
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ducklm.server import app\n"
        "def f():\n    from ducklm.runtime.facade import DuckLM\n"
    )
    known = {"ducklm.server", "ducklm.server.app", "ducklm.runtime.facade", "ducklm.runtime"}
    assert _run_time_imports("ducklm.stores.m", source, known) == {"ducklm.runtime.facade"}


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return False


GRAPH_CALLS = frozenset({"aget_state", "aget_state_history", "aupdate_state", "astream", "ainvoke"})


def test_doors_reach_the_graph_and_the_vault_only_through_the_facade() -> None:
    """A door calls `DuckLM`'s methods; only the run service touches the graph itself."""
    reached = []
    for module, path in _modules().items():
        if _folder(module) not in DOORS - {"ducklm"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and (
                node.attr in GRAPH_CALLS or node.attr == "vault"
            ):
                reached.append(f"{module}:{node.lineno} .{node.attr}")
    assert reached == []


CIRCLE_FREE = ("ducklm.mcp", "ducklm.cli.mcp", "ducklm.runtime", "ducklm.stores")
"""Module prefixes whose modules import no circle, `TYPE_CHECKING` imports counted (a type
named there is a dependency all the same: six `ducklm.mcp` modules once circled by them, as
did `runtime/facade.py` with `runtime/exports/importing.py` and `stores/relay/journal.py`
with `publisher.py`)."""


def _every_import(module: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules `module` names in any import, type-checking ones too."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            base = node.module or ""
            names.extend([base, *(f"{base}.{alias.name}" for alias in node.names)])
    return {found for name in names if (found := _known_prefix(name, known)) != module and found}


def test_no_circle_among_the_modules_of_circle_free_folders() -> None:
    modules = {m: p for m, p in _modules().items() if m.startswith(CIRCLE_FREE)}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        graph[module] = {t for t in _every_import(module, path, set(modules)) if t in modules}
    circles = sorted(
        (source, target)
        for source in graph
        for target in graph[source]
        if _reaches(graph, target, source)
    )
    assert circles == []
