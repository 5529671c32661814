// The header's model box: the model server's health (up, loading its model, restarting
// after a crash, down: `GET /v1/models/server`, ducklm/runtime/model_choice.py) and the
// picker of the model the shown conversation answers with (`PUT
// /v1/conversations/{id}/model`). A choice on a new conversation is kept until its first
// message creates it, and stored before that message is sent (`prepare`).

import * as api from "./api.js";
import { showError, showInfo } from "./notify.js";

const POLL_MS = 15000;
/** The server's state in words (`ModelServerView.status`). */
const STATE_WORDS = {
  up: "up",
  loading: "loading its model",
  restarting: "restarting",
  down: "down",
  unknown: "not checked yet",
};

export class ModelPicker {
  /** @param {{health: HTMLElement, select: HTMLSelectElement}} elements */
  constructor({ health, select }) {
    Object.assign(this, { health, select });
    this.server = null; // the last `GET /v1/models/server`
    this.conversationId = null;
    this.current = null; // the shown conversation's model
    this.pending = null; // chosen on a new conversation, stored once it exists
    this.saving = Promise.resolve(); // the choice being stored: read the model after it
    select.addEventListener("change", () => this.choose(select.value));
  }

  /** Check the server now and every little while. */
  watch() {
    this.refresh();
    setInterval(() => this.refresh(), POLL_MS);
  }

  async refresh() {
    try {
      this.server = await api.get("/v1/models/server");
    } catch {
      this.server = null; // DuckLM itself did not answer: the dot says so
    }
    this.showHealth();
    this.fill();
  }

  showHealth() {
    const server = this.server;
    const state = server?.status ?? "unknown";
    const who = server?.local ? "Local model" : "Model server";
    this.health.dataset.state = state;
    this.health.textContent = `${who}: ${STATE_WORDS[state] ?? state}`;
    const detail = server ? `${server.base_url}: ${server.detail}` : "DuckLM did not answer";
    this.health.title = server?.fix ? `${detail}. ${server.fix}` : detail;
  }

  /** The offered models, the configured one first; the conversation's selected. */
  fill() {
    const configured = this.server?.default ?? this.current;
    const names = [...new Set([configured, this.current, ...(this.server?.models ?? [])])].filter(Boolean);
    const chosen = this.pending ?? this.current ?? configured;
    this.select.replaceChildren(...names.map((name) => {
      const option = new Option(name === configured ? `${name} (configured)` : name, name);
      option.selected = name === chosen;
      return option;
    }));
    this.select.disabled = names.length < 2;
    this.select.title = names.length < 2
      ? "The model server offers no other model"
      : "The model this conversation answers with";
  }

  /** Show conversation `id`'s model (null: a new conversation). */
  async show(id) {
    this.conversationId = id;
    if (!id || this.pending) {
      this.current = null;
      this.fill();
      return;
    }
    await this.saving;
    try {
      const view = await api.get(`/v1/conversations/${encodeURIComponent(id)}/model`);
      if (id !== this.conversationId) return;
      this.current = view.model;
    } catch {
      this.current = null; // a conversation just deleted, say: the configured one shows
    }
    this.fill();
  }

  choose(name) {
    if (!this.conversationId) {
      this.pending = name; // stored when the first message creates the conversation
      return Promise.resolve();
    }
    this.saving = this.store(name);
    return this.saving;
  }

  async store(name) {
    const path = `/v1/conversations/${encodeURIComponent(this.conversationId)}/model`;
    try {
      const view = await api.request("PUT", path, { model: name });
      this.current = view.model;
      showInfo(`The next answers in this conversation come from ${view.model}.`);
    } catch (error) {
      showError(error);
    }
    this.fill();
  }

  /** A new conversation `id` was created: store the choice made before its first message. */
  async prepare(id) {
    this.conversationId = id;
    const name = this.pending;
    this.pending = null;
    if (name) await this.choose(name);
  }
}
