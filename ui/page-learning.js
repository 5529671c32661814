// The pages of what DuckLM learned: skills (read-only), memory (search, delete) and
// experience (the critic's verdict on past turns).

import * as api from "./api.js";
import { formatTime, h } from "./dom.js";
import { showError, showInfo } from "./notify.js";

const MEMORY_LIMIT = 100;
const SEARCH_K = 10;
const EXPERIENCE_LIMIT = 50;

/** A list from an API answer that may be a bare list or wrap one under a known key. */
function listFrom(answer, ...keys) {
  if (Array.isArray(answer)) return answer;
  for (const key of keys) if (Array.isArray(answer?.[key])) return answer[key];
  return [];
}

function bulletList(title, items) {
  if (!items?.length) return null;
  return h("div", { class: "detail-list" }, h("h4", { text: title }), h("ul", {}, ...items.map((t) => h("li", { text: String(t) }))));
}

export class SkillsPage {
  constructor({ list, problems }) {
    this.list = list;
    this.problems = problems;
  }

  async show() {
    let answer;
    try {
      answer = await api.get("/v1/skills");
    } catch (error) {
      showError(error);
      return;
    }
    this.list.replaceChildren(...listFrom(answer, "skills", "items").map((s) => this.skill(s)));
    const problems = listFrom(answer?.problems);
    this.problems.replaceChildren(
      ...problems.map((p) => h("li", { class: "card-error", text: `${p.path ?? "?"}: ${p.message ?? ""}` })),
    );
  }

  skill(skill) {
    return h(
      "li",
      { class: "page-card", testid: "skill", dataset: { id: skill.id } },
      h(
        "details",
        {},
        h("summary", {}, h("strong", { text: skill.name || skill.id }), h("span", { class: "muted", text: ` ${skill.description ?? ""}` })),
        bulletList("Triggers", skill.triggers),
        skill.procedure?.length
          ? h("div", { class: "detail-list" }, h("h4", { text: "Procedure" }), h("ol", {}, ...skill.procedure.map((step) => h("li", { text: step }))))
          : null,
        bulletList("Examples", skill.examples),
        skill.notes ? h("p", { class: "muted", text: skill.notes }) : null,
      ),
    );
  }
}

export class MemoryPage {
  /** @param {{form: HTMLFormElement, query: HTMLInputElement, list: HTMLElement, status: HTMLElement}} elements */
  constructor({ form, query, list, status }) {
    Object.assign(this, { form, query, list, status });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.show();
    });
  }

  /** The search results for the query box, or the latest memories when it is empty. */
  async show() {
    const q = this.query.value.trim();
    let records;
    try {
      if (q) {
        const answer = await api.get(api.withQuery("/v1/memory/search", { q, k: SEARCH_K }));
        records = listFrom(answer, "hits", "results", "items");
        this.status.textContent = answer?.warning ?? `${records.length} found for “${q}”.`;
      } else {
        records = listFrom(await api.get(api.withQuery("/v1/memory", { limit: MEMORY_LIMIT })), "memories", "items");
        this.status.textContent = `${records.length} memories, newest first.`;
      }
    } catch (error) {
      showError(error);
      return;
    }
    this.list.replaceChildren(...records.map((item) => this.memory(item)));
  }

  memory(item) {
    // A search hit holds its record with the scores; a list item is the record itself.
    const record = item.record ?? item;
    const facts = [record.scope, record.memory_type, formatTime(record.created_at)];
    if (typeof item.score === "number") facts.push(`score ${item.score.toFixed(3)}`);
    return h(
      "li",
      { class: "page-card memory", testid: "memory-item", dataset: { id: record.id } },
      h("div", {}, h("p", { class: "memory-text", text: record.text ?? "" }), h("p", { class: "muted", text: facts.filter(Boolean).join(" · ") })),
      h("button", {
        type: "button",
        class: "danger",
        testid: "memory-delete",
        text: "Delete",
        attrs: { "aria-label": `Delete the memory: ${record.text ?? ""}` },
        on: { click: () => this.remove(record) },
      }),
    );
  }

  async remove(record) {
    try {
      await api.del(`/v1/memory/${encodeURIComponent(record.id)}`);
      showInfo("Memory deleted.");
    } catch (error) {
      showError(error);
    }
    await this.show();
  }
}

export class ExperiencePage {
  constructor({ list }) {
    this.list = list;
  }

  async show() {
    let records;
    try {
      records = listFrom(await api.get(api.withQuery("/v1/experience", { limit: EXPERIENCE_LIMIT })), "items", "records");
    } catch (error) {
      showError(error);
      return;
    }
    this.list.replaceChildren(...records.map((record) => this.record(record)));
  }

  record(record) {
    const score = typeof record.score === "number" ? record.score.toFixed(2) : "?";
    return h(
      "li",
      { class: "page-card", testid: "experience-item" },
      h("p", {}, h("strong", { text: `Score ${score}` }), h("span", { class: "muted", text: ` · ${formatTime(record.created_at)}` })),
      record.summary ? h("p", { text: record.summary }) : null,
      record.lesson ? h("p", {}, h("em", { text: "Lesson: " }), record.lesson) : null,
      bulletList("What worked", record.what_worked),
      bulletList("What failed", record.what_failed),
    );
  }
}
