"""The checkpoint tree's reading of branches (`ducklm.runtime.branches.CheckpointTree`).

Built by hand in LangGraph's shapes: a turn starts at an `input` checkpoint whose parent
is the checkpoint before the message; a new version of the first message is a child of
its first `input` checkpoint; a switch is a `fork` copy beside a version's newest one.
Ids are ordered as LangGraph's are (newer is larger).
"""

from __future__ import annotations

from ducklm.runtime.branches import CheckpointTree, Point

RUNS = {"r1": "t1", "r2": "t2", "r3": "t3", "r4": "t4"}


def _turn(start: int, parent: str | None, run: str, steps: int = 2) -> list[Point]:
    """A turn's checkpoints: its input, then `steps` loop checkpoints (ids from `start`)."""
    ids = [f"{start + n:03}" for n in range(steps + 1)]
    points = [Point(ids[0], parent, "input", run)]
    points += [Point(ids[n], ids[n - 1], "loop", run) for n in range(1, steps + 1)]
    return points


def test_a_regenerated_second_message_has_two_versions_and_hides_the_old_task() -> None:
    first = _turn(0, None, "r1")  # 000..002
    second = _turn(10, "002", "r2")  # 010..012
    again = _turn(20, "002", "r3")  # 020..022, the regenerated second message
    tree = CheckpointTree([*first, *second, *again])
    turns = tree.turns(RUNS)
    assert [(t.task_id, t.index, len(t.versions)) for t in turns] == [("t1", 0, 1), ("t3", 1, 2)]
    assert turns[1].fork_point == "002"
    assert [v.task_id for v in turns[1].versions] == ["t2", "t3"]
    assert tree.off_branch_tasks(RUNS) == {"t2"}
    assert tree.newest_under(tree.turn("010")) == "012"


def test_versions_of_the_first_message_sit_under_its_first_input() -> None:
    first = _turn(0, None, "r1")
    edited = _turn(10, "000", "r2")  # a new input at the first input checkpoint
    tree = CheckpointTree([*first, *edited])
    (turn,) = tree.turns(RUNS)
    assert (turn.checkpoint_id, turn.fork_point, turn.index) == ("010", "000", 1)
    assert [v.checkpoint_id for v in turn.versions] == ["000", "010"]
    # The first version's newest checkpoint is its own, not the edit under it.
    assert tree.newest_under(tree.turn("000")) == "002"
    assert tree.off_branch_tasks(RUNS) == {"t1"}


def test_a_switch_copy_makes_the_old_version_the_one_shown() -> None:
    first = _turn(0, None, "r1")
    second = _turn(10, "002", "r2")
    again = _turn(20, "002", "r3")
    copy = Point("030", "011", "fork", None)  # `__copy__` of 012: same parent
    tree = CheckpointTree([*first, *second, *again, copy])
    assert tree.head == "030"
    assert [(t.task_id, t.index) for t in tree.turns(RUNS)] == [("t1", 0), ("t2", 0)]
    assert tree.off_branch_tasks(RUNS) == {"t3"}
    # A message sent now goes on from the copy: its input's fork point is the copy.
    later = _turn(40, "030", "r4")
    tree = CheckpointTree([*first, *second, *again, copy, *later])
    assert [t.fork_point for t in tree.turns(RUNS)] == ["000", "002", "030"]


def test_a_thread_without_messages_of_the_person_has_no_turns() -> None:
    # An imported conversation is written by state updates: no `input` checkpoint.
    tree = CheckpointTree([Point("000", None, "update", None)])
    assert tree.turns(RUNS) == []
    assert tree.off_branch_tasks(RUNS) == set()
    assert CheckpointTree([]).turns(RUNS) == []
