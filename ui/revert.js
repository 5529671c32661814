// "Revert": roll back the files a tool call (or a whole turn) changed, through
// `POST /v1/conversations/{id}/undo`. The button only asks; the conversation view,
// which knows the conversation, listens for its `ducklm-revert` event and answers.

import { h } from "./dom.js";

/** The event a revert button sends up the page: `{callId, force, settle(outcome)}`. */
export const REVERT_EVENT = "ducklm-revert";

/**
 * A button that reverts everything from `callId` on. Refused because files changed
 * outside DuckLM since (409), it turns into "Revert anyway", which forces.
 */
export function revertButton({ callId, label, testid }) {
  const button = h("button", { type: "button", class: "revert-button", testid, text: label });
  let force = false;
  const settle = (outcome) => {
    if (outcome === "done") {
      button.textContent = "Reverted";
      button.dataset.state = "reverted";
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
    const detail = { callId, force, settle };
    button.dispatchEvent(new CustomEvent(REVERT_EVENT, { bubbles: true, detail }));
  });
  return button;
}

/** The files a call changed, as a short line: `changed: a.txt, b.txt (+3 more)`. */
export function changedLine(changed) {
  const shown = changed.slice(0, 5).map((c) => `${c.path} (${c.change})`).join(", ");
  const more = changed.length > 5 ? ` (+${changed.length - 5} more)` : "";
  return h("p", { class: "tool-changes", testid: "tool-changes", text: `changed: ${shown}${more}` });
}
