"""Skills: loading and validating skill files, selecting them for a task, rendering them."""

from __future__ import annotations

import asyncio
import re
import shutil
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ducklm.learning.skills import (
    SKILL_CUT,
    Skill,
    SkillRegistry,
    default_skills_dir,
    render_skills,
    trigger_hits,
)
from ducklm.models.tokens import estimate_tokens

SHIPPED = {"analyze_project", "fix_failing_test", "summarize_file", "tidy_workspace"}
TOOLS = ("file_read", "file_write", "list_dir", "search_files", "shell_exec")


def words(text: str) -> int:
    return len(text.split())


async def bag_of_words(texts: list[str]) -> list[list[float]]:
    """A deterministic fake embedder: word counts hashed into 64 buckets."""
    vectors = []
    for text in texts:
        vector = [0.0] * 64
        for word in re.findall(r"[a-z]+", text.lower()):
            vector[zlib.crc32(word.encode()) % 64] += 1.0
        vectors.append(vector)
    return vectors


def write_skill(folder: Path, skill_id: str, body: str) -> Path:
    path = folder / skill_id / "skill.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(body, encoding="utf-8")
    return path


def skill_yaml(skill_id: str, *, triggers: str = "[]", extra: str = "") -> str:
    return (
        f"id: {skill_id}\nname: {skill_id} name\ndescription: {skill_id} description\n"
        f"triggers: {triggers}\nprocedure:\n  - Call list_dir.\n{extra}"
    )


def make(skill_id: str, triggers: list[str], description: str = "does things") -> Skill:
    return Skill(
        id=skill_id, name=skill_id, description=description, triggers=triggers, procedure=["Go."]
    )


# Loading -----------------------------------------------------------------------------


def test_shipped_skills_load_cleanly() -> None:
    registry = SkillRegistry.load(default_skills_dir())
    assert registry.problems == []
    assert {s.id for s in registry.skills} >= SHIPPED
    for skill in registry.skills:
        assert all(step.strip() for step in skill.procedure), skill.id
        assert any(tool in " ".join(skill.procedure) for tool in TOOLS), skill.id
        # Two skills must fit the default max_skill_tokens (512) in real tokens; the
        # estimate errs high, so hold each to 300 of it.
        assert estimate_tokens(skill.render()) <= 300, skill.id


@pytest.fixture
def skills_copy(tmp_path: Path) -> Path:
    """The shipped skills beside a proposal file and a hidden folder, which are not skills."""
    folder = tmp_path / "skills"
    shutil.copytree(default_skills_dir(), folder)
    (folder / "_proposals").mkdir(exist_ok=True)
    (folder / "_proposals" / "abc.yaml").write_text("patch: not a skill\n")
    (folder / ".hidden").mkdir()
    return folder


async def test_load_runs_off_the_loop_and_skips_proposals(skills_copy: Path) -> None:
    registry = await asyncio.to_thread(SkillRegistry.load, skills_copy)
    assert registry.problems == []
    assert {s.id for s in registry.skills} >= SHIPPED
    assert registry.get("fix_failing_test") is not None
    assert registry.get("nope") is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (skill_yaml("bad", extra="colour: red\n"), "colour: Extra inputs are not permitted"),
        (skill_yaml("bad", triggers="test"), "triggers: Input should be a valid list"),
        (skill_yaml("bad", triggers="[404]"), "triggers.0: Input should be a valid string"),
        (skill_yaml("bad").replace(":\n  - Call list_dir.", ": []"), "procedure: List should have"),
        (skill_yaml("bad").replace("name: bad name\n", ""), "name: Field required"),
        (skill_yaml("bad").replace("id: bad", "id: Bad Skill"), "id: String should match"),
        ("id: bad\nname: [unclosed\n", "cannot read skill"),
        (skill_yaml("other"), "id 'other' differs from the folder name 'bad'"),
    ],
)
def test_broken_skill_is_reported_and_skipped(tmp_path: Path, body: str, expected: str) -> None:
    write_skill(tmp_path, "good", skill_yaml("good"))
    path = write_skill(tmp_path, "bad", body)
    registry = SkillRegistry.load(tmp_path)
    assert [s.id for s in registry.skills] == ["good"]
    [problem] = registry.problems
    assert problem.path == path
    assert expected in problem.message


def test_folder_without_skill_file_and_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    registry = SkillRegistry.load(tmp_path)
    assert registry.skills == []
    assert "no skill.yaml" in registry.problems[0].message
    missing = SkillRegistry.load(tmp_path / "nowhere")
    assert missing.skills == []
    assert "does not exist" in missing.problems[0].message


def test_problems_are_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_skill(tmp_path, "bad", "just a string")
    SkillRegistry.load(tmp_path)
    assert "skipped skill" in caplog.text
    assert "bad/skill.yaml" in caplog.text


# Selection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "hits"),
    [
        ("The failing test in test_x.py", 1),
        ("the FAILING   TEST again", 1),  # any case, any whitespace inside a phrase
        ("a failing testcase", 0),  # whole words only
        ("what is the latest release", 0),
        ("pytest: AssertionError on a failing test", 3),
    ],
)
def test_trigger_hits_on_word_boundaries(task: str, hits: int) -> None:
    skill = make("fix", ["failing test", "pytest", "AssertionError"])
    assert trigger_hits(skill, task) == hits


async def test_select_by_triggers_without_embedder() -> None:
    registry = SkillRegistry(
        skills=[make("one", ["alpha"]), make("two", ["alpha", "beta"]), make("three", ["gamma"])]
    )
    assert [s.id for s in await registry.select("alpha and beta")] == ["two", "one"]
    assert [s.id for s in await registry.select("alpha and beta", limit=1)] == ["two"]
    assert [s.id for s in await registry.select("Gamma rays")] == ["three"]
    assert await registry.select("nothing relevant") == []


async def test_shipped_skills_selected_by_triggers() -> None:
    registry = await asyncio.to_thread(SkillRegistry.load, default_skills_dir())
    cases = {
        "test_parse fails with an AssertionError": "fix_failing_test",
        "Please tidy up my workspace": "tidy_workspace",
        "Summarize notes/meeting.md": "summarize_file",
        "Give me an overview of this codebase": "analyze_project",
    }
    for task, expected in cases.items():
        assert [s.id for s in await registry.select(task, limit=1)] == [expected], task


async def test_select_by_meaning_with_threshold() -> None:
    registry = SkillRegistry(
        skills=[
            make("weather", [], "report the weather forecast rain and sun"),
            make("cooking", [], "recipes for soup bread and cakes"),
        ]
    )
    chosen = await registry.select("is the forecast rain or sun", embed=bag_of_words)
    assert [s.id for s in chosen] == ["weather"]
    strict = await registry.select("rain", embed=bag_of_words, threshold=0.99)
    assert strict == []


async def test_triggers_rank_before_meaning() -> None:
    registry = SkillRegistry(
        skills=[
            make("close", [], "bake soup bread and cakes"),
            make("named", ["oven"], "unrelated words entirely"),
        ]
    )
    chosen = await registry.select("bake bread in the oven", embed=bag_of_words, threshold=0.3)
    assert [s.id for s in chosen] == ["named", "close"]


async def test_skills_are_embedded_once() -> None:
    calls: list[list[str]] = []

    async def counting(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return await bag_of_words(texts)

    registry = SkillRegistry(skills=[make("one", []), make("two", [])])
    await registry.select("first task", embed=counting)
    await registry.select("second task", embed=counting)
    assert [len(c) for c in calls] == [2, 1, 1], "skills once, then one call per task"


async def test_failing_embedder_falls_back_to_triggers(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(texts: list[str]) -> list[list[float]]:
        raise ConnectionError("embedding server down")

    registry = SkillRegistry(skills=[make("one", ["alpha"]), make("two", [])])
    assert [s.id for s in await registry.select("alpha", embed=broken)] == ["one"]
    assert "triggers only" in caplog.text


async def test_array_embedder_like_the_memory_store() -> None:
    async def as_array(texts: list[str]) -> npt.NDArray[np.float32]:
        return np.asarray(await bag_of_words(texts), dtype=np.float32)

    registry = SkillRegistry(
        skills=[make("weather", [], "weather forecast rain sun"), make("cooking", [], "soup bread")]
    )
    chosen = await registry.select("forecast of rain", embed=as_array)
    assert [s.id for s in chosen] == ["weather"]


async def test_mismatched_dimensions_fall_back() -> None:
    calls = 0

    async def shrinking(texts: list[str]) -> list[list[float]]:
        nonlocal calls
        calls += 1
        return [[1.0] * (5 - calls) for _ in texts]

    registry = SkillRegistry(skills=[make("one", ["alpha"]), make("two", [])])
    assert [s.id for s in await registry.select("alpha", embed=shrinking)] == ["one"]


async def test_wrong_number_of_vectors_falls_back() -> None:
    async def short(texts: list[str]) -> list[list[float]]:
        return [[1.0]]

    registry = SkillRegistry(skills=[make("one", ["alpha"]), make("two", [])])
    assert [s.id for s in await registry.select("alpha", embed=short)] == ["one"]


# Rendering ---------------------------------------------------------------------------


def test_render_names_the_steps_in_order() -> None:
    skill = Skill(
        id="demo",
        name="Demo",
        description="Shows rendering.",
        triggers=["demo"],
        procedure=["Call list_dir.", "Call file_read."],
        examples=["show me"],
        notes="Be brief.",
    )
    assert skill.render() == (
        "### demo: Demo\nShows rendering.\nSteps:\n1. Call list_dir.\n2. Call file_read.\n"
        "Note: Be brief."
    )


def test_render_skills_cuts_whole_skills_first() -> None:
    first, second = make("first", []), make("second", [])
    both = render_skills([first, second], 1000, words)
    assert both == first.render() + "\n\n" + second.render()
    only_first = render_skills([first, second], words(first.render()) + 2, words)
    assert only_first == first.render()


def test_render_skills_truncates_the_last_with_a_marker() -> None:
    skill = Skill(
        id="long",
        name="Long",
        description="Many steps.",
        triggers=[],
        procedure=[f"Step number {n} does something useful." for n in range(40)],
    )
    text = render_skills([skill, make("other", [])], 60, words)
    assert words(text) <= 60
    assert text.endswith(SKILL_CUT)
    assert text.startswith("### long: Long\nMany steps.\nSteps:\n1. Step number 0")
    assert "\n\n### other" not in text


@pytest.mark.parametrize("budget", [0, 1, 5, 17, 100, 400, 2000])
def test_render_skills_always_fits(budget: int) -> None:
    registry = SkillRegistry.load(default_skills_dir())
    text = render_skills(registry.skills, budget, estimate_tokens)
    assert estimate_tokens(text) <= budget


def test_render_nothing() -> None:
    assert render_skills([], 500, words) == ""
