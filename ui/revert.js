// "Revert": roll back the files a tool call (or a whole turn) changed, through
// `POST /v1/conversations/{id}/undo`: a card's button names its call (`to_call`), a
// turn's the turn of its first changing call (`turn_of`); either rolls back those
// changes alone, never a later one. The button only asks; the conversation view, which
// knows the conversation, listens for its `ducklm-revert` event and answers. A button
// whose changes are reverted (now, or before a reload: `GET .../changes`) reads
// "Reverted" and offers nothing.

import { h } from "./dom.js";

/** The event a revert button sends up the page: `{callId, scope, force, settle(outcome)}`. */
export const REVERT_EVENT = "ducklm-revert";

/**
 * A button that reverts the changes of `callId` (`scope` "call") or of its turn ("turn").
 * Refused because files changed since (409: outside DuckLM, or by a later change), it
 * turns into "Revert anyway", which forces.
 */
export function revertButton({ callId, label, testid, scope = "call", undoIds = [] }) {
  const button = h("button", { type: "button", class: "revert-button", testid, text: label });
  button.dataset.undoIds = undoIds.filter(Boolean).join(" ");
  let force = false;
  const settle = (outcome) => {
    if (outcome === "done") {
      showReverted(button);
      return;
    }
    button.disabled = false;
    if (outcome === "refused") {
      force = true;
      button.textContent = "Revert anyway";
      button.dataset.state = "refused";
    }
  };
  button.addEventListener("click", () => {
    button.disabled = true;
    const detail = { callId, scope, force, settle };
    button.dispatchEvent(new CustomEvent(REVERT_EVENT, { bubbles: true, detail }));
  });
  return button;
}

/** Add a change record's id to what `button` reverts (a turn's button gathers its calls'). */
export function addUndoId(button, undoId) {
  if (!undoId) return;
  const ids = new Set(button.dataset.undoIds.split(" ").filter(Boolean));
  ids.add(undoId);
  button.dataset.undoIds = [...ids].join(" ");
}

/** Every revert button under `root` whose changes are all in `reverted` reads as reverted. */
export function markReverted(root, reverted) {
  for (const button of root.querySelectorAll(".revert-button")) {
    const ids = button.dataset.undoIds.split(" ").filter(Boolean);
    if (ids.length && ids.every((id) => reverted.has(id))) showReverted(button);
  }
}

function showReverted(button) {
  button.textContent = "Reverted";
  button.dataset.state = "reverted";
  button.disabled = true;
}

/** The files a call changed, as a short line: `changed: a.txt, b.txt (+3 more)`. */
export function changedLine(changed) {
  const shown = changed.slice(0, 5).map((c) => `${c.path} (${c.change})`).join(", ");
  const more = changed.length > 5 ? ` (+${changed.length - 5} more)` : "";
  return h("p", { class: "tool-changes", testid: "tool-changes", text: `changed: ${shown}${more}` });
}
