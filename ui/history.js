// A conversation's stored messages as transcript nodes: each person's message, then one
// assistant turn for everything up to the next (answers, tool calls and their results).
// What only the audit log holds (the route, the plan, the coder's proposals) is added to
// those turns from their tasks' events (`addAudited`).

import { Turn, userMessage } from "./turn.js";

/** The text of a message's content (a string, or LangChain's list of parts). */
function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "string" ? part : part?.text ?? "")).join("");
  }
  return "";
}

/** Stored messages before the active task's own, which its replay will show. */
export function beforeTask(messages, task) {
  if (!task) return messages;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i].role === "user" && textOf(messages[i].content) === task.message) {
      return messages.slice(0, i);
    }
  }
  return messages;
}

/**
 * The transcript for stored `messages` (`role`: user, assistant or tool).
 *
 * @returns {{nodes: HTMLElement[], exchanges: {message: string, turn: Turn|null}[]}}
 *   The nodes, and each person's message with the turn that answered it (if any).
 */
export function historyView(messages) {
  const nodes = [];
  const exchanges = [];
  let turn = null;
  for (const message of messages) {
    const text = textOf(message.content);
    if (message.role === "user") {
      turn = null;
      exchanges.push({ message: text, turn: null });
      nodes.push(userMessage(text));
      continue;
    }
    if (!turn) {
      turn = new Turn();
      nodes.push(turn.el);
      const exchange = exchanges.at(-1);
      if (exchange && !exchange.turn) exchange.turn = turn;
    }
    if (message.role === "assistant") {
      turn.addText(text);
      if (message.cut) turn.markCut(message.cut);
      if (message.tool_calls?.length) turn.addToolCalls(message.tool_calls);
    } else if (message.role === "tool") {
      turn.addToolResult({ ...message, content: text });
    }
  }
  return { nodes, exchanges };
}

/**
 * Give each past task's audited events to the turn that answered its message.
 *
 * @param {{message: string, turn: Turn|null}[]} exchanges - From `historyView`, in order.
 * @param {{task: object, events: object[]}[]} tasks - Oldest first.
 */
export function addAudited(exchanges, tasks) {
  let next = 0;
  for (const { task, events } of tasks) {
    // Tasks and messages are in the same order; a task whose message is not (or no longer)
    // stored is skipped without losing the place.
    const found = exchanges.findIndex((e, i) => i >= next && e.message === task.message);
    if (found < 0) continue;
    next = found + 1;
    exchanges[found].turn?.applyAudited(events);
  }
}
