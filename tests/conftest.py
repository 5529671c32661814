"""Fixtures shared by every test: no stray settings, and no blocking calls on the loop."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from blockbuster import BlockBuster, blockbuster_ctx
from langgraph_sdk.client import LangGraphClient

from ducklm.config.settings import Settings, load_settings
from ducklm.learning.skills import default_skills_dir
from ducklm.runtime.facade import DuckLM
from tests.support import embedding_service, hypothesis_profiles
from tests.support.cli import stop_zygote
from tests.support.fake_sudo import install_fake_sudo
from tests.support.postgres import fresh_schema, require_postgres
from tests.support.role_script import RoleScript
from tests.support.scripted_llm import ScriptedLLM
from tests.support.server import Served, sdk_client, serve
from tests.support.webhook_receiver import Receiver, webhook_receiver

pytest_plugins = ["tests.support.timing_report"]
hypothesis_profiles.load()


@pytest.fixture(autouse=True, scope="session")
def _cli_processes() -> Iterator[None]:
    """What the `ducklm` processes the tests start share, paid once per test process: the
    real embedding model served to them (tests/support/embedding_service.py; it loads on
    first use) and the zygote they fork from (tests/support/zygote.py; it starts on
    first use and stops at the end)."""
    embedding_service.start()
    yield
    stop_zygote()


@pytest.fixture(autouse=True)
def _no_duck_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see only the settings they set: the machine's DUCK_* variables are hidden."""
    for name in list(os.environ):
        if name.startswith("DUCK_"):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    """Fail any test that makes a blocking call (file, socket, sleep) on the event loop."""
    with blockbuster_ctx() as bb:
        yield bb


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    """A scripted OpenAI-compatible server on a free loopback port."""
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def model(llm: ScriptedLLM) -> RoleScript:
    """The scripted server answering each role from its own queue (plans, checks, coder,
    action, thinker); modules with a script of their own define their own `model`."""
    script = RoleScript()
    llm.set_responder(script)
    return script


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    """A copy of DuckLM's skills, so proposals written by a test stay in the test."""
    return Path(shutil.copytree(default_skills_dir(), tmp_path / "skills"))


@pytest.fixture
def settings(tmp_path: Path, workspace: Path, llm: ScriptedLLM, skills_dir: Path) -> Settings:
    """Settings pointing at the scripted server, a temporary data dir and workspace."""
    return load_settings(
        env_file=None,
        llm_base_url=llm.base_url,
        data_dir=tmp_path / "data",
        workspace=workspace,
        skills_dir=skills_dir,
        model_retry_initial_interval=0.01,
    )


@pytest.fixture(params=["sqlite", "postgres"])
async def database_url(request: pytest.FixtureRequest) -> AsyncIterator[str | None]:
    """Each backend in turn: `None` (SQLite in the data dir), then a PostgreSQL URL.

    A test module runs on both by overriding `settings` with
    `tests.support.postgres.on_backend`.
    Each PostgreSQL test gets a schema of its own, so no test sees another's rows.
    """
    if request.param == "sqlite":
        yield None
        return
    async with fresh_schema(require_postgres()) as url:
        yield url


@pytest.fixture
async def duck(settings: Settings) -> AsyncIterator[DuckLM]:
    """An open DuckLM on the scripted server."""
    async with DuckLM.open(settings) as runtime:
        yield runtime


@pytest.fixture
def server_settings(settings: Settings) -> Settings:
    """The served app's settings; a test class overrides this to serve other ones."""
    return settings


@pytest.fixture
async def served(server_settings: Settings) -> AsyncIterator[Served]:
    """DuckLM's real server over real HTTP on the scripted model, with the test token."""
    async with serve(server_settings) as running:
        yield running


@pytest.fixture
async def client(served: Served) -> AsyncIterator[LangGraphClient]:
    """The LangGraph SDK's client on `served`'s Agent Protocol door."""
    async with sdk_client(served) as sdk:
        yield sdk


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on loopback that records what it is sent."""
    with webhook_receiver() as running:
        yield running


@pytest.fixture
def fake_sudo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake `sudo` of tests/support/fake_sudo.py, first on PATH; returns its log."""
    return install_fake_sudo(tmp_path, monkeypatch)
