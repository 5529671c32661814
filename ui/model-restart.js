// The line a turn shows while DuckLM restarts the local model server that crashed under
// it: the turn waits for the server instead of failing (`model_restarting`), then goes
// on (`model_restarted`). No command to run: DuckLM is already restarting it.

import { h } from "./dom.js";

/** "restarting the model server" under the turn, until the server is back. */
export class ModelRestartLine {
  constructor() {
    this.el = h("p", {
      class: "model-restart",
      testid: "model-restart",
      role: "status",
      dataset: { state: "restarting" },
    });
  }

  /** The server crashed and DuckLM restarts it: say so, and how long the turn waits. */
  restarting(event) {
    const why = event.why ? ` (${event.why})` : "";
    const wait = typeof event.wait_s === "number" ? `, up to ${event.wait_s} s` : "";
    this.el.dataset.state = "restarting";
    this.el.textContent = `Restarting the model server${why}. The answer waits for it${wait}.`;
  }

  /** The server is back: the turn goes on. */
  restarted(event) {
    this.el.dataset.state = "restarted";
    const after = typeof event.waited_s === "number" ? ` after ${event.waited_s} s` : "";
    this.el.textContent = `The model server is back${after}; the answer goes on.`;
  }
}
