// A turn's plan as a checklist that follows the plan events: `plan_created`,
// `plan_step_started`, `plan_step_finished` and `plan_revised`. Each status has a mark and
// a word, never a colour alone; a polite live line announces progress without reading
// the whole list again at every change.

import { h } from "./dom.js";

/** Shown status -> its mark (hidden from screen readers) and its word. */
const STATUS = {
  pending: { mark: "○", word: "pending" },
  running: { mark: "", word: "running" }, // the mark is a CSS spinner
  retrying: { mark: "↻", word: "retrying" },
  done: { mark: "✓", word: "done" },
  failed: { mark: "✗", word: "failed" },
  skipped: { mark: "–", word: "skipped" },
  stopped: { mark: "■", word: "stopped" },
};

export class PlanView {
  constructor() {
    this.steps = new Map(); // step id -> {step, status, result, attempt}
    this.ended = false; // the run ended: unstarted steps were skipped
    // role="list": a list without bullets keeps its semantics in every browser.
    this.list = h("ol", { class: "plan-steps", testid: "plan-steps", attrs: { role: "list" } });
    this.progress = h("p", {
      class: "plan-progress",
      testid: "plan-progress",
      attrs: { "aria-live": "polite" },
    });
    this.notes = h("div", { class: "plan-notes" });
    this.el = h(
      "section",
      { class: "plan", testid: "plan", attrs: { "aria-label": "Plan" } },
      h("h3", { class: "plan-title", text: "Plan" }),
      this.notes,
      this.list,
      this.progress,
    );
  }

  /** `plan_created`: the steps, all pending; a note when the model's plan was unusable. */
  onCreated(event) {
    this.setSteps(event.plan?.steps ?? []);
    if (event.fallback) {
      const why = event.problem ? ` (${event.problem})` : "";
      this.note("plan-fallback", `No plan: the model's plan was unusable${why}, so the task runs as one step.`);
    }
  }

  /** `plan_revised`: the new full list; kept steps keep their status and result. */
  onRevised(event) {
    this.setSteps(event.plan?.steps ?? []);
    const step = event.failed_step ? ` after step ${event.failed_step} failed` : "";
    this.note("plan-revised", `Plan revised${step}: ${event.reason || "a step failed"}`);
  }

  onStepStarted(event) {
    const entry = this.entry(event.step_id, event.goal);
    entry.status = "running";
    entry.attempt = event.attempt ?? 1;
    entry.result = "";
    this.render(entry);
    const again = entry.attempt > 1 ? " (second attempt)" : "";
    this.announce(`Step ${event.index ?? "?"} of ${event.total ?? this.steps.size}${again}: ${entry.step.goal}`);
  }

  onStepFinished(event) {
    const entry = this.entry(event.step_id);
    const failed = event.status !== "done";
    entry.status = failed ? (event.retry ? "retrying" : "failed") : "done";
    entry.result = event.result ?? "";
    entry.reason = failed ? event.reason ?? "" : "";
    this.render(entry);
    this.announce(`Step ${entry.step.id} ${STATUS[entry.status].word}.`);
  }

  /** The run ended (not paused): steps it never reached are skipped. */
  end() {
    this.ended = true;
    this.renderAll();
  }

  /** A new run of the task (a resume) goes on with the steps. */
  resume() {
    this.ended = false;
    this.renderAll();
  }

  setSteps(steps) {
    const old = this.steps;
    this.steps = new Map();
    for (const step of steps) {
      const kept = old.get(step.id);
      this.steps.set(step.id, kept ? { ...kept, step } : { step, status: "pending", result: "" });
    }
    this.list.replaceChildren();
    this.renderAll();
  }

  entry(id, goal) {
    let entry = this.steps.get(id);
    if (!entry) {
      // An event for a step the list does not know (e.g. a replay that began mid-plan).
      entry = { step: { id, goal: goal ?? `Step ${id}` }, status: "pending", result: "" };
      this.steps.set(id, entry);
    }
    return entry;
  }

  renderAll() {
    for (const entry of this.steps.values()) this.render(entry);
  }

  /** The status a step shows: once the run ended, unstarted ones were skipped. */
  shown(entry) {
    if (!this.ended) return entry.status;
    if (entry.status === "pending") return "skipped";
    if (entry.status === "running" || entry.status === "retrying") return "stopped";
    return entry.status;
  }

  render(entry) {
    const status = this.shown(entry);
    const { mark, word } = STATUS[status];
    const label = status === "running" && entry.attempt > 1 ? "running, attempt 2" : word;
    const row = h(
      "li",
      { class: "plan-step", testid: "plan-step", dataset: { stepId: entry.step.id, status } },
      h("span", { class: "plan-mark", text: mark, attrs: { "aria-hidden": "true" } }),
      h("span", { class: "plan-goal", testid: "plan-goal", text: entry.step.goal ?? "" }),
      h("span", { class: "plan-status", testid: "plan-status", text: label }),
      entry.result ? h("p", { class: "plan-result", testid: "plan-result", text: entry.result }) : null,
      entry.reason ? h("p", { class: "plan-reason", testid: "plan-reason", text: entry.reason }) : null,
    );
    const current = entry.row;
    entry.row = row;
    if (current?.parentNode === this.list) current.replaceWith(row);
    else this.list.append(row);
  }

  note(testid, text) {
    this.notes.append(h("p", { class: `plan-note ${testid}`, testid, text }));
  }

  announce(text) {
    this.progress.textContent = text;
  }
}
