// The router's decision (`route_decided`) as one small line: chips for what the turn
// uses, and the router's reasons behind a collapsed "why".

import { h } from "./dom.js";

/** The decisions in the order of the event's `reasons`, with their labels. */
const DECISIONS = [
  { key: "recall", label: "Recall", name: "Recall memory" },
  { key: "plan", label: "Planned", name: "Plan" },
  { key: "coder", label: "Coder", name: "Coder" },
  { key: "critique", label: "Critique", name: "Critique" },
];

/**
 * The `<details>` line for a `route_decided` event (collapsed by default).
 *
 * @param {{recall?: boolean, plan?: boolean, coder?: boolean, critique?: boolean,
 *   reasons?: string[], undecided?: string[],
 *   shortcut?: {tool: string, reason: string} | null}} event
 * @returns {HTMLElement}
 */
export function routeLine(event) {
  const chosen = DECISIONS.filter((d) => event[d.key]);
  const chips = chosen.length
    ? chosen.map((d) => h("span", { class: "route-chip", testid: "route-chip", text: d.label }))
    : [h("span", { class: "route-chip", testid: "route-chip", text: "Direct" })];
  if (event.shortcut) {
    // The rules made the call themselves: say which tool, and why, like the decisions.
    // "answer" is their word for no call at all: the thinker answers.
    const tool = event.shortcut.tool === "answer" ? "no tool" : event.shortcut.tool;
    const text = `Shortcut: ${tool}`;
    chips.push(h("span", { class: "route-chip", testid: "route-chip", text }));
  }
  const undecided = new Set(event.undecided ?? []);
  const reasons = DECISIONS.map((d, index) => h(
    "li",
    { dataset: { decision: d.key, chosen: String(Boolean(event[d.key])) } },
    h("span", { class: "route-decision", text: `${d.name}: ${event[d.key] ? "yes" : "no"}` }),
    undecided.has(d.key) ? " (undecided: the safe default)" : null,
    ` — ${event.reasons?.[index] ?? ""}`,
  ));
  if (event.shortcut) {
    reasons.push(h("li", { dataset: { decision: "shortcut", chosen: "true" } },
      h("span", { class: "route-decision", text: "Shortcut: yes" }), ` — ${event.shortcut.reason}`));
  }
  return h(
    "details",
    { class: "route", testid: "route" },
    h("summary", {}, h("span", { class: "route-why", text: "Why" }), ...chips),
    h("ul", { class: "route-reasons", testid: "route-reasons" }, ...reasons),
  );
}
