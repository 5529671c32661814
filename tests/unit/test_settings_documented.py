"""Every `DUCK_*` variable has one home: a field of `Settings`, and a row of README's table.

A variable read beside `Settings` (straight from `os.environ`) escapes its validation and
`.env`; one missing from README's "## Settings" table is one nobody can find; a row for a
variable that no longer exists sends people to set something nothing reads.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from ducklm.config.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"\bDUCK_[A-Z][A-Z0-9_]*")
# The folders the `ducklm` package maps onto (pyproject's package-dir), and what runs it.
SOURCE_DIRS = ("ducklm", "graph", "nodes", "tools", "server", "config", "ui", "prompts")
OTHER_DIRS = ("scripts", "tests")
OTHER_FILES = ("Makefile", ".env.example")
TEXT_SUFFIXES = {".py", ".sh", ".yaml", ".yml", ".json", ".md", ".html", ".js", ".css", ".toml"}

NOT_SETTINGS = {
    "DUCK_TEST_DATABASE_URL": "the tests' PostgreSQL server (tests/support/postgres.py, "
    "set by the Makefile from scripts/test-postgres.sh); DuckLM itself never reads it",
    "DUCK_WHEEL_CACHE": "scripts/install-llama.sh's wheel cache folder, read by the "
    "install script before DuckLM (or its venv) exists",
    "DUCK_TEST_FRESH_PROCESSES": "the tests start each `ducklm` as a new interpreter "
    "instead of forking the zygote (tests/support/cli.py); DuckLM itself never reads it",
}
"""`DUCK_*` names that are deliberately not settings, and why."""


def settings_names() -> set[str]:
    fields = Settings.model_fields
    # No field renames its variable: the name is always the prefix and the field.
    assert all(f.alias is None and f.validation_alias is None for f in fields.values())
    return {ENV_PREFIX + name.upper() for name in fields}


def settings_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Settings\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert match, "README.md has no '## Settings' section"
    return match.group(1)


def table_rows() -> list[str]:
    """The variables README's settings table has a row for, in order."""
    rows = [line for line in settings_section().splitlines() if line.startswith("|")]
    assert rows[:2] == ["| variable | default | meaning |", "| --- | --- | --- |"], rows[:2]
    names = []
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) >= 3 and all(cells[:3]), f"a row without three cells: {row}"
        first = re.fullmatch(r"`(DUCK_[A-Z0-9_]+)`", cells[0])
        assert first, f"a row whose first cell is not one `DUCK_*` name: {row}"
        names.append(first.group(1))
    return names


def python_strings(path: Path) -> Iterator[str]:
    """The string literals of a Python file: a name in code (a regex constant of
    ducklm/mcp/config.py is called DUCK_ and more) is no variable."""
    # From Python 3.12 an f-string's text is FSTRING_MIDDLE tokens, no longer one STRING.
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in kinds:
            yield token.string


def names_used(folders: tuple[str, ...], files: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Each `DUCK_*` name in the files under `folders` (and `files`): where it appears."""
    paths = [p for folder in folders for p in sorted((ROOT / folder).rglob("*"))]
    paths += [ROOT / name for name in files]
    used: dict[str, set[str]] = {}
    for path in paths:
        if not path.is_file() or (path.suffix not in TEXT_SUFFIXES and path.parent != ROOT):
            continue
        if path.suffix == ".py":
            texts = list(python_strings(path))
        else:
            texts = [path.read_text(encoding="utf-8")]
        for name in {found for text in texts for found in NAME.findall(text)}:
            used.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return used


def test_every_setting_has_a_row_in_the_readme_table() -> None:
    missing = settings_names() - set(table_rows())
    assert not missing, f"Settings fields with no row in README's settings table: {missing}"


def test_every_row_of_the_readme_table_is_a_setting() -> None:
    rows = table_rows()
    assert len(rows) == len(set(rows)), f"rows twice: {[n for n in rows if rows.count(n) > 1]}"
    unknown = set(rows) - settings_names()
    assert not unknown, f"README's settings table names variables Settings lacks: {unknown}"


def test_every_duck_variable_in_the_source_is_a_setting() -> None:
    used = names_used(SOURCE_DIRS)
    unknown = {name: where for name, where in used.items() if name not in settings_names()}
    assert not unknown, f"DUCK_* names the source uses that are not Settings fields: {unknown}"


def test_the_exceptions_are_used_and_are_not_settings() -> None:
    used = names_used(SOURCE_DIRS + OTHER_DIRS, OTHER_FILES)
    unknown = {
        name: where
        for name, where in used.items()
        if name not in settings_names() and name not in NOT_SETTINGS
    }
    assert not unknown, f"DUCK_* names that are neither settings nor listed: {unknown}"
    stale = set(NOT_SETTINGS) - {n for n, where in used.items() if where - {_this_file()}}
    assert not stale, f"exceptions nothing uses any more: {stale}"
    assert not set(NOT_SETTINGS) & settings_names()


def test_the_readme_names_only_settings() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    unknown = set(NAME.findall(text)) - settings_names() - set(NOT_SETTINGS)
    assert not unknown, f"README.md names DUCK_* variables Settings lacks: {unknown}"


def _this_file() -> str:
    return str(Path(__file__).resolve().relative_to(ROOT))
