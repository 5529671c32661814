// MCP in the composer: typing `/` first offers the servers' prompts (`/server:prompt`,
// with each one's description and arguments); `@` offers their resources
// (`@server:uri`), and their URI templates, taken up to the first `{...}` part for the
// person to fill in. After `/server:prompt `, the word being typed is one of the prompt's
// arguments (`name=va`, or the next value in order): the server suggests its values
// (`completion/complete`, through POST /v1/mcp/prompts/{server}/{name}/complete, told the
// arguments given before it). Arrow keys move, Enter or Tab takes one, Escape closes. The lists come
// from GET /v1/mcp/prompts and /v1/mcp/resources once per page (the server reads them
// again after a server's list_changed; a reload shows that). The server expands what
// was typed when it is sent, and `message_sent` shows what went (`showSent`).

import { get, post } from "./api.js";
import { append, h, replaceChildren } from "./dom.js";

const SOURCES = {
  "/": { path: "/v1/mcp/prompts", key: "prompts", insert: (p) => p.command },
  "@": { path: "/v1/mcp/resources", key: "resources", insert: (r) => (r.template ? r.mention.split("{")[0] : r.mention) },
};
const MAX_SHOWN = 12;
// A prompt argument's values, from the server: each item carries what it inserts.
const ARGUMENT = { insert: (item) => item.insert };

export class McpCompletion {
  /** @param {HTMLTextAreaElement} input - the composer's box */
  constructor(input) {
    this.input = input;
    this.loaded = {};
    this.items = [];
    this.active = 0;
    this.list = h("ul", { class: "mcp-complete", testid: "mcp-complete", attrs: { role: "listbox" } });
    this.list.hidden = true;
    input.before(this.list);
    input.addEventListener("input", () => this.update());
    input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
    // Capture: seen before the composer's own Enter, which would send the message.
    input.addEventListener("keydown", (event) => this.key(event), true);
  }

  /** The word being typed that asks for completion: its sigil, text and start. */
  word() {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const match = /(^|\s)([/@])(\S*)$/.exec(before);
    if (!match) return null;
    const start = before.length - match[2].length - match[3].length;
    if (match[2] === "/" && before.slice(0, start).trim()) return null; // a prompt comes first
    return { sigil: match[2], text: match[2] + match[3], start };
  }

  async update() {
    const word = this.word();
    if (!word) return this.updateArgument();
    const source = SOURCES[word.sigil];
    const all = await this.load(source);
    if (this.word()?.text !== word.text) return; // the person typed on meanwhile
    this.items = all.filter((item) => source.insert(item).startsWith(word.text)).slice(0, MAX_SHOWN);
    this.active = 0;
    this.render(source);
  }

  /**
   * The prompt argument being typed after `/server:prompt ` (words split on spaces; a
   * quoted value is not completed): the prompt, the argument, its value so far, the
   * arguments before it, and where the word starts.
   */
  async argumentWord() {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const match = /^\/(\S+) (.*)$/s.exec(before);
    if (!match || /["']/.test(match[2])) return null;
    const prompts = await this.load(SOURCES["/"]);
    const prompt = prompts.find((p) => p.command === `/${match[1]}`);
    const words = match[2].split(/\s+/);
    const current = words.pop();
    if (!prompt?.arguments?.length) return null;
    const names = prompt.arguments.map((a) => a.name);
    const given = {};
    const bare = [];
    for (const word of words.filter(Boolean)) {
      const [key, ...rest] = word.split("=");
      if (rest.length && names.includes(key)) given[key] = rest.join("=");
      else bare.push(word);
    }
    const free = names.filter((n) => !(n in given));
    bare.forEach((value, i) => { if (free[i]) given[free[i]] = value; });
    const [key, ...rest] = current.split("=");
    const named = rest.length > 0 && names.includes(key);
    const argument = named ? key : free[bare.length];
    if (!argument) return null;
    delete given[argument];
    const value = named ? rest.join("=") : current;
    return { prompt, argument, value, given, named, text: current, start: before.length - current.length };
  }

  async updateArgument() {
    const typed = await this.argumentWord();
    if (!typed) return this.close();
    const [server, name] = typed.prompt.command.slice(1).split(":");
    const path = `/v1/mcp/prompts/${encodeURIComponent(server)}/${encodeURIComponent(name)}/complete`;
    const body = await post(path, { argument: typed.argument, value: typed.value, arguments: typed.given }).catch(() => null);
    const now = await this.argumentWord();
    if (now?.text !== typed.text || now.argument !== typed.argument) return; // typed on meanwhile
    const prefix = typed.named ? `${typed.argument}=` : "";
    this.items = (body?.values ?? [])
      // A value with spaces would need quotes; the one already typed is no suggestion.
      .filter((value) => !/\s/.test(value) && value !== typed.value)
      .slice(0, MAX_SHOWN)
      .map((value) => ({ insert: prefix + value, description: typed.argument, start: typed.start }));
    this.active = 0;
    this.render(ARGUMENT);
  }

  async load(source) {
    this.loaded[source.key] ??= get(source.path)
      .then((body) => body[source.key] ?? [])
      .catch(() => []);
    return this.loaded[source.key];
  }

  render(source) {
    if (!this.items.length) return this.close();
    replaceChildren(
      this.list,
      ...this.items.map((item, index) =>
        h(
          "li",
          {
            class: index === this.active ? "active" : "",
            testid: "mcp-complete-item",
            attrs: { role: "option", "aria-selected": String(index === this.active) },
            on: { mousedown: (event) => (event.preventDefault(), this.choose(index)) },
          },
          // A template shows whole, so the person sees what is left to fill in.
          h("code", { text: item.template ? item.mention : source.insert(item) }),
          item.arguments?.length ? h("span", { class: "mcp-args", testid: "mcp-args", text: args(item) }) : null,
          h("span", { class: "muted", text: item.description || item.name || "" }),
        ),
      ),
    );
    this.source = source;
    this.list.hidden = false;
  }

  key(event) {
    if (this.list.hidden) return;
    const moves = { ArrowDown: 1, ArrowUp: -1 };
    if (event.key in moves) {
      this.active = (this.active + moves[event.key] + this.items.length) % this.items.length;
      this.render(this.source);
    } else if (event.key === "Enter" || event.key === "Tab") {
      this.choose(this.active);
    } else if (event.key === "Escape") {
      this.close();
    } else {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  choose(index) {
    const item = this.items[index];
    const word = this.source === ARGUMENT && item ? { start: item.start } : this.word();
    if (!word || !item) return this.close();
    const value = this.input.value;
    const end = this.input.selectionStart;
    // A template's start is taken without the space: the person types on into it.
    const chosen = item.template ? this.source.insert(item) : `${this.source.insert(item)} `;
    this.input.value = value.slice(0, word.start) + chosen + value.slice(end);
    this.input.selectionStart = this.input.selectionEnd = word.start + chosen.length;
    this.input.dispatchEvent(new Event("input"));
    this.close();
  }

  close() {
    this.list.hidden = true;
    this.items = [];
  }
}

/** A prompt's arguments in its order; an optional one with a `?`. */
function args(prompt) {
  return prompt.arguments.map((a) => `${a.name}${a.required ? "" : "?"}`).join(" ");
}

/** Show in the person's last bubble what a `/server:prompt` or `@server:uri` sent. */
export function showSent(transcript, event) {
  const bubbles = transcript.querySelectorAll('[data-testid="user-message"]');
  const bubble = bubbles[bubbles.length - 1];
  if (!bubble) return;
  if (event.prompt) {
    replaceChildren(
      bubble,
      h("p", { class: "muted", text: `${event.prompt} sent:` }),
      ...event.messages.map((m) => h("p", { class: "user-text", testid: "sent-message", dataset: { role: m.role }, text: m.text })),
    );
  }
  for (const found of event.attachments ?? []) {
    const trust = found.untrusted ? " (untrusted: writes will ask)" : "";
    append(bubble, h("p", { class: "muted", testid: "sent-attachment", text: `attached @${found.server}:${found.uri}${trust}` }));
  }
}
