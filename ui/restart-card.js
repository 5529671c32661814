// The card of a task whose run stopped because DuckLM's process died (a crash, a
// restart): the server marks it interrupted with no question, so the person chooses to
// go on from its last checkpoint or to stop it.

import { h } from "./dom.js";
import { showError } from "./notify.js";

let nextId = 0;

/**
 * Shown in a turn like a question card (`Turn.ask`): it is what the task waits for.
 * `onGoOn()` and `onStop()` resolve once the server accepted the request and reject
 * (with the reason) when it refused; the card then lets the person try again.
 */
export class RestartCard {
  /**
   * @param {{error?: string|null}} task - The task as `GET /v1/tasks/{id}` shows it.
   * @param {{onGoOn: () => Promise<void>, onStop: () => Promise<void>}} handlers
   */
  constructor(task, { onGoOn, onStop }) {
    nextId += 1;
    const titleId = `restart-${nextId}`;
    const textId = `restart-text-${nextId}`;
    this.buttons = [
      h("button", {
        type: "button",
        class: "primary",
        testid: "restart-go-on",
        text: "Go on",
        on: { click: () => this.act(onGoOn) },
      }),
      h("button", {
        type: "button",
        class: "danger",
        testid: "restart-stop",
        text: "Stop",
        on: { click: () => this.act(onStop) },
      }),
    ];
    this.el = h(
      "section",
      {
        class: "question-card restart-card",
        testid: "restart-card",
        dataset: { state: "open" },
        attrs: { "aria-labelledby": titleId, "aria-describedby": textId },
      },
      h("h3", { id: titleId, text: "Stopped by a restart" }),
      h("p", {
        id: textId,
        class: "restart-text",
        testid: "restart-text",
        text: "This task stopped when DuckLM restarted. Go on from where it stopped, or stop it.",
      }),
      // The server's reason, shown as it says it (and as text only: it is not ours).
      task.error ? h("p", { class: "restart-reason", testid: "restart-reason", text: task.error }) : null,
      h("div", { class: "card-actions" }, ...this.buttons),
    );
  }

  get isOpen() {
    return this.el.dataset.state === "open";
  }

  setBusy(busy) {
    for (const button of this.buttons) button.disabled = busy;
    this.el.setAttribute("aria-busy", String(busy));
  }

  /** The task goes on or was stopped: the turn shows which, the card has nothing to add. */
  settle() {
    if (!this.isOpen) return;
    this.el.dataset.state = "settled";
    this.el.remove();
  }

  async act(send) {
    this.setBusy(true);
    try {
      await send();
      this.settle();
    } catch (error) {
      if (error.name === "AbortError") return;
      showError(error);
      this.setBusy(false);
    }
  }
}
