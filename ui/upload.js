// Files into the conversation's workspace: the composer's "Attach" button and drag and
// drop onto the chat (`POST /v1/conversations/{id}/files`). An upload is the person's
// own act, recorded for undo: each one listed above the composer has an Undo button
// (`POST .../undo` with its `upload_id`), and `ducklm undo` takes the last one back.
// An existing file is replaced only after the person says so. Download links for the
// files a tool call changed are in `downloadLinks` (shown on the tool card).

import * as api from "./api.js";
import { h } from "./dom.js";
import { showError, showInfo } from "./notify.js";

const CONFLICT = 409;

/** The conversation the page shows, from its hash (`#/c/<id>`), or null. */
export function shownConversation() {
  const match = location.hash.match(/^#\/c\/(.+)$/);
  return match ? decodeURIComponent(match[1]) : null;
}

/** The URL that downloads `path` of the shown conversation's workspace. */
function fileUrl(conversationId, path) {
  return api.withQuery(`/v1/conversations/${encodeURIComponent(conversationId)}/files`, { path });
}

/**
 * Download links for the files a tool call changed (deleted ones have nothing to get).
 *
 * @param {{path: string, change: string}[]} changed
 * @returns {HTMLElement|null}
 */
export function downloadLinks(changed) {
  const present = changed.filter((c) => c.change !== "deleted").slice(0, 5);
  if (!present.length) return null;
  const links = present.map((c) => {
    const link = h("a", {
      class: "download-link",
      testid: "tool-download",
      text: c.path,
      attrs: { download: c.path.split("/").pop(), title: `Download ${c.path}` },
    });
    // Looked up on click: a new conversation gets its id while its first turn runs.
    const point = () => link.setAttribute("href", fileUrl(shownConversation() ?? "", c.path));
    link.addEventListener("mousedown", point);
    link.addEventListener("focus", point);
    link.addEventListener("click", point);
    return link;
  });
  return h("p", { class: "tool-downloads muted" }, "Download: ", ...links.flatMap((l, i) => (i ? [", ", l] : [l])));
}

export class Uploads {
  /**
   * @param {{button: HTMLButtonElement, input: HTMLInputElement, dropZone: HTMLElement,
   *   list: HTMLElement}} elements
   * @param {{ensureConversation: () => Promise<string>, onUndone?: () => void}} parts -
   *   `ensureConversation` gives the shown conversation's id, creating one for a new chat.
   */
  constructor({ button, input, dropZone, list }, { ensureConversation, onUndone }) {
    Object.assign(this, { button, input, dropZone, list, ensureConversation, onUndone });
    button.addEventListener("click", () => input.click());
    input.addEventListener("change", () => {
      this.uploadAll([...input.files]);
      input.value = ""; // the same file again later is a new choice
    });
    let depth = 0; // dragenter/leave fire for every child crossed
    dropZone.addEventListener("dragenter", (event) => {
      if (!hasFiles(event)) return;
      depth += 1;
      dropZone.classList.add("dropping");
    });
    dropZone.addEventListener("dragleave", () => {
      depth = Math.max(0, depth - 1);
      if (!depth) dropZone.classList.remove("dropping");
    });
    dropZone.addEventListener("dragover", (event) => {
      if (hasFiles(event)) event.preventDefault(); // else the browser opens the file
    });
    dropZone.addEventListener("drop", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth = 0;
      dropZone.classList.remove("dropping");
      this.uploadAll([...event.dataTransfer.files]);
    });
  }

  async uploadAll(files) {
    if (!files.length) return;
    let id;
    try {
      id = await this.ensureConversation();
    } catch (error) {
      showError(error);
      return;
    }
    for (const file of files) await this.upload(id, file);
  }

  async upload(id, file, overwrite = false) {
    const form = new FormData();
    form.append("file", file, file.name);
    form.append("path", file.name);
    if (overwrite) form.append("overwrite", "true");
    let done;
    try {
      done = await api.postForm(`/v1/conversations/${encodeURIComponent(id)}/files`, form);
    } catch (error) {
      const replace = error.status === CONFLICT && !overwrite && error.message.includes("overwrite")
        && window.confirm(`${file.name} is already in the workspace. Replace it?`);
      if (replace) return this.upload(id, file, true);
      showError(error);
      return;
    }
    this.list.append(this.item(id, done));
    this.list.hidden = false;
    showInfo(`${done.path} ${done.action === "replaced" ? "replaced" : "added"} in the workspace.`);
  }

  item(id, done) {
    const undo = h("button", { type: "button", class: "ghost", testid: "upload-undo", text: "Undo" });
    const item = h(
      "li",
      { class: "upload-item", testid: "upload-item", dataset: { path: done.path, uploadId: done.upload_id } },
      h("span", { text: `${done.action === "replaced" ? "Replaced" : "Uploaded"} ${done.path}` }),
      done.undo_id ? undo : null,
    );
    undo.addEventListener("click", async () => {
      undo.disabled = true;
      try {
        await api.post(`/v1/conversations/${encodeURIComponent(id)}/undo`, { to_call: done.upload_id });
      } catch (error) {
        undo.disabled = false;
        showError(error);
        return;
      }
      item.replaceChildren(h("span", { class: "muted", text: `Upload of ${done.path} undone` }));
      this.onUndone?.();
    });
    return item;
  }

  /** Forget the uploads listed for the conversation that was shown before. */
  reset() {
    this.list.replaceChildren();
    this.list.hidden = true;
  }
}

function hasFiles(event) {
  return [...(event.dataTransfer?.types ?? [])].includes("Files");
}
