// The conversation list: select (a link to #/c/<id>), rename in place, delete with a
// second click to confirm (no modal dialog in the way).

import * as api from "./api.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { showError } from "./notify.js";

const CONFIRM_MS = 4000;
const UNTITLED = "New conversation";

export class Sidebar {
  /**
   * @param {HTMLElement} list - The <ul> of conversations.
   * @param {{onDeleted: (id: string) => void, onRefreshed: () => void}} handlers -
   *   `onRefreshed` after each reload of the list (titles may have changed).
   */
  constructor(list, { onDeleted, onRefreshed }) {
    this.list = list;
    this.onDeleted = onDeleted;
    this.onRefreshed = onRefreshed;
    this.activeId = null;
    this.conversations = [];
  }

  /** Reload the list from the server. */
  async refresh() {
    try {
      this.conversations = await api.get("/v1/conversations");
    } catch (error) {
      showError(error);
      return;
    }
    this.render();
    this.onRefreshed();
  }

  /** The title of conversation `id` as last loaded, or null. */
  titleOf(id) {
    const found = this.conversations.find((c) => c.id === id);
    return found ? found.title || UNTITLED : null;
  }

  setActive(id) {
    this.activeId = id;
    for (const item of this.list.children) {
      const link = item.querySelector("a");
      if (item.dataset.id === id) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  render() {
    this.list.replaceChildren(...this.conversations.map((c) => this.item(c)));
    this.setActive(this.activeId);
  }

  item(conversation) {
    const title = conversation.title || UNTITLED;
    const link = h("a", {
      class: "conversation-link",
      href: `#/c/${encodeURIComponent(conversation.id)}`,
      text: title,
      title,
    });
    const item = h("li", { class: "conversation", testid: "conversation-item", dataset: { id: conversation.id } });
    const rename = h("button", {
      type: "button",
      class: "icon-button",
      testid: "conversation-rename",
      attrs: { "aria-label": `Rename ${title}` },
      on: { click: () => this.startRename(item, link, conversation) },
    }, icon("pencil"));
    const remove = h("button", {
      type: "button",
      class: "icon-button",
      testid: "conversation-delete",
      attrs: { "aria-label": `Delete ${title}` },
      on: { click: () => this.confirmDelete(remove, conversation) },
    }, icon("trash"));
    item.append(link, h("span", { class: "conversation-actions" }, rename, remove));
    return item;
  }

  startRename(item, link, conversation) {
    const input = h("input", {
      class: "rename-input",
      testid: "rename-input",
      value: conversation.title || "",
      maxLength: 200,
      attrs: { "aria-label": "Conversation title" },
    });
    const form = h("form", { class: "rename-form" }, input);
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (save && title && title !== conversation.title) {
        try {
          await api.patch(`/v1/conversations/${encodeURIComponent(conversation.id)}`, { title });
        } catch (error) {
          showError(error);
        }
      }
      await this.refresh();
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      finish(true);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") finish(false);
    });
    input.addEventListener("blur", () => finish(true));
    link.replaceWith(form);
    input.focus();
    input.select();
  }

  async confirmDelete(button, conversation) {
    if (button.dataset.confirm !== "true") {
      button.dataset.confirm = "true";
      button.textContent = "Delete?";
      button.setAttribute("aria-label", `Confirm: delete ${conversation.title || UNTITLED}`);
      setTimeout(() => {
        if (!button.isConnected) return;
        button.dataset.confirm = "false";
        button.replaceChildren(icon("trash"));
        button.setAttribute("aria-label", `Delete ${conversation.title || UNTITLED}`);
      }, CONFIRM_MS);
      return;
    }
    try {
      await api.del(`/v1/conversations/${encodeURIComponent(conversation.id)}`);
    } catch (error) {
      showError(error);
      return;
    }
    await this.refresh();
    this.onDeleted(conversation.id);
  }
}
