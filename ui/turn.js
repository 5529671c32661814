// One assistant turn in the transcript: the route line, the plan checklist, the answer
// text (Markdown), the reasoning, tool and question cards, in the order they happened. A
// turn is built either live from a task's events (`apply`) or from a conversation's
// stored messages (`addText` & co.) plus its task's audited events (`applyAudited`).

import { AnswerFooter } from "./answer-facts.js";
import { h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { PlanView } from "./plan.js";
import { ModelRestartLine } from "./model-restart.js";
import { ApprovalCard, ElicitationCard, PasswordCard } from "./question-cards.js";
import { routeLine } from "./route.js";
import { addUndoId, revertButton } from "./revert.js";
import { ToolCard } from "./tool-card.js";

/** What the status line says in each state of the task; completed says nothing. */
const STATUS_TEXT = {
  running: "Working…",
  interrupted: "Waiting for your answer.",
  failed: "The task failed.",
  cancelled: "Stopped.",
  completed: "",
};

/** What a cut answer says under it (`ducklm/models/answer_stream.py`: CUT_NOTES). */
const CUT_NOTES = {
  repeating: "stopped: repeating",
  length: "stopped at the length limit",
};

/** Audited event types that stored messages do not hold: a past turn adds them. */
const AUDIT_ONLY = new Set([
  "route_decided",
  "plan_created",
  "plan_step_started",
  "plan_step_finished",
  "plan_revised",
  "code_proposed",
  "answer_facts",
]);

/** Event type -> the Turn method that shows it. */
const EVENT_HANDLERS = {
  run_started: "onRunStarted",
  route_decided: "onRoute",
  plan_created: "onPlanCreated",
  plan_step_started: "onPlanStep",
  plan_step_finished: "onPlanStep",
  plan_revised: "onPlanRevised",
  code_proposed: "onCodeProposed",
  token: "onToken",
  answer_cut: "onAnswerCut",
  answer_facts: "onFacts",
  reasoning: "onReasoning",
  tool_call_started: "startTool",
  tool_call_finished: "finishTool",
  approval_requested: "onApproval",
  password_requested: "onPassword",
  elicitation_requested: "onElicitation",
  mcp_sampled: "onSampled",
  memory_stored: "onMemoryStored",
  server_capability: "onServerCapability",
  model_restarting: "onModelRestarting",
  model_restarted: "onModelRestarted",
  error: "onError",
  done: "onDone",
};

export class Turn {
  /**
   * @param {{onDecide: Function, onPassword: Function}} handlers - Called by the question
   *   cards with the person's answer; each returns a promise that resolves once the server
   *   has accepted it.
   */
  constructor(handlers = {}) {
    this.handlers = handlers;
    this.tools = new Map();
    this.proposals = new Map(); // call id -> code_proposed event, until its card exists
    this.plan = null;
    this.route = null;
    this.questions = [];
    this.text = null; // the text segment tokens go to: {el, source}
    this.segments = []; // every text segment, in order: the answer Copy answer copies
    this.reasoning = null; // the reasoning block reasoning goes to: {el, body}
    this.restart = null; // the "restarting the model server" line, once the server crashed
    this.runTokens = 0;
    this.state = "completed";
    this.body = h("div", { class: "turn-body" });
    this.status = h("p", { class: "turn-status", testid: "turn-status", hidden: true });
    this.undo = h("div", { class: "turn-undo", testid: "turn-undo", hidden: true });
    this.footer = new AnswerFooter(() => this.answerMarkdown());
    this.el = h(
      "article",
      { class: "turn turn-assistant", testid: "assistant-turn", attrs: { "aria-label": "DuckLM" } },
      this.body,
      this.footer.el,
      this.status,
      this.undo,
    );
  }

  /** Apply one live event of the task; types without a view here are ignored. */
  apply(event) {
    const method = EVENT_HANDLERS[event.type];
    if (method) this[method](event);
  }

  onRoute(event) {
    // One line per turn: a resumed run (or a replay) decides again, the line follows it.
    const line = routeLine(event);
    if (this.route) this.route.replaceWith(line);
    else this.body.prepend(line);
    this.route = line;
  }

  onPlanCreated(event) {
    this.ensurePlan().onCreated(event);
  }

  onPlanRevised(event) {
    this.ensurePlan().onRevised(event);
  }

  onPlanStep(event) {
    const plan = this.ensurePlan();
    if (event.type === "plan_step_started") plan.onStepStarted(event);
    else plan.onStepFinished(event);
  }

  ensurePlan() {
    if (!this.plan) {
      this.breakSegments();
      this.plan = new PlanView();
      // After the route line, before what the steps do.
      if (this.route) this.route.after(this.plan.el);
      else this.body.prepend(this.plan.el);
    }
    return this.plan;
  }

  onCodeProposed(event) {
    const card = this.tools.get(event.call_id);
    if (card) card.showCode(event);
    else this.proposals.set(event.call_id, event);
  }

  /** A past turn's audited events (its messages are shown already): the route and plan. */
  applyAudited(events) {
    for (const event of events) if (AUDIT_ONLY.has(event.type)) this.apply(event);
    for (const event of events) if (event.type === "tool_call_finished") this.offerRevert(event);
    const done = events.findLast((event) => event.type === "done");
    if (done && done.status !== "interrupted") this.plan?.end();
  }

  onToken(event) {
    this.appendText(event.text ?? "");
  }

  onAnswerCut(event) {
    // The repeat streamed before it was seen: the answer keeps the text before it.
    const segment = this.text;
    if (segment && event.dropped > 0) {
      segment.source = segment.source.slice(0, Math.max(0, segment.source.length - event.dropped));
      this.scheduleRender(segment);
    }
    this.markCut(event.reason);
  }

  /** The model, first token, tokens and rate under the answer (`answer_facts`). */
  onFacts(event) {
    this.footer.setFacts(event);
  }

  /** The whole answer as its Markdown source: every text segment, in order. */
  answerMarkdown() {
    return this.segments.map((segment) => segment.source.trim()).filter(Boolean).join("\n\n");
  }

  /** Say under the answer that it was cut, and why. */
  markCut(reason) {
    this.note("answer-cut", CUT_NOTES[reason] ?? "stopped");
  }

  onReasoning(event) {
    this.appendReasoning(event.text ?? "");
  }

  onApproval(event) {
    this.ask(new ApprovalCard(event, this.handlers.onDecide));
  }

  onPassword(event) {
    this.ask(new PasswordCard(event, this.handlers.onPassword));
  }

  onElicitation(event) {
    this.ask(new ElicitationCard(event, this.handlers.onElicit));
  }

  onMemoryStored(event) {
    this.note("memory-note", `Remembered: ${event.text ?? ""}`);
  }

  onServerCapability(event) {
    // Said once, when DuckLM finds the server cannot do what a role asked of it.
    this.note("memory-note", event.message);
  }

  onModelRestarting(event) {
    if (!this.restart) {
      this.breakSegments();
      this.restart = new ModelRestartLine();
      this.body.append(this.restart.el);
    }
    this.restart.restarting(event);
  }

  onModelRestarted(event) {
    this.restart?.restarted(event);
  }

  onError(event) {
    this.note("turn-error", event.message || "Something went wrong.", "alert");
  }

  onRunStarted() {
    // A new run of the same task means the open question was answered (live, or earlier
    // when a reload replays the task).
    this.closeQuestions("Answered");
    this.plan?.resume();
    this.runTokens = 0;
    this.setState("running");
  }

  onDone(event) {
    // Tokens are the answer as it streamed; a run that streamed none (e.g. a replay that
    // only kept audited events) shows the final answer instead.
    if (this.runTokens === 0 && event.answer) this.addText(event.answer);
    const status = event.status ?? "completed";
    // What streamed before a stop is kept, marked as the reopened conversation marks it.
    if (status === "cancelled" && this.runTokens > 0) this.markCut("stopped");
    if (status !== "interrupted") {
      this.closeQuestions(status === "completed" ? "Answered" : "Closed");
      this.plan?.end();
    }
    this.setState(status);
  }

  setState(state) {
    this.state = state;
    this.el.dataset.state = state;
    // While busy, screen readers wait; the finished answer is then announced once
    // instead of token by token.
    this.el.setAttribute("aria-busy", String(state === "running"));
    const text = STATUS_TEXT[state] ?? "";
    this.status.textContent = text;
    this.status.hidden = !text;
    this.status.dataset.state = state;
    if (state !== "running" && this.answerMarkdown()) this.footer.show();
  }

  /** Text from a stored assistant message, rendered at once. */
  addText(markdown) {
    if (!markdown) return;
    this.breakSegments();
    this.appendText(markdown, { immediate: true });
    this.text = null;
  }

  appendText(piece, { immediate = false } = {}) {
    if (!this.text) {
      const el = h("div", { class: "markdown", testid: "answer-text" });
      this.text = { el, source: "" };
      this.segments.push(this.text);
      this.reasoning = null;
      this.body.append(el);
    }
    this.text.source += piece;
    this.runTokens += 1;
    if (immediate) this.renderText(this.text);
    else this.scheduleRender(this.text);
  }

  // Re-rendering Markdown on every token would be wasted work: once per frame is enough.
  scheduleRender(segment) {
    if (segment.pending) return;
    segment.pending = true;
    requestAnimationFrame(() => this.renderText(segment));
  }

  renderText(segment) {
    segment.pending = false;
    segment.el.replaceChildren(renderMarkdown(segment.source));
  }

  appendReasoning(piece) {
    if (!this.reasoning) {
      const body = h("div", { class: "reasoning-text", testid: "reasoning-text" });
      const el = h(
        "details",
        { class: "reasoning", testid: "reasoning" },
        h("summary", { text: "Thinking" }),
        body,
      );
      this.reasoning = { el, body };
      this.text = null;
      this.body.append(el);
    }
    this.reasoning.body.append(document.createTextNode(piece));
  }

  /** Close the current text and reasoning so later pieces start after a card. */
  breakSegments() {
    this.text = null;
    this.reasoning = null;
  }

  startTool(event) {
    this.breakSegments();
    // One card per call id: a stream replayed after a reload repeats the start event.
    const existing = this.tools.get(event.call_id);
    if (existing) return existing;
    const card = new ToolCard({ callId: event.call_id, tool: event.tool, args: event.args });
    this.tools.set(event.call_id, card);
    this.body.append(card.el);
    const proposal = this.proposals.get(event.call_id);
    if (proposal) card.showCode(proposal);
    return card;
  }

  /** An MCP server's sampling request that DuckLM's model answered, on the call's card. */
  onSampled(event) {
    const card = this.tools.get(event.call_id);
    if (!card) return;
    const asked = (event.messages ?? []).map((m) => `${m.role}: ${m.text}`).join("\n");
    card.el.append(h(
      "details",
      { class: "tool-sampled", testid: "tool-sampled" },
      h("summary", { text: `${event.server} asked DuckLM's ${event.role} (${event.model})` }),
      h("pre", { text: asked }),
      h("pre", { testid: "tool-sampled-reply", text: event.text ?? "" }),
    ));
  }

  finishTool(event) {
    // A call refused before it ran may finish without having started.
    const card = this.tools.get(event.call_id) ?? this.startTool(event);
    card.finish(event);
    this.offerRevert(event);
  }

  /**
   * A call that changed files gets a Revert button, and the turn one that reverts the
   * turn's changes (named by its first such call; none made after it).
   */
  offerRevert(event) {
    if (!event.changed_files?.length) return;
    this.tools.get(event.call_id)?.offerRevert(event);
    if (!this.undo.hidden) {
      addUndoId(this.undo.firstChild, event.undo_id);
      return;
    }
    this.undo.replaceChildren(revertButton({
      callId: event.call_id, label: "Revert this turn", testid: "turn-revert", scope: "turn",
      undoIds: [event.undo_id],
    }));
    this.undo.hidden = false;
  }

  /** Tool calls of a stored assistant message; their results come as tool messages. */
  addToolCalls(calls) {
    this.breakSegments();
    for (const call of calls) {
      const card = new ToolCard({ callId: call.id, tool: call.name, args: call.args, status: "called" });
      this.tools.set(call.id, card);
      this.body.append(card.el);
    }
  }

  addToolResult(message) {
    const card = this.tools.get(message.tool_call_id);
    const result = { status: message.status || "done", output: message.content };
    if (card) card.finish(result);
  }

  ask(card) {
    this.breakSegments();
    this.questions.push(card);
    this.body.append(card.el);
  }

  /** The question still waiting for an answer, if any. */
  get openQuestion() {
    return this.questions.find((card) => card.isOpen) ?? null;
  }

  closeQuestions(label) {
    for (const card of this.questions) card.settle(label);
  }

  note(className, text, role) {
    this.breakSegments();
    this.body.append(h("p", { class: className, testid: className, text, role }));
  }
}

/** A person's message in the transcript (plain text: people do not write Markdown here). */
export function userMessage(text) {
  return h(
    "article",
    { class: "turn turn-user", testid: "user-message", attrs: { "aria-label": "You" } },
    h("p", { class: "user-text", text }),
  );
}
