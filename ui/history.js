// A reopened conversation, as it happened: each person's message, then one assistant turn
// built with the live view's own parts. The server's transcript
// (`GET /v1/conversations/{id}/transcript`, ducklm/runtime/transcript.py) gives each
// exchange its stored messages (answers, tool calls, results) and what only the audit
// log holds: the route, the plan and the coder's proposals (its `events`), how each call
// was decided (`calls`), the questions asked (`questions`), a stopped answer's partial
// text (`partial`) and a failed turn's error (`error`).

import { ApprovalCard, ElicitationCard, PasswordCard } from "./question-cards.js";
import { Turn, userMessage } from "./turn.js";

/** The card each kind of question was asked with (`questions[].kind`). */
const QUESTION_CARDS = { approval: ApprovalCard, password: PasswordCard, elicitation: ElicitationCard };

/** The text of a message's content (a string, or LangChain's list of parts). */
function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "string" ? part : part?.text ?? "")).join("");
  }
  return "";
}

/**
 * The transcript's nodes for `exchanges`, up to the active task's (its stream replays it).
 *
 * @param {object[]} exchanges - The transcript's exchanges, oldest first.
 * @param {{task_id: string}|null} active - The task still open in the conversation.
 * @returns {HTMLElement[]}
 */
export function transcriptView(exchanges, active) {
  const nodes = [];
  for (const exchange of exchanges) {
    if (active && exchange.task_id === active.task_id) break;
    const bubble = userMessage(exchange.message);
    if (exchange.task_id) bubble.dataset.taskId = exchange.task_id; // its branch controls
    nodes.push(bubble);
    const turn = pastTurn(exchange);
    if (turn) nodes.push(turn.el);
  }
  return nodes;
}

/** The turn that answered one exchange, or null when nothing did. */
function pastTurn(exchange) {
  const shown = exchange.messages.length || exchange.calls.length || exchange.partial
    || exchange.error || exchange.status === "cancelled";
  if (!shown) return null;
  const turn = new Turn();
  addMessages(turn, exchange.messages);
  turn.applyAudited(exchange.events);
  addDecisions(turn, exchange);
  addEnd(turn, exchange);
  return turn;
}

function addMessages(turn, messages) {
  for (const message of messages) {
    const text = textOf(message.content);
    if (message.role === "assistant") {
      // The reasoning the live `reasoning` events showed, in the same collapsed block.
      if (message.reasoning) turn.onReasoning({ type: "reasoning", text: message.reasoning });
      // The live view showed a step's result in the plan, never as the answer: so here.
      if (!message.working) turn.addText(text);
      if (message.cut) turn.markCut(message.cut);
      if (message.tool_calls?.length) turn.addToolCalls(message.tool_calls);
    } else if (message.role === "tool") {
      turn.addToolResult({ ...message, content: text });
    }
  }
}

/** Tool cards as the live view finished them, labelled; the questions, answered. */
function addDecisions(turn, exchange) {
  for (const event of exchange.events) {
    // A call that started and never finished (stopped) has a card too.
    if (event.type === "tool_call_started" && !turn.tools.has(event.call_id)) turn.startTool(event);
    if (event.type === "tool_call_finished") turn.tools.get(event.call_id)?.finish(event);
  }
  for (const call of exchange.calls) turn.tools.get(call.call_id)?.label(call);
  for (const question of exchange.questions) {
    const card = new QUESTION_CARDS[question.kind](question.event, null);
    turn.ask(card);
    // Where the live view showed it: before the calls it asked about.
    const first = question.call_ids.map((id) => turn.tools.get(id)?.el).find(Boolean);
    if (first) first.before(card.el);
    card.settle(question.outcome); // read-only: the answer was given
  }
}

/** How the turn ended: a stopped answer's text, a failed turn's error, its status. */
function addEnd(turn, exchange) {
  if (exchange.partial) {
    turn.addText(exchange.partial);
    if (exchange.status === "cancelled") turn.markCut("stopped");
  }
  if (exchange.error) turn.onError({ message: exchange.error });
  const status = exchange.status ?? "completed";
  turn.setState(status === "running" ? "completed" : status);
}
