// The terminal-like card of one tool call: the command, its live status, its output
// and exit code; for the coder tools also the proposed change as a highlighted diff.

import { copyButton } from "./copy.js";
import { diffView, splitDiff } from "./diff.js";
import { h, prettyJson, replaceChildren } from "./dom.js";
import { mcpContentView, ProgressLine } from "./mcp-content.js";
import { changedLine, revertButton } from "./revert.js";
import { downloadLinks } from "./upload.js";
import {
  classWords, decisionWords, deciderWords, showOutcome, statusWords, technicalDetails, verdictWords,
} from "./words.js";

/** The tools whose calls propose a change to a file (`code_proposed`). */
export const CODER_TOOLS = new Set(["generate_code", "fix_code", "refactor_code"]);

// Arguments up to this long read best on the command's own line; longer ones are indented.
const COMPACT_ARGS_CHARS = 80;

/** The command line a tool call stands for: the shell command, or the tool and its args. */
function commandText(tool, args) {
  if (tool === "shell_exec" && typeof args?.command === "string") return args.command;
  const oneLine = JSON.stringify(args ?? {});
  return `${tool} ${oneLine.length <= COMPACT_ARGS_CHARS ? oneLine : prettyJson(args)}`;
}

/** The command as a terminal line: `$ command` for the shell, `› tool {args}` otherwise. */
export function commandLine(tool, args) {
  const prompt = tool === "shell_exec" ? "$ " : "› ";
  return h(
    "pre",
    { class: "terminal-command", testid: "tool-command" },
    h("span", { class: "terminal-prompt", text: prompt, attrs: { "aria-hidden": "true" } }),
    commandText(tool, args),
  );
}

/** The card's title: an MCP tool (`<server>__<tool>`) shows its server's name first. */
function toolLabel(tool) {
  const cut = (tool ?? "").indexOf("__");
  if (cut <= 0) return h("span", { class: "tool-name", text: tool ?? "tool" });
  return h(
    "span",
    { class: "tool-name" },
    h("span", { class: "tool-server", testid: "tool-server", text: `${tool.slice(0, cut)} ›` }),
    tool.slice(cut + 2),
  );
}

/** Each card of the page by its element: a live event finds the card it belongs to. */
const CARDS = new WeakMap();

/**
 * Show a call's `tool_progress` on its card in `root`, if the card is there. The events
 * list leaves progress out (it is not audited): this is where it goes instead.
 */
export function showToolProgress(root, event) {
  const id = CSS.escape(String(event.call_id ?? ""));
  const el = root.querySelector(`[data-testid="tool-card"][data-call-id="${id}"]`);
  if (el) CARDS.get(el)?.progress(event);
}

/**
 * Route `tool_progress` to the tool cards under `root` instead of `recorder` (the
 * activity drawer, which every event of the task reaches); everything else goes on.
 */
export function withToolProgress(recorder, root) {
  const record = recorder.record.bind(recorder);
  recorder.record = (event) => (event.type === "tool_progress" ? showToolProgress(root, event) : record(event));
  return recorder;
}

/** Outcomes that replace the card's status: the call did not run (or not as asked). */
const STATUS_OUTCOMES = new Set(["denied", "cancelled", "waiting"]);

/**
 * How a finished call was decided, from its `tool_call_finished` fields: `{outcome, by,
 * reason}` as a reopened conversation's transcript says it (ducklm/runtime/call_outcomes.py).
 */
export function callOutcome({ decision, approved_by: approvedBy, verdict, status, output,
  declined, repeat_of: repeatOf }) {
  if (repeatOf) return { outcome: "repeated" };
  if (decision === "reject") return { outcome: "denied", by: "you", reason: declined || null };
  if (verdict === "deny") {
    return { outcome: "denied", by: "policy", reason: String(output ?? "").replace(/^blocked by policy: /, "") };
  }
  if (status === "unknown") return { outcome: "unknown", reason: output };
  const by = decision || approvedBy === "person" ? "you" : approvedBy || "policy";
  return { outcome: "approved", by };
}

/**
 * A tool call's card, live: created at `tool_call_started`, completed by `finish` with the
 * `tool_call_finished` event.
 */
export class ToolCard {
  constructor({ callId, tool, args, status = "running" }) {
    this.status = h("span", { class: "tool-status", testid: "tool-status", text: statusWords(status) });
    this.output = h("pre", { class: "terminal-output", testid: "tool-output", hidden: true });
    this.copy = copyButton(() => this.output.textContent, {
      label: "Copy output",
      testid: "tool-copy",
      className: "copy-button tool-copy",
    });
    this.copy.hidden = true;
    this.meta = h("div", { class: "tool-meta", testid: "tool-meta", hidden: true });
    this.outcome = h("p", { class: "tool-meta tool-outcome", testid: "tool-outcome", hidden: true });
    this.code = h("div", { class: "code-change", testid: "code-change", hidden: true });
    this.changes = h("div", { class: "tool-undo", testid: "tool-undo", hidden: true });
    this.progressLine = new ProgressLine();
    this.content = h("div", { class: "tool-content", hidden: true });
    this.el = h(
      "section",
      {
        class: "tool-card",
        testid: "tool-card",
        dataset: { callId: callId ?? "", status, tool: tool ?? "" },
        attrs: { "aria-label": `Tool call ${tool ?? ""}` },
      },
      h("header", { class: "tool-head" }, toolLabel(tool), this.copy, this.status),
      commandLine(tool, args),
      this.progressLine.el,
      this.outcome,
      this.code,
      this.output,
      this.content,
      this.meta,
      this.changes,
    );
    CARDS.set(this.el, this);
  }

  /** Show a `tool_progress` event of this call, while it runs. */
  progress(event) {
    if (this.el.dataset.status === "running") this.progressLine.show(event);
  }

  /** The files this call changed (`changed_files` of its finish), with a Revert button. */
  offerRevert({ changed_files: changed, undo_id: undoId, undo_warning: warning }) {
    if (!changed?.length || !this.changes.hidden) return;
    const callId = this.el.dataset.callId;
    this.changes.replaceChildren(
      changedLine(changed),
      revertButton({ callId, label: "Revert", testid: "tool-revert", undoIds: [undoId] }),
    );
    // What undo cannot put back (its earlier content was too large or too slow to keep).
    if (warning) {
      this.changes.append(h("p", { class: "tool-undo-warning", testid: "tool-undo-warning", text: warning }));
    }
    const downloads = downloadLinks(changed);
    if (downloads) this.changes.append(downloads);
    this.changes.hidden = false;
  }

  /**
   * Show a coder proposal (`code_proposed`, or the diff fields of `tool_call_finished`):
   * the explanation, a failed syntax check or error in plain words, and the diff.
   */
  showCode({ diff, explanation, syntax_ok: syntaxOk, syntax_error: syntaxError, error }) {
    const parts = [];
    if (explanation) parts.push(h("p", { class: "code-explanation", testid: "code-explanation", text: explanation }));
    if (syntaxOk === false) {
      const detail = syntaxError ? `: ${syntaxError}` : "";
      parts.push(h("p", { class: "code-problem", testid: "code-syntax-error", text: `Syntax check failed${detail}` }));
    }
    if (error) parts.push(h("p", { class: "code-problem", testid: "code-error", text: `Coder error: ${error}` }));
    if (diff) parts.push(diffView(diff));
    if (!parts.length) return;
    this.code.replaceChildren(...parts);
    this.code.hidden = false;
  }

  /** Show the result of `tool_call_finished` (or of a tool message from history). */
  finish(result) {
    const { status, exit_code: exitCode, truncated, decision, verdict, command_class: commandClass,
      diff } = result;
    let { output } = result;
    // A call the person denied "errors" for the model; to the person it was denied.
    const state = decision === "reject" ? "denied" : status || "done";
    this.el.dataset.status = state;
    this.status.textContent = statusWords(state, exitCode);
    this.progressLine.hide();
    this.showContent(result.mcp_content);
    // A coder call's output ends with its diff: the diff is shown highlighted instead.
    const coder = CODER_TOOLS.has(this.el.dataset.tool) && typeof output === "string";
    const split = coder ? splitDiff(output) : null;
    // (Its explanation is in the output's first line already.)
    if (this.code.hidden && (split?.diff || diff)) this.showCode({ diff: diff || split.diff });
    if (split?.diff) output = split.before;
    if (output !== undefined && output !== null && output !== "") {
      this.output.textContent = truncated ? `${output}\n… (output truncated)` : String(output);
      this.output.hidden = false;
      this.copy.hidden = false;
    }
    // A `tool_call_finished` event (not a stored result) says how the call was decided.
    if (verdict !== undefined) this.label(callOutcome(result));
    const facts = [];
    if (typeof exitCode === "number") facts.push(`exit code ${exitCode}`);
    // How the call was decided is the outcome line's, in words; the terms behind it are
    // one click away.
    if (commandClass) facts.push(classWords(commandClass));
    const details = technicalDetails([["tool", this.el.dataset.tool],
      ["result", statusWords(state, exitCode)], ["DuckLM's rules", verdict && verdictWords(verdict)],
      ["the command", commandClass && classWords(commandClass)],
      ["decided by", result.approved_by && deciderWords(result.approved_by)],
      ["your answer", decision && decisionWords(decision)]], "tool-details");
    replaceChildren(this.meta, h("span", { testid: "tool-facts", text: facts.join(" · ") }), details);
    this.meta.hidden = facts.length === 0 && !details;
    if (typeof exitCode === "number") this.el.dataset.exitCode = String(exitCode);
  }

  /** What an MCP tool returned beyond its text: images, audio, links, structured content. */
  showContent(content) {
    const view = mcpContentView(content);
    if (!view) return;
    this.content.replaceChildren(view);
    this.content.hidden = false;
  }

  /** Say how the call was decided (`{outcome, by, reason}`, see `callOutcome`). */
  label(decided) {
    this.el.dataset.outcome = decided.outcome;
    showOutcome(this.outcome, decided);
    this.outcome.hidden = false;
    if (STATUS_OUTCOMES.has(decided.outcome)) {
      this.el.dataset.status = decided.outcome;
      this.status.textContent = statusWords(decided.outcome);
    }
  }

  /** Whether this call changed files (and so can be reverted). */
  get changedFiles() {
    return !this.changes.hidden;
  }
}
