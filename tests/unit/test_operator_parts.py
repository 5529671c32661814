"""Pure parts of recovery, pruning and doctor: process owners, what prune may delete,
checkpoint times, role model checks."""

from __future__ import annotations

import dataclasses
import time
import uuid

from langgraph.checkpoint.base.id import uuid6

from ducklm.cli.doctor import role_model_check
from ducklm.stores.owner import ProcessOwner
from ducklm.stores.prune.rules import Node, PrunePolicy, checkpoint_time, select_deletable

ME = ProcessOwner("host-a", "boot-1", 100, 5000)


def test_owner_token_round_trips_and_junk_is_refused() -> None:
    assert ProcessOwner.parse(ME.token()) == ME
    assert ProcessOwner.parse("host/with/slashes/boot/7/9") == ProcessOwner(
        "host/with/slashes", "boot", 7, 9
    )
    assert ProcessOwner.parse("nonsense") is None
    assert ProcessOwner.parse("h/b/x/1") is None


def test_owner_liveness() -> None:
    assert ME.is_alive(ME)
    assert not dataclasses.replace(ME, start_ticks=1).is_alive(ME), "a reused pid is not me"
    assert not dataclasses.replace(ME, boot_id="boot-0").is_alive(ME), "before a reboot"
    assert dataclasses.replace(ME, host="host-b", pid=1).is_alive(ME), "another host: unknown"


def test_checkpoint_time_reads_the_uuid6() -> None:
    now = time.time()
    assert abs((checkpoint_time(str(uuid6())) or 0) - now) < 5
    assert checkpoint_time(str(uuid.uuid4())) is None
    assert checkpoint_time("not-an-id") is None


def _chain(n: int) -> list[Node]:
    ids = [f"c{i:02d}" for i in range(n)]
    return [Node(cid, ids[i - 1] if i else None) for i, cid in enumerate(ids)]


def test_a_chain_without_a_snapshot_is_kept_whole() -> None:
    doomed, kept_for_state = select_deletable(
        _chain(6), PrunePolicy(keep_last=2), has_seed=lambda _: False, now=time.time()
    )
    assert doomed == set()
    assert kept_for_state == 4


def test_checkpoints_behind_a_snapshot_and_dead_branches_go() -> None:
    nodes = [*_chain(6), Node("b01", "c01"), Node("b02", "b01")]  # a fork off c01
    doomed, kept_for_state = select_deletable(
        nodes, PrunePolicy(keep_last=1), has_seed=lambda cid: cid == "c03", now=time.time()
    )
    # c05 is kept; its messages are rebuilt from c04 and the snapshot in c03.
    assert doomed == {"c00", "c01", "c02", "b01", "b02"}
    assert kept_for_state == 2


def test_the_latest_is_kept_even_with_keep_last_zero_and_young_ones_stay() -> None:
    old = [Node("c00", None), Node("c01", "c00")]
    doomed, _ = select_deletable(
        old, PrunePolicy(keep_last=0), has_seed=lambda _: True, now=time.time()
    )
    assert doomed == {"c00"}
    young = [Node(str(uuid6()), None)]
    young.append(Node(str(uuid6()), young[0].id))
    doomed, _ = select_deletable(
        young, PrunePolicy(keep_last=1, older_than_days=1), has_seed=lambda _: True, now=time.time()
    )
    assert doomed == set(), "younger than a day"


def test_role_model_check() -> None:
    assert role_model_check("thinker", "local", None).ok
    assert role_model_check("thinker", "qwen", ["qwen", "llama"]).ok
    assert role_model_check("thinker", "local", ["smollm2.gguf"]).ok, "llama-server's only model"
    missing = role_model_check("thinker", "local", ["qwen", "llama"])
    assert not missing.ok
    assert "config/models.yaml" in missing.fix
