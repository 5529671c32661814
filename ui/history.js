// A conversation's stored messages as transcript nodes: each person's message, then one
// assistant turn for everything up to the next (answers, tool calls and their results).

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

/** The transcript nodes for stored `messages` (`role`: user, assistant or tool). */
export function historyNodes(messages) {
  const nodes = [];
  let turn = null;
  for (const message of messages) {
    const text = textOf(message.content);
    if (message.role === "user") {
      turn = null;
      nodes.push(userMessage(text));
      continue;
    }
    if (!turn) {
      turn = new Turn();
      nodes.push(turn.el);
    }
    if (message.role === "assistant") {
      turn.addText(text);
      if (message.tool_calls?.length) turn.addToolCalls(message.tool_calls);
    } else if (message.role === "tool") {
      turn.addToolResult({ ...message, content: text });
    }
  }
  return nodes;
}
