// Search over conversations (`GET /v1/search`): the sidebar's box, whose results open a
// conversation scrolled to the message that matched, highlighted; and the Memory page's
// "Said in conversations" list beside its stored facts. Titles and what was said come
// from the server (the episodes DuckLM keeps of every message).

import * as api from "./api.js";
import { h } from "./dom.js";
import { showError } from "./notify.js";

const SEARCH_K = 20;
const DEBOUNCE_MS = 300;
const FIND_WITHIN_MS = 10_000; // the transcript loads after the hash changes
const SETTLE_MS = 1500; // a view being replaced is seen to go within this
const SPEAKERS = { user: "You said", assistant: "DuckLM said" };

/** `text` as nodes, each occurrence of a word of `query` in a <mark> (text nodes only). */
export function marked(text, query) {
  const words = query.split(/\s+/).filter((w) => w.length > 1).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!words.length) return [document.createTextNode(text)];
  const parts = text.split(new RegExp(`(${words.join("|")})`, "gi"));
  return parts.map((part, i) => (i % 2 ? h("mark", { text: part }) : document.createTextNode(part)));
}

/** One result: where it was found, the snippet with the query marked. */
function resultItem(hit, query, onOpen) {
  const where = hit.kind === "title" ? "Title" : SPEAKERS[hit.speaker] ?? "Said";
  const button = h(
    "button",
    {
      type: "button",
      class: "search-result",
      testid: "search-result",
      dataset: { conversationId: hit.conversation_id, kind: hit.kind, messageId: hit.message_id ?? "" },
      on: { click: () => onOpen(hit, query) },
    },
    h("span", { class: "search-result-title", text: hit.title || "New conversation" }),
    h("span", { class: "search-result-where muted", text: where }),
    h("span", { class: "search-result-snippet" }, ...marked(hit.snippet, query)),
  );
  return h("li", {}, button);
}

/** The sidebar's search box and its results. */
export class ConversationSearch {
  /**
   * @param {{form: HTMLFormElement, input: HTMLInputElement, results: HTMLElement,
   *   transcript: HTMLElement}} elements
   */
  constructor({ form, input, results, transcript }) {
    Object.assign(this, { form, input, results, transcript });
    this.timer = null;
    this.asked = 0; // only the latest answer is shown
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.search();
    });
    input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.search(), DEBOUNCE_MS);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.clear();
    });
  }

  clear() {
    this.input.value = "";
    this.results.replaceChildren();
    this.results.hidden = true;
  }

  async search() {
    const q = this.input.value.trim();
    const asked = ++this.asked;
    if (!q) return this.clear();
    let answer;
    try {
      answer = await api.get(api.withQuery("/v1/search", { q, k: SEARCH_K }));
    } catch (error) {
      showError(error);
      return;
    }
    if (asked !== this.asked) return;
    const items = answer.hits.map((hit) => resultItem(hit, q, (found) => this.open(found, q)));
    if (!items.length) items.push(h("li", { class: "muted search-none", text: `Nothing found for “${q}”.` }));
    this.results.replaceChildren(...items);
    this.results.hidden = false;
  }

  /** Open the conversation of `hit`; at its message when it is one, in its version. */
  async open(hit, query) {
    const target = `#/c/${encodeURIComponent(hit.conversation_id)}`;
    const switched = hit.kind === "message" && Boolean(hit.message_id) && await showVersionOf(hit);
    if (hit.kind === "message") showMessage(this.transcript, hit, query);
    if (location.hash !== target) location.hash = target;
    // The conversation shown already: its view is read again, in the version switched to.
    else if (switched) window.dispatchEvent(new HashChangeEvent("hashchange"));
  }
}

/**
 * Make the version that holds the message of `hit` the one shown, when another version
 * holds it (a regenerated or edited message's). Returns whether it switched.
 */
async function showVersionOf(hit) {
  const path = `/v1/conversations/${encodeURIComponent(hit.conversation_id)}/branches`;
  try {
    const { checkpoint_id: version } = await api.get(api.withQuery(`${path}/holding`, { message_id: hit.message_id }));
    if (!version) return false;
    await api.post(`${path}/switch`, { checkpoint_id: version });
    return true;
  } catch (error) {
    showError(error); // the conversation still opens, in the version it shows
    return false;
  }
}

/** Text folded for comparing what was stored with what the page shows (Markdown gone). */
function folded(text) {
  return text.replace(/[…*_`#>|[\]()-]/g, " ").replace(/\s+/g, " ").trim().toLowerCase();
}

/** The element of the transcript that shows the message of `hit`, or null. */
function findMessage(transcript, hit, query) {
  const selector = hit.speaker === "user" ? '[data-testid="user-message"]' : '[data-testid="answer-text"]';
  const shown = [...transcript.querySelectorAll(selector)];
  const snippet = folded(hit.snippet).slice(0, 80);
  const words = folded(query).split(" ").filter(Boolean);
  return (
    shown.find((el) => folded(el.textContent).includes(snippet)) ??
    shown.find((el) => words.every((w) => folded(el.textContent).includes(w))) ??
    null
  );
}

/**
 * Scroll the transcript to the message of `hit` once it is shown, and highlight it.
 * Waits for the conversation to load (the route opens it after the hash changes); a
 * match found in the view being left is found again in the new one when it replaces it.
 */
export function showMessage(transcript, hit, query) {
  let found = null;
  let until = performance.now() + FIND_WITHIN_MS;
  for (const old of transcript.querySelectorAll(".search-hit")) old.classList.remove("search-hit");
  const look = () => {
    if (performance.now() > until) return observer.disconnect();
    if (found?.isConnected) return;
    found = findMessage(transcript, hit, query);
    if (!found) return;
    found.classList.add("search-hit");
    found.dataset.searchHit = "true";
    found.scrollIntoView({ block: "center" });
    // The chat follows a growing view to the bottom: place it again once it settled.
    setTimeout(() => found?.isConnected && found.scrollIntoView({ block: "center" }), SETTLE_MS / 3);
    until = Math.min(until, performance.now() + SETTLE_MS);
  };
  const observer = new MutationObserver(look);
  observer.observe(transcript, { childList: true, subtree: true });
  setTimeout(() => observer.disconnect(), FIND_WITHIN_MS);
  look();
}

/** The Memory page's second list: what was said in conversations, beside the facts. */
export class SaidSearch {
  /** @param {{form: HTMLFormElement, query: HTMLInputElement, list: HTMLElement, status: HTMLElement,
   *   transcript: HTMLElement}} elements */
  constructor({ form, query, list, status, transcript }) {
    Object.assign(this, { form, query, list, status, transcript });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.show();
    });
  }

  /** The messages said that match the query box; nothing while it is empty. */
  async show() {
    const q = this.query.value.trim();
    if (!q) {
      this.list.replaceChildren();
      this.status.textContent = "Search to see what was said in conversations.";
      return;
    }
    let answer;
    try {
      answer = await api.get(api.withQuery("/v1/search", { q, k: SEARCH_K }));
    } catch (error) {
      showError(error);
      return;
    }
    const said = answer.hits.filter((hit) => hit.kind === "message");
    this.status.textContent = `${said.length} said in conversations for “${q}”.`;
    this.list.replaceChildren(...said.map((hit) => this.item(hit, q)));
  }

  item(hit, query) {
    const open = () => {
      showMessage(this.transcript, hit, query);
      location.hash = `#/c/${encodeURIComponent(hit.conversation_id)}`;
    };
    return h(
      "li",
      { class: "page-card said", testid: "said-item", dataset: { conversationId: hit.conversation_id } },
      h("p", {}, h("span", { class: "kind-label", text: "Said" }), " ", ...marked(hit.snippet, query)),
      h("p", { class: "muted", text: `${SPEAKERS[hit.speaker] ?? "Said"} in “${hit.title || "a conversation"}”` }),
      h("button", { type: "button", class: "ghost", testid: "said-open", text: "Open", on: { click: open } }),
    );
  }
}
