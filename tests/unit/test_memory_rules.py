"""The memory policy's deterministic rules."""

from __future__ import annotations

import pytest

from ducklm.turn.memory_rules import Neighbour, decide, find_secret, subject_of


@pytest.mark.parametrize(
    "text",
    [
        "my password is hunter2",
        "The wifi passphrase: duckpond42",
        "pin = 1234",
        "my API key is abc",
        "token: 0123456789abcdef",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "AKIAIOSFODNN7EXAMPLE is the key id",
        "use sk-proj-aaaaaaaaaaaaaaaaaaaa1234 for openai",
        "ghp_abcdefghijklmnopqrstuvwxyz012345 is my github token",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "card 4111 1111 1111 1111",
        "session 9f8e7d6c5b4a39281726354453627181a9b8c7d6",
    ],
)
def test_secrets_are_found(text: str) -> None:
    assert find_secret(text) is not None
    assert decide(text, 0.9, []).action == "skip"


@pytest.mark.parametrize(
    "text",
    [
        "My sister Ana lives in Porto",
        "The project uses Python 3.11",
        "I prefer tabs over spaces",
        "The deploy script is scripts/deploy.sh",
        "Meeting on 2026-12-01 at 10:00",
        "The header lives in src/components/navigation/header2.tsx",
        "Call me at +351 912 345",
    ],
)
def test_ordinary_facts_are_not_secrets(text: str) -> None:
    assert find_secret(text) is None


def test_subjects() -> None:
    assert subject_of("My sister lives in Porto") == "my sister"
    assert subject_of("My favourite colour is green") == "my favourite colour"
    assert subject_of("is it?") is None
    assert subject_of("Hello there") is None


def test_threshold_duplicate_and_supersede() -> None:
    assert decide("Ducks can fly", 0.2, []).action == "skip"
    assert decide("Ducks can fly", 0.8, []).action == "store"
    duplicate = decide(
        "My sister lives in Porto", 0.8, [Neighbour("m1", "My sister lives in Porto.", 0.97)]
    )
    assert (duplicate.action, duplicate.target_id) == ("update", "m1")
    moved = decide(
        "My sister lives in Lisbon", 0.8, [Neighbour("m1", "My sister lives in Porto", 0.8)]
    )
    assert (moved.action, moved.target_id) == ("supersede", "m1")
    other = decide(
        "My brother lives in Lisbon", 0.8, [Neighbour("m1", "My sister lives in Porto", 0.7)]
    )
    assert other.action == "store", "another subject is not a contradiction"
    far = decide("My sister lives in Lisbon", 0.8, [Neighbour("m1", "My sister likes jazz", 0.3)])
    assert far.action == "store"
