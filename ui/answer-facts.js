// The line under an answer: which model spoke it, how soon its first word came, how many
// tokens and how fast, whether it was cut (`answer_facts`, ducklm/runtime/answer_facts.py),
// and a button that copies the whole answer as its Markdown source. A reopened
// conversation shows the same line: the event is audited (ducklm/runtime/transcript.py).

import { copyButton } from "./copy.js";
import { h } from "./dom.js";

/** Why an answer was cut, in words (`answer_cut.reason`; the turn's note says the same). */
const CUT_WORDS = { repeating: "cut: it repeated itself", length: "cut at the length limit" };

/** Seconds as people read them: "0.42 s", "3.1 s", "12 s". */
function seconds(value) {
  if (value < 1) return `${value.toFixed(2)} s`;
  return value < 10 ? `${value.toFixed(1)} s` : `${Math.round(value)} s`;
}

/**
 * The facts in plain words, e.g. "local · first token after 0.42 s · 42 tokens at 31/s".
 *
 * @param {{model?: string, first_token_s?: number, tokens?: number,
 *   tokens_counted_by?: string, tokens_per_s?: number|null, cut?: string|null,
 *   prompt_cut?: boolean}} facts
 * @returns {string}
 */
export function factsText(facts) {
  const parts = [facts.model || "no model: a tool's result"];
  if (typeof facts.first_token_s === "number") parts.push(`first token after ${seconds(facts.first_token_s)}`);
  if (typeof facts.tokens === "number") {
    const about = facts.tokens_counted_by === "pieces" ? "about " : "";
    const rate = facts.tokens_per_s ? ` at ${Math.round(facts.tokens_per_s)}/s` : "";
    parts.push(`${about}${facts.tokens} tokens${rate}`);
  }
  if (facts.cut) parts.push(CUT_WORDS[facts.cut] ?? "cut");
  if (facts.prompt_cut) parts.push("the conversation was shortened to fit the model");
  return parts.join(" · ");
}

/** The footer of one assistant turn: its facts (once known) and Copy answer. */
export class AnswerFooter {
  /** @param {() => string} readAnswer - The answer's Markdown, read when copied. */
  constructor(readAnswer) {
    this.facts = h("span", { class: "answer-facts", testid: "answer-facts", hidden: true });
    this.copy = copyButton(readAnswer, {
      label: "Copy answer",
      testid: "copy-answer",
      className: "copy-button ghost",
      title: "Copy the whole answer as Markdown",
    });
    this.el = h("div", { class: "answer-footer", testid: "answer-footer", hidden: true },
      this.facts, this.copy);
  }

  /** Show the footer (the turn has text to copy). */
  show() {
    this.el.hidden = false;
  }

  /** Show an `answer_facts` event's facts. */
  setFacts(facts) {
    this.facts.textContent = factsText(facts);
    this.el.dataset.model = facts.model ?? "";
    if (facts.cut) this.el.dataset.cut = facts.cut;
    this.facts.hidden = false;
    this.show();
  }
}
