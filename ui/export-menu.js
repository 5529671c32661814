// The header's Export menu: the shown conversation as Markdown or JSONL, the version on
// screen or all its versions (regenerated and edited messages). Plain download links to
// GET /v1/conversations/{id}/export (the session cookie goes with them; a GET needs no
// CSRF value), hidden while no conversation is shown.

export class ExportMenu {
  /**
   * @param {{menu: HTMLDetailsElement, markdown: HTMLAnchorElement, jsonl: HTMLAnchorElement,
   *   allMarkdown: HTMLAnchorElement, allJsonl: HTMLAnchorElement}} elements
   */
  constructor({ menu, markdown, jsonl, allMarkdown, allJsonl }) {
    this.menu = menu;
    this.links = [
      [markdown, { format: "md" }],
      [jsonl, { format: "jsonl" }],
      [allMarkdown, { format: "md", versions: "all" }],
      [allJsonl, { format: "jsonl", versions: "all" }],
    ];
    for (const [link] of this.links) {
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
    for (const [link, query] of this.links) {
      link.href = `${path}?${new URLSearchParams(query)}`;
    }
  }
}
