"""The loop each command runs on: the server on uvloop, everything else on asyncio's."""

from __future__ import annotations

import asyncio

import pytest

from ducklm.cli import build_parser, run_loop


async def _loop_module() -> int:
    return 1 if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else 0


def test_the_fast_loop_is_uvloop() -> None:
    pytest.importorskip("uvloop")  # not built for Windows
    assert run_loop(_loop_module(), fast=True) == 1
    assert run_loop(_loop_module()) == 0


def test_only_serve_asks_for_the_fast_loop() -> None:
    parser = build_parser()
    assert parser.parse_args(["serve"]).fast_loop is True
    assert getattr(parser.parse_args(["token"]), "fast_loop", False) is False
