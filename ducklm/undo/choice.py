"""Which changes an undo names, and what stands in its way.

A request names changes (one call's, one turn's, the last turn's); those an undo
reverted already are not undone twice (`reverted_by`, which a redo clears again). A
later change that touched the same paths since stands in the way of reverting them: it
is named (`later_changes`) and the undo is refused until the person says to go on
anyway (`refusal`), so a revert never rolls back what came after it unasked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ducklm.undo.errors import UndoRefused
from ducklm.undo.records import Change

if TYPE_CHECKING:
    from ducklm.undo.service import UndoPlan

CHANGED_OUTSIDE = (
    "{n} file(s) changed outside DuckLM since its change: {names}. Undoing would lose "
    "that work; look at them first, or undo with --force"
)
CHANGED_LATER = (
    "{n} file(s) were changed again later: {names}. Reverting would undo that later "
    "change too; revert it first, or undo with --force to put the files back as they "
    "were before"
)


def reverted_by(every: list[Change]) -> dict[str, str]:
    """`change id -> id of the undo that reverted it`, for changes reverted now.

    An undo of an undo (a redo) puts that undo's changes back: they read as live again.
    """
    by_id = {c.id: c for c in every}
    found: dict[str, str] = {}
    for change in every:
        if change.kind != "undo":
            continue
        for target in change.meta.get("undoes", []):
            undone = by_id.get(target)
            if undone is not None and undone.kind == "undo":
                for back in undone.meta.get("undoes", []):
                    found.pop(back, None)
            found[target] = change.id
    return found


def last_turn(every: list[Change], task_of: dict[str, Any]) -> list[Change]:
    """The last turn's changes since the last undo; or that undo, when it is the last."""
    last = every[-1]
    if last.kind == "undo":
        return [last]  # undoing an undo puts its changes back
    start = len(every) - 1
    while (
        start > 0
        and every[start - 1].kind != "undo"
        and task_of[every[start - 1].id] == task_of[last.id]
    ):
        start -= 1
    return every[start:]


def later_changes(
    every: list[Change], chosen: list[Change], moved: list[str]
) -> list[dict[str, Any]]:
    """The live changes after the chosen ones that touched `moved` paths again."""
    if not moved:
        return []
    reverted = reverted_by(every)
    after = every[every.index(chosen[-1]) + 1 :]
    chosen_ids = {c.id for c in chosen}
    wanted = set(moved)
    found = []
    for change in after:
        if change.id in chosen_ids or change.id in reverted or change.kind == "undo":
            continue
        hit = sorted(wanted & set(change.paths))
        if hit:
            found.append({**change.summary(), "paths": hit})
    return found


def refusal(plan: UndoPlan) -> UndoRefused:
    """The refusal of `plan`: the later changes in its way first, else the outside ones."""
    if plan.later:
        names = "; ".join(
            f"{', '.join(item['paths'][:5])} by {_who(item)}" for item in plan.later[:5]
        )
        paths = sorted({p for item in plan.later for p in item["paths"]} | set(plan.outside))
        message = CHANGED_LATER.format(n=len(paths), names=names)
        return UndoRefused(message, paths, later=plan.later)
    names = ", ".join(plan.outside[:10])
    return UndoRefused(CHANGED_OUTSIDE.format(n=len(plan.outside), names=names), plan.outside)


def _who(item: dict[str, Any]) -> str:
    if item.get("kind") == "upload":
        return f"the upload {item.get('call_id')}"
    return f"tool call {item.get('call_id')} ({item.get('tool')})"
