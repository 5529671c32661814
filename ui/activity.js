// The activity drawer: what the current task did, in three tabs. Events lists every
// audited event; Commands the shell commands with their exit codes; Memory what the
// memory policy decided and stored.

import { h, prettyJson } from "./dom.js";

// Tokens and reasoning are the answer itself, shown in the transcript; listing each one
// here would bury the events that matter.
const NOT_LISTED = new Set(["token", "reasoning"]);
const MEMORY_TYPES = new Set(["memory_stored", "memory_policy_decision", "memory_policy_failed"]);

/** One line about an event, for the Events tab. */
function summary(event) {
  switch (event.type) {
    case "action_decided":
      return event.calls?.length
        ? event.calls.map((c) => c.tool).join(", ")
        : `no tool (${(event.outcome ?? "").replace("_", " ")})`;
    case "tool_call_started":
      return event.tool === "shell_exec" ? event.args?.command ?? "" : event.tool ?? "";
    case "tool_call_finished":
      return [event.tool, event.status, exitText(event)].filter(Boolean).join(" · ");
    case "conversation_untrusted":
      // From here on nothing that is not read-only runs without the person.
      return `untrusted content from ${event.server ? `${event.tool} (${event.server})` : event.tool}: ${event.excerpt ?? ""}`;
    case "approval_requested":
      return (event.request?.action_requests ?? []).map((a) => a.description || a.name).join("; ");
    case "password_requested":
      return event.request?.command ?? "";
    case "error":
      return event.message ?? "";
    case "done":
      return event.status ?? "";
    case "memory_stored":
    case "memory_policy_decision":
      return event.text ?? "";
    case "memory_policy_failed":
      return event.message ?? "";
    default:
      return "";
  }
}

function exitText(event) {
  return typeof event.exit_code === "number" ? `exit code ${event.exit_code}` : "";
}

export class Activity {
  /**
   * @param {{events: HTMLElement, commands: HTMLElement, memory: HTMLElement,
   *   tabs: HTMLElement[], caption: HTMLElement}} elements - The three tab panels' lists,
   *   the tab buttons and the caption naming the task.
   */
  constructor({ events, commands, memory, tabs, caption }) {
    this.lists = { events, commands, memory };
    this.caption = caption;
    this.commandRows = new Map();
    this.initTabs(tabs);
    this.reset(null);
  }

  initTabs(tabs) {
    const select = (tab) => {
      for (const other of tabs) {
        const selected = other === tab;
        other.setAttribute("aria-selected", String(selected));
        other.tabIndex = selected ? 0 : -1;
        document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
      }
    };
    tabs.forEach((tab, index) => {
      tab.addEventListener("click", () => select(tab));
      // The tab list is one stop for Tab; arrows move between tabs (ARIA tabs pattern).
      tab.addEventListener("keydown", (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        const next = tabs[(index + step + tabs.length) % tabs.length];
        select(next);
        next.focus();
      });
    });
    select(tabs[0]);
  }

  /** Start over for another task (`null`: none). */
  reset(taskId) {
    this.taskId = taskId;
    this.commandRows.clear();
    for (const list of Object.values(this.lists)) list.replaceChildren();
    this.caption.textContent = taskId ? `Task ${taskId}` : "No task yet.";
  }

  /** Record one event of the current task. */
  record(event) {
    if (event.task_id && event.task_id !== this.taskId) this.reset(event.task_id);
    if (NOT_LISTED.has(event.type)) return;
    this.addEvent(event);
    if (event.tool === "shell_exec") this.addCommand(event);
    if (MEMORY_TYPES.has(event.type)) this.addMemory(event);
  }

  addEvent(event) {
    const text = summary(event);
    this.lists.events.append(
      h(
        "li",
        { testid: "activity-event", dataset: { type: event.type } },
        h(
          "details",
          {},
          h("summary", {}, h("span", { class: "event-type", text: event.type }), text ? ` ${text}` : ""),
          h("pre", { class: "event-json", text: prettyJson(event) }),
        ),
      ),
    );
  }

  addCommand(event) {
    let row = this.commandRows.get(event.call_id);
    if (!row) {
      const command = h("code", { class: "command-text", text: event.args?.command ?? "" });
      const result = h("span", { class: "command-result", text: "running" });
      row = { el: h("li", { testid: "activity-command" }, command, result), command, result };
      this.commandRows.set(event.call_id, row);
      this.lists.commands.append(row.el);
    }
    if (event.type === "tool_call_finished") {
      row.result.textContent = [event.status, exitText(event)].filter(Boolean).join(" · ");
      row.el.dataset.status = event.status ?? "";
    }
  }

  addMemory(event) {
    const label = {
      memory_stored: `Stored (${event.scope ?? "memory"}, ${event.action ?? "added"})`,
      memory_policy_decision: `Policy: ${event.action ?? ""}`,
      memory_policy_failed: `Policy failed at ${event.stage ?? "?"}`,
    }[event.type];
    const detail = event.type === "memory_policy_failed" ? event.message : event.text;
    this.lists.memory.append(
      h(
        "li",
        { testid: "activity-memory", dataset: { type: event.type } },
        h("strong", { text: label }),
        detail ? h("p", { text: detail }) : null,
        event.reason ? h("p", { class: "muted", text: event.reason }) : null,
      ),
    );
  }
}
