"""Hypothesis budgets by profile: `ci` (the default) and `deep`.

`ci` is what `make test` and CI run: a bounded number of examples, drawn the same way
every run (derandomized), so CI time is known and never flakes on a new seed. `deep`
draws many more, with fresh randomness, for a hunt before a release:

    HYPOTHESIS_PROFILE=deep .venv/bin/python -m pytest tests/api/test_fuzz.py
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "deep",
    max_examples=200,
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def load() -> str:
    """Load the profile `HYPOTHESIS_PROFILE` names (`ci` when unset); return its name."""
    name = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    settings.load_profile(name)
    return name
