// Regenerate, edit-and-resend and the `< 2/3 >` control under each message of the person.
//
// The server keeps the branches (ducklm/runtime/branches.py): every version of a message
// is a fork from the checkpoint before it, and the branch shown is the conversation's
// head. So switching a version asks the server to make it the head and reloads the view:
// a reload, the Agent Protocol door and the next message all see the branch shown.
// `GET /v1/conversations/{id}/branches` lists each message's versions by task id; the
// message bubbles carry their task id (`data-task-id`).

import * as api from "./api.js";
import { h } from "./dom.js";
import { showError, showInfo } from "./notify.js";
import { userMessage } from "./turn.js";

const BUSY = "Wait for the answer to end (or stop it) first.";

export class BranchControls {
  /** @param {import("./chat.js").Chat} chat - The conversation view the controls act on. */
  constructor(chat) {
    this.chat = chat;
  }

  get path() {
    return `/v1/conversations/${encodeURIComponent(this.chat.conversationId)}/branches`;
  }

  /** Put the controls under each message of the branch shown (view `generation`). */
  async refresh(generation) {
    if (!this.chat.conversationId) return;
    let listing;
    try {
      listing = await api.get(this.path);
    } catch (error) {
      if (generation === this.chat.generation) showError(error);
      return;
    }
    if (generation !== this.chat.generation) return;
    for (const turn of listing.turns) {
      if (!turn.task_id) continue;
      const selector = `.turn-user[data-task-id="${CSS.escape(turn.task_id)}"]`;
      const bubble = this.chat.transcript.querySelector(selector);
      if (bubble) bubble.after(this.bar(bubble, turn));
    }
  }

  /** Edit, Regenerate, and the versions when there are several. */
  bar(bubble, turn) {
    bubble.nextElementSibling?.matches(".branch-bar") && bubble.nextElementSibling.remove();
    const count = turn.versions.length;
    const step = (by) => () => this.switchTo(turn.versions[turn.index + by].checkpoint_id);
    return h(
      "div",
      { class: "branch-bar", testid: "branch-bar" },
      count > 1 && h(
        "span",
        { class: "branch-versions", attrs: { role: "group", "aria-label": "Versions" } },
        h("button", {
          type: "button", class: "ghost", text: "<", testid: "branch-previous",
          disabled: turn.index === 0, attrs: { "aria-label": "Previous version" },
          on: { click: step(-1) },
        }),
        h("span", { class: "branch-position", testid: "branch-position", text: `${turn.index + 1}/${count}` }),
        h("button", {
          type: "button", class: "ghost", text: ">", testid: "branch-next",
          disabled: turn.index === count - 1, attrs: { "aria-label": "Next version" },
          on: { click: step(1) },
        }),
      ),
      h("button", {
        type: "button", class: "ghost", text: "Edit", testid: "branch-edit",
        on: { click: () => this.edit(bubble, turn) },
      }),
      h("button", {
        type: "button", class: "ghost", text: "Regenerate", testid: "branch-regenerate",
        title: "Answer this message again, as a new version (tool calls ask again)",
        on: { click: () => this.fork(bubble, turn, null) },
      }),
    );
  }

  /** Show another version: the server makes it the head; the view is loaded again. */
  async switchTo(checkpointId) {
    if (this.chat.taskState !== "idle") return showInfo(BUSY);
    try {
      await api.post(`${this.path}/switch`, { checkpoint_id: checkpointId });
    } catch (error) {
      return showError(error);
    }
    await this.chat.open(this.chat.conversationId);
  }

  /** The message's text in a box: Send forks a new version with it, Cancel keeps it. */
  edit(bubble, turn) {
    if (this.chat.taskState !== "idle") return showInfo(BUSY);
    const text = bubble.querySelector(".user-text");
    const box = h("textarea", {
      class: "branch-edit-text", testid: "branch-edit-text", value: text.textContent,
      attrs: { "aria-label": "Edit your message", rows: "3" },
    });
    const form = h(
      "form",
      { class: "branch-edit", on: { submit: (event) => {
        event.preventDefault();
        if (box.value.trim()) this.fork(bubble, turn, box.value);
      } } },
      box,
      h("div", { class: "branch-edit-actions" },
        h("button", { type: "button", class: "ghost", text: "Cancel", on: { click: () => form.replaceWith(text) } }),
        h("button", { type: "submit", text: "Send", testid: "branch-edit-send" }),
      ),
    );
    text.replaceWith(form);
    box.focus();
  }

  /** Run a new version of the message (`message` null: the same text) and follow it. */
  fork(bubble, turn, message) {
    const chat = this.chat;
    if (chat.taskState !== "idle") return showInfo(BUSY);
    const text = message ?? bubble.querySelector(".user-text")?.textContent ?? "";
    // The view shows the new branch: what came after the message belongs to the old one.
    while (bubble.nextSibling) bubble.nextSibling.remove();
    const sent = userMessage(text);
    bubble.replaceWith(sent);
    chat.pendingBubble = sent;
    chat.stickToBottom = true;
    chat.startTurn(null);
    const body = { checkpoint_id: turn.checkpoint_id, message, ...chat.composer.options };
    chat.follow("POST", `${this.path}/stream`, body).catch((error) => {
      showError(error); // refused before it started: show the conversation as it is
      chat.open(chat.conversationId);
    });
  }
}
