// Words for people: what the chat's chips, badges and card lines say, in one place for
// every file that shows them (route.js, tool-card.js). The technical names they stand for
// (the router's decisions, the policy's verdict, the command class) stay one click away,
// in a collapsed "details" or a chip's title.

import * as api from "./api.js";
import { h } from "./dom.js";

/** The router's decisions, in the order of `route_decided.reasons`: the chip, the reason's name. */
export const ROUTE_DECISIONS = [
  { key: "recall", chip: "looked in memory", name: "Look in memory" },
  { key: "plan", chip: "made a plan", name: "Make a plan" },
  { key: "coder", chip: "wrote code", name: "Write code" },
  { key: "critique", chip: "checks its answer", name: "Check the answer afterwards" },
];
/** The chip of a turn that used none of them. */
export const ROUTE_DIRECT = "simple request";
/** The shortcut's word for "no call at all: the thinker answers". */
const NO_TOOL = "answer";

/** What the built-in tools do, as a person says it; any other tool keeps its name. */
const TOOL_WORDS = {
  file_read: "read a file",
  file_write: "write a file",
  list_dir: "list the files",
  grep: "search the files",
  shell_exec: "run a command",
  generate_code: "write code",
  fix_code: "fix code",
  refactor_code: "rework code",
};

/** A tool's name in words ("read a file"), or the name itself when it has none. */
export function toolWords(tool) {
  return TOOL_WORDS[tool] ?? tool ?? "a tool";
}

/** The chip of a rule-made call (`route_decided.shortcut`): "no tool needed", "used a rule: read a file". */
export function shortcutChip(tool) {
  return tool === NO_TOOL ? "no tool needed" : `used a rule: ${toolWords(tool)}`;
}

/** A tool card's status badge in words; `data-status` keeps the machine's word. */
const STATUS_WORDS = {
  success: "done",
  error: "failed",
  rejected: "denied",
  cancelled: "stopped",
  waiting: "waits for you",
  unknown: "outcome unknown",
};

/**
 * The status badge's word for `status` (running, done, failed, denied...). A command that
 * ran to its end but returned a non-zero code is not "done" to a person (grep finding
 * nothing returns 1): the badge says how it ended.
 */
export function statusWords(status, exitCode) {
  if (status === "success" && typeof exitCode === "number" && exitCode !== 0) return `ended with code ${exitCode}`;
  return STATUS_WORDS[status] ?? status;
}

/** What a command does, by the policy's class of its riskiest part (tools/commands/verdict.py). */
const CLASS_WORDS = {
  read_only: "only reads",
  workspace_write: "writes files",
  network: "uses the network",
  system: "can change the system",
  destructive: "deletes files",
  dangerous: "can wreck the machine",
};

/** The command class in words ("only reads"), or the class with spaces when it is new. */
export function classWords(commandClass) {
  return CLASS_WORDS[commandClass] ?? String(commandClass).replaceAll("_", " ");
}

/** What DuckLM's rules said of a call (tools/policy.py: the verdict's action). */
const VERDICT_WORDS = { allow: "safe to run without asking", ask: "ask you first", deny: "blocked" };

/** The policy's verdict in words ("ask you first"), or the verdict itself when it is new. */
export function verdictWords(verdict) {
  return VERDICT_WORDS[verdict] ?? String(verdict);
}

/** A person's decision in words, as the answered card says it (question-cards.js DECISIONS). */
const DECISION_WORDS = { approve: "allowed once", allow_forever: "allowed forever", reject: "denied", edit: "edited, then allowed" };

/** The decision in words ("denied"), or the decision itself when it is new. */
export function decisionWords(decision) {
  return DECISION_WORDS[decision] ?? String(decision);
}

/** Who decided a call (`approved_by`: person, policy, rule N), in words. */
export function deciderWords(by) {
  if (by === "person") return "you";
  if (by === "policy") return "DuckLM's rules";
  return /^rule \d+$/.test(by) ? `your ${by}` : String(by);
}

/** The allow-forever rules (`GET /v1/approvals/rules`), fetched again only for an unknown id. */
let rules = null;

/** The pattern of allow-forever rule `id`, or null when it is gone (revoked) or unreadable. */
async function rulePattern(id) {
  const find = async () => (await rules).find((rule) => String(rule.id) === id);
  const fetchRules = () => api.get("/v1/approvals/rules").catch(() => []);
  rules ??= fetchRules();
  let found = await find();
  if (!found) {
    rules = fetchRules(); // a rule made since the last look
    found = await find();
  }
  return found?.pattern ?? null;
}

/**
 * Who decided a call, in words: the person, DuckLM's own rules (the policy), or a rule the
 * person made with "allow forever" (`rule N`, whose pattern `ruleWords` fills in).
 */
function decidedBy(outcome, by) {
  if (by === "policy") return outcome === "denied" ? "blocked by DuckLM's safety rules" : "allowed without asking: DuckLM's rules call it safe";
  if (/^rule \d+$/.test(by ?? "")) return `${outcome === "denied" ? "denied" : "allowed"} by your rule`;
  return by ? `${outcome} by ${by}` : outcome;
}

/**
 * Show how a call was decided (`{outcome, by, reason}`) in `el`: "approved by you",
 * "blocked by DuckLM's safety rules: reason", "allowed by your rule: ls *".
 */
export function showOutcome(el, { outcome, by, reason }) {
  const words = decidedBy(outcome, by);
  el.textContent = reason ? `${words}: ${reason}` : words;
  const rule = /^rule (\d+)$/.exec(by ?? "");
  if (!rule) return;
  el.dataset.rule = rule[1];
  rulePattern(rule[1]).then((pattern) => {
    // A rule revoked since still answered for this call: say which one it was.
    if (el.dataset.rule === rule[1]) el.textContent = `${words}: ${pattern ?? `rule ${rule[1]}, since revoked`}`;
  });
}

/**
 * The technical facts behind the plain words, collapsed: `pairs` is [name, value][],
 * empty values left out. Returns null when nothing is left.
 *
 * @param {Array<[string, unknown]>} pairs
 * @param {string} testid
 * @returns {HTMLElement|null}
 */
export function technicalDetails(pairs, testid) {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== null && value !== "");
  if (!shown.length) return null;
  return h(
    "details",
    { class: "tech-details", testid },
    h("summary", { text: "details" }),
    h("dl", {}, ...shown.flatMap(([name, value]) => [h("dt", { text: name }), h("dd", { text: String(value) })])),
  );
}
