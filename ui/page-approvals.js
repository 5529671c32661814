// The approvals page: questions waiting in any conversation (answered from here, the
// task then continues on the server), and the "allow forever" rules, each revocable.

import * as api from "./api.js";
import { formatTime, h } from "./dom.js";
import { showError, showInfo } from "./notify.js";
import { DECISIONS } from "./question-cards.js";
import { commandLine } from "./tool-card.js";

const KINDS = { approve: "primary", reject: "danger" };
const ANSWERS = DECISIONS.map((decision) => ({
  ...decision,
  testid: `pending-${decision.testid}`,
  kind: KINDS[decision.type] || "",
}));

export class ApprovalsPage {
  /** @param {{pending: HTMLElement, rules: HTMLElement}} lists - The two lists to fill. */
  constructor({ pending, rules }) {
    this.pending = pending;
    this.rules = rules;
  }

  async show() {
    await Promise.all([this.loadPending(), this.loadRules()]);
  }

  async loadPending() {
    try {
      const items = await api.get("/v1/approvals/pending");
      this.pending.replaceChildren(...items.map((item) => this.pendingItem(item)));
    } catch (error) {
      showError(error);
    }
  }

  pendingItem(item) {
    const actions = item.request?.action_requests ?? [];
    // A sudo password is typed in its conversation, never on a list page.
    const buttons = item.kind === "password" ? [] : ANSWERS.map((answer) =>
      h("button", {
        type: "button",
        class: answer.kind,
        testid: answer.testid,
        text: answer.label,
        on: { click: () => this.answer(item, answer, element) },
      }),
    );
    const element = h(
      "li",
      { class: "page-card", testid: "pending-approval", dataset: { id: item.id } },
      item.message ? h("p", { class: "muted", text: `Task: ${item.message}` }) : null,
      item.kind === "password" ? h("p", { text: "Waiting for a sudo password." }) : null,
      h("a", { href: `#/c/${encodeURIComponent(item.conversation_id)}`, text: "Open the conversation" }),
      ...actions.map((action) =>
        h(
          "div",
          { class: "approval-action" },
          action.description ? h("p", { class: "action-description", text: action.description }) : null,
          commandLine(action.name, action.args),
        ),
      ),
      h("div", { class: "card-actions" }, ...buttons),
    );
    return element;
  }

  async answer(item, answer, element) {
    try {
      await api.post(`/v1/approvals/${encodeURIComponent(item.id)}/${answer.type}`);
    } catch (error) {
      showError(error);
      await this.show();
      return;
    }
    showInfo(`${answer.outcome}; the task continues.`);
    element.remove();
    // The task runs on in the background; until its run ends (or asks again) the server
    // still counts the question as waiting and an "allow forever" rule is not yet
    // written. Follow the run to its end, then show the lists as they are.
    try {
      await api.stream("GET", `/v1/tasks/${encodeURIComponent(item.task_id)}/stream`, undefined, {
        onEvent: () => {},
      });
    } catch (error) {
      showError(error);
    }
    await this.show();
  }

  async loadRules() {
    try {
      const rules = await api.get("/v1/approvals/rules");
      this.rules.replaceChildren(...rules.map((rule) => this.ruleRow(rule)));
    } catch (error) {
      showError(error);
    }
  }

  ruleRow(rule) {
    return h(
      "li",
      { class: "page-card rule", testid: "approval-rule", dataset: { id: String(rule.id) } },
      h("div", { class: "rule-text" },
        h("code", { class: "rule-pattern", testid: "rule-pattern", text: rule.pattern ?? "" }),
        h("p", { class: "muted", text: [rule.tool, rule.description, formatTime(rule.created_at)].filter(Boolean).join(" · ") }),
      ),
      h("button", {
        type: "button",
        class: "danger",
        testid: "revoke-rule",
        text: "Revoke",
        attrs: { "aria-label": `Revoke the rule ${rule.pattern ?? ""}` },
        on: { click: () => this.revoke(rule) },
      }),
    );
  }

  async revoke(rule) {
    try {
      await api.del(`/v1/approvals/rules/${encodeURIComponent(rule.id)}`);
      showInfo("Rule revoked: DuckLM will ask again.");
    } catch (error) {
      showError(error);
    }
    await this.loadRules();
  }
}
