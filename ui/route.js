// The router's decision (`route_decided`) as one small line: chips in plain words for what
// the turn uses (ui/words.js), and the router's reasons behind a collapsed "why?".

import { h } from "./dom.js";
import { ROUTE_DECISIONS, ROUTE_DIRECT, shortcutChip } from "./words.js";

/** One chip; its title names the router's own decision, for whoever wants the term. */
function chip(text, term) {
  return h("span", { class: "route-chip", testid: "route-chip", text, title: term });
}

/** The chips: the decisions taken, the rule-made call if any, else "answered directly". */
function routeChips(event) {
  const chips = ROUTE_DECISIONS.filter((d) => event[d.key]).map((d) => chip(d.chip, `${d.key}: yes`));
  // The rules made the call themselves: say which tool (or none), like the decisions.
  if (event.shortcut) chips.push(chip(shortcutChip(event.shortcut.tool), `shortcut: ${event.shortcut.tool}`));
  return chips.length ? chips : [chip(ROUTE_DIRECT, "no recall, plan, coder or critique")];
}

/**
 * The `<details>` line for a `route_decided` event (collapsed by default).
 *
 * @param {{recall?: boolean, plan?: boolean, coder?: boolean, critique?: boolean,
 *   reasons?: string[], undecided?: string[],
 *   shortcut?: {tool: string, reason: string} | null}} event
 * @returns {HTMLElement}
 */
export function routeLine(event) {
  const undecided = new Set(event.undecided ?? []);
  const reasons = ROUTE_DECISIONS.map((d, index) => h(
    "li",
    { dataset: { decision: d.key, chosen: String(Boolean(event[d.key])) } },
    h("span", { class: "route-decision", text: `${d.name} (${d.key}): ${event[d.key] ? "yes" : "no"}` }),
    undecided.has(d.key) ? " (undecided: the safe default)" : null,
    ` — ${event.reasons?.[index] ?? ""}`,
  ));
  if (event.shortcut) {
    reasons.push(h("li", { dataset: { decision: "shortcut", chosen: "true" } },
      h("span", { class: "route-decision", text: `A rule chose the tool (shortcut: ${event.shortcut.tool})` }),
      ` — ${event.shortcut.reason}`));
  }
  return h(
    "details",
    { class: "route", testid: "route" },
    h("summary", {}, ...routeChips(event), h("span", { class: "route-why", text: "why?" })),
    h("ul", { class: "route-reasons", testid: "route-reasons" }, ...reasons),
  );
}
