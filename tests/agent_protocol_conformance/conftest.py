"""Fixtures of the conformance suite: the server under test, and clients of it.

Every case runs once per target. With `AP_CONFORMANCE_URL` set, the one target is that
server (`server_under_test.from_env`); otherwise `targets.py` starts the two this
repository checks: `reference` (`langgraph dev`) and `ducklm` (`ducklm serve`), each once
per session and one at a time (pytest groups the cases by target).

A case a target does not support yet carries `@pytest.mark.missing_on(target, reason)`:
there it is an xfail with `strict=True`, so it fails loudly once the target supports it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from .server_under_test import Target, env_targets, from_env

HERE = Path(__file__).parent
TARGETS = env_targets() or ["reference", "ducklm"]
MISSING_ON = (
    "missing_on(target, reason): the case fails on that target for the reason given; "
    "an xfail there with strict=True"
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's marker (the run uses --strict-markers)."""
    config.addinivalue_line("markers", MISSING_ON)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Turn `missing_on(target, ...)` into a strict xfail on that target's cases.

    The cases start servers: they are `slow` where the project running them has that mark.
    """
    slow = any(line.startswith("slow:") for line in config.getini("markers"))
    for item in items:
        if not item.path.is_relative_to(HERE):
            continue
        if slow:
            item.add_marker("slow")
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("target") if callspec is not None else None
        if config.pluginmanager.hasplugin("xdist"):
            # Under pytest-xdist (--dist loadgroup), one worker takes every case of a
            # target: each server starts once, and the two targets run side by side.
            item.add_marker(pytest.mark.xdist_group(f"conformance-{name}"))
        for mark in item.iter_markers("missing_on"):
            missing_on, reason = mark.args
            if missing_on == name:
                item.add_marker(pytest.mark.xfail(strict=True, reason=f"{name}: {reason}"))


@pytest.fixture(scope="session", params=TARGETS)
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    """The server under test, started once per session (unless it runs elsewhere)."""
    found = from_env()
    if found is not None:
        yield found
        return
    from .targets import running

    with running(request.param, tmp_path_factory.mktemp(request.param)) as started:
        yield started


@pytest.fixture
async def client(target: Target) -> AsyncIterator[LangGraphClient]:
    """langgraph-sdk's client of the target (no LangSmith key from the environment)."""
    sdk = await asyncio.to_thread(
        get_client, url=target.url, api_key=None, headers=target.headers, timeout=60
    )
    async with sdk:
        yield sdk


@pytest.fixture
async def http(target: Target) -> AsyncIterator[httpx.AsyncClient]:
    """A plain HTTP client of the target, for what the SDK hides (status codes, headers)."""
    plain = await asyncio.to_thread(
        httpx.AsyncClient, base_url=target.url, headers=target.headers, timeout=60
    )
    async with plain:
        yield plain
