"""Workspaces are the person's choice: every door takes only DUCK_WORKSPACE, the folders
of DUCK_WORKSPACES, and folders inside them (`ducklm.kit.workspaces`).

Each door is tried with folders outside (`/etc`, a sibling, `..` out of an allowed one,
a symlink out, a relative path, a folder that does not exist): each is a 422 naming
DUCK_WORKSPACES, and no model is asked anything. The allowed ones run, and the run's
file lands in the folder asked for.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings
from ducklm.kit.workspaces import WorkspaceError, resolve_workspace
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

QUIET = {"critic": False, "memory": False}
REFUSED = ["etc", "sibling", "dotdot", "symlink", "relative", "missing"]
ALLOWED = ["default", "listed", "inside"]
WRITE = call("file_write", path="note.txt", content="quack")


@pytest.fixture
def folders(tmp_path: Path, workspace: Path) -> dict[str, str]:
    """Folders by name: the allowed ones and the refused ones (made before the loop runs)."""
    projects = tmp_path / "projects"
    (projects / "sub").mkdir(parents=True)
    (tmp_path / "sibling").mkdir()
    (tmp_path / "outside").mkdir()
    (projects / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    return {
        "default": str(workspace),
        "listed": str(projects),
        "inside": str(projects / "sub"),
        "etc": "/etc",
        "sibling": str(tmp_path / "sibling"),
        "dotdot": f"{projects}/../../../../../../etc",
        "symlink": str(projects / "link"),
        "relative": "projects/sub",
        "missing": str(projects / "not-made-yet"),
    }


@pytest.fixture
def server_settings(settings: Settings, tmp_path: Path, llm: ScriptedLLM) -> Settings:
    """DUCK_WORKSPACES names `projects`; memories embed on the scripted server."""
    return settings.model_copy(
        update={"workspaces": [tmp_path / "projects"], "embeddings_url": llm.base_url}
    )


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    assert "DUCK_WORKSPACES" in response.json()["detail"], response.text


async def _has_note(folder: str) -> bool:
    return await asyncio.to_thread((Path(folder) / "note.txt").is_file)


def _run(workspace: str | None = None, *, where: str = "input") -> dict[str, Any]:
    body: dict[str, Any] = {"assistant_id": "ducklm", "context": QUIET}
    values: dict[str, Any] = {"messages": [{"role": "user", "content": "write a note"}]}
    if workspace is not None:
        values["workspace"] = workspace
    body[where] = values
    return body


@pytest.mark.parametrize("name", REFUSED)
async def test_api_doors_refuse_folders_not_allowed(
    served: Served, llm: ScriptedLLM, folders: dict[str, str], name: str
) -> None:
    client, path = served.client, folders[name]
    _refused(await client.post("/v1/chat", json={"message": "hi", "workspace": path, **QUIET}))
    _refused(await client.post("/v1/chat/stream", json={"message": "hi", "workspace": path}))
    _refused(await client.post("/v1/conversations", json={"workspace": path}))
    _refused(await client.post("/v1/memory", json={"text": "Ducks.", "workspace": path}))
    _refused(await client.get("/v1/memory/search", params={"q": "ducks", "workspace": path}))
    assert llm.requests == []  # nothing ran
    assert (await client.get("/v1/conversations")).json() == []


@pytest.mark.parametrize("name", REFUSED)
async def test_agent_protocol_refuses_folders_not_allowed(
    served: Served, llm: ScriptedLLM, folders: dict[str, str], name: str
) -> None:
    client, path = served.client, folders[name]
    _refused(await client.post("/runs/wait", json=_run(path)))
    _refused(await client.post("/runs/stream", json=_run(path)))
    thread = (await client.post("/threads", json={})).json()["thread_id"]
    _refused(await client.post(f"/threads/{thread}/runs/wait", json=_run(path)))
    updates = [{"update": {"workspace": path}}, {"update": [["workspace", path]]}]
    for command in updates:
        body = {"assistant_id": "ducklm", "command": command}
        _refused(await client.post(f"/threads/{thread}/runs/wait", json=body))
    _refused(await client.post(f"/threads/{thread}/state", json={"values": {"workspace": path}}))
    batch = {"values": [{"workspace": path}]}
    _refused(await client.post(f"/threads/{thread}/state", json=batch))
    assert llm.requests == []


async def test_agent_protocol_refuses_a_workspace_that_is_not_text(served: Served) -> None:
    _refused(await served.client.post("/runs/wait", json=_run(42)))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ALLOWED)
async def test_chat_works_in_an_allowed_folder(
    served: Served, llm: ScriptedLLM, folders: dict[str, str], name: str
) -> None:
    llm.script(reply(tool_calls=[WRITE]), reply("Written."))
    body = {"message": "write a note", "workspace": folders[name], **QUIET}
    done = await served.client.post("/v1/chat", json=body)
    assert done.json()["status"] == "completed", done.text
    assert await _has_note(folders[name])
    created = await served.client.post("/v1/conversations", json={"workspace": folders[name]})
    assert created.status_code == 201
    assert created.json()["workspace"] == folders[name]
    memory = await served.client.post(
        "/v1/memory", json={"text": "Ducks.", "workspace": folders[name]}
    )
    assert memory.status_code == 201, memory.text


@pytest.mark.parametrize("name", ALLOWED)
async def test_agent_protocol_runs_in_an_allowed_folder(
    served: Served, llm: ScriptedLLM, folders: dict[str, str], name: str
) -> None:
    llm.script(reply(tool_calls=[WRITE]), reply("Written."))
    ran = await served.client.post("/runs/wait", json=_run(folders[name]))
    assert ran.status_code == 200, ran.text
    assert ran.json()["workspace"] == folders[name]
    assert await _has_note(folders[name])
    thread = (await served.client.post("/threads", json={})).json()["thread_id"]
    state = {"values": {"workspace": folders[name]}}
    assert (await served.client.post(f"/threads/{thread}/state", json=state)).status_code == 200


async def test_a_symlink_inside_an_allowed_folder_is_named_by_where_it_leads(
    settings: Settings, tmp_path: Path
) -> None:
    inside = tmp_path / "workspace" / "real"
    await asyncio.to_thread(inside.mkdir)
    link = tmp_path / "workspace" / "alias"
    await asyncio.to_thread(link.symlink_to, inside, True)
    assert await resolve_workspace(settings, str(link)) == inside
    assert await resolve_workspace(settings, None) == settings.workspace
    assert await resolve_workspace(settings, "  ") == settings.workspace


async def test_the_library_obeys_the_same_rule(
    duck: DuckLM, llm: ScriptedLLM, folders: dict[str, str]
) -> None:
    with pytest.raises(WorkspaceError, match="DUCK_WORKSPACES"):
        await duck.run("hi", workspace=folders["etc"], **QUIET)
    with pytest.raises(WorkspaceError, match="DUCK_WORKSPACES"):
        await duck.run("hi", workspace=folders["listed"], **QUIET)  # not listed for `duck`
    assert llm.requests == []
    inside = Path(folders["default"]) / "sub"
    await asyncio.to_thread(inside.mkdir)
    llm.script(reply(tool_calls=[WRITE]), reply("Written."))
    result = await duck.run("write a note", workspace=str(inside), **QUIET)
    assert result.status == "completed"
    assert await _has_note(str(inside))


async def test_a_thread_whose_workspace_is_no_longer_allowed_stops_before_any_call(
    settings: Settings, llm: ScriptedLLM, folders: dict[str, str]
) -> None:
    # The thread ran in `projects` while DUCK_WORKSPACES listed it; then the person
    # narrowed the setting. The next turn must not go on working there.
    wide = settings.model_copy(update={"workspaces": [Path(folders["listed"])]})
    llm.script(reply("Hi."))
    async with DuckLM.open(wide) as duck:
        first = await duck.run("hi", workspace=folders["listed"], **QUIET)
        assert first.status == "completed"
    llm.script(reply(tool_calls=[WRITE]), reply("Written."))
    async with DuckLM.open(settings) as duck:
        second = await duck.run("write a note", thread_id=first.thread_id, **QUIET)
    assert second.status == "failed"
    (error,) = [e for e in second.events if e["type"] == "error"]
    assert "DUCK_WORKSPACES" in error["message"]
    assert len(llm.requests) == 1  # only the first turn's: the second asked nothing
    assert not await _has_note(folders["listed"])
