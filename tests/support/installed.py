"""Parts the tests need that only an install step brings (the local model, llama-server).

Where one is missing, a developer's run skips the test and says what to install; CI
installs every part, so there its absence fails the test.
"""

from __future__ import annotations

import importlib.util
import os

import pytest


def require_installed(modules: tuple[str, ...], install: str, needed_by: str) -> None:
    """Skip (fail under CI) unless every module of `modules` can be imported.

    Args:
        modules: The import names that must be there.
        install: The command that installs them, said in the skip or failure.
        needed_by: What needs them, for the failure under CI ("the local model tests").
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not installed: {install}"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run {needed_by}")
    pytest.skip(reason)
