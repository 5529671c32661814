// The header's Export menu: the shown conversation as Markdown or JSONL. Plain download
// links to GET /v1/conversations/{id}/export (the session cookie goes with them; a GET
// needs no CSRF value), hidden while no conversation is shown.

export class ExportMenu {
  /** @param {{menu: HTMLDetailsElement, markdown: HTMLAnchorElement, jsonl: HTMLAnchorElement}} elements */
  constructor({ menu, markdown, jsonl }) {
    this.menu = menu;
    this.links = { md: markdown, jsonl };
    for (const link of Object.values(this.links)) {
      link.addEventListener("click", () => (this.menu.open = false));
    }
    document.addEventListener("click", (event) => {
      if (!this.menu.contains(event.target)) this.menu.open = false;
    });
  }

  /** Offer the export of conversation `id` (null: hide the menu). */
  show(id) {
    this.menu.hidden = !id;
    this.menu.open = false;
    if (!id) return;
    const path = `/v1/conversations/${encodeURIComponent(id)}/export`;
    for (const [format, link] of Object.entries(this.links)) {
      link.href = `${path}?format=${format}`;
    }
  }
}
