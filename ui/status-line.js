// The status line above the message box: what DuckLM is doing when no answer is
// streaming, so nothing waits in the dark. The embedding model loading behind a
// freshly started server (answers meanwhile go without recall), and the review
// (critic and memory policy) behind the conversation's last answer, with a way to skip it.
// Both come from polling: `/health` while the model loads, the conversation's review
// state while one runs or waits (`GET /v1/conversations/{id}/review`).

import * as api from "./api.js";
import { showError } from "./notify.js";

const POLL_MS = 1000;
const WARMUP_POLL_MS = 2000;
// In words for people; the title keeps the terms (embedding model, critic, memory policy).
const LOADING = "Memory is getting ready: answers do not use it until then.";
const REVIEW_TEXT = {
  reviewing: "Reviewing the last answer: checking it, and what to remember…",
  waiting: "The review of the last answer waits until the conversation is idle.",
};

export class StatusLine {
  /**
   * @param {{warmup: HTMLElement, review: HTMLElement, reviewText: HTMLElement,
   *   skip: HTMLButtonElement}} elements - The two lines (hidden when idle), the review
   *   line's text and its Skip button.
   */
  constructor({ warmup, review, reviewText, skip }) {
    Object.assign(this, { warmup, review, reviewText, skip });
    this.conversationId = null;
    this.polling = null; // the review poll's timer
    skip.addEventListener("click", () => this.skipReview());
  }

  /** Show the embedding model's state until it is ready (once per page). */
  async watchWarmup() {
    let state;
    try {
      const health = await fetch("/health", { cache: "no-store" });
      state = (await health.json()).checks?.embeddings ?? "cold";
    } catch {
      return; // the chat's own requests say when the server is unreachable
    }
    if (state === "loading") {
      this.warmup.textContent = LOADING;
      this.warmup.title = "The embedding model that memory search needs is loading.";
      this.warmup.hidden = false;
      setTimeout(() => this.watchWarmup(), WARMUP_POLL_MS);
    } else if (state.startsWith("failed")) {
      this.warmup.textContent = "Memory could not start: answers do not use it.";
      this.warmup.title = `The embedding model did not load (${state}).`;
      this.warmup.hidden = false;
    } else {
      this.warmup.hidden = true;
    }
  }

  /** Follow the review of conversation `id` (null: none) until none runs or waits. */
  watchReview(id) {
    clearTimeout(this.polling);
    this.conversationId = id;
    this.showReview("idle");
    if (id) this.pollReview(id);
  }

  async pollReview(id) {
    let view;
    try {
      view = await api.get(`/v1/conversations/${encodeURIComponent(id)}/review`);
    } catch {
      return; // a deleted conversation, or the server gone: nothing to show
    }
    if (id !== this.conversationId) return;
    this.showReview(view.state);
    if (view.state !== "idle") this.polling = setTimeout(() => this.pollReview(id), POLL_MS);
  }

  showReview(state) {
    this.review.hidden = state === "idle";
    this.review.dataset.state = state;
    this.reviewText.textContent = REVIEW_TEXT[state] ?? "";
    this.reviewText.title = state === "idle" ? "" : "The critic and the memory policy";
  }

  async skipReview() {
    const id = this.conversationId;
    if (!id) return;
    this.skip.disabled = true;
    try {
      await api.post(`/v1/conversations/${encodeURIComponent(id)}/review/skip`, {});
      if (id === this.conversationId) this.watchReview(id);
    } catch (error) {
      showError(error);
    } finally {
      this.skip.disabled = false;
    }
  }
}
