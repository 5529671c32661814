// The header's Import, beside Export: a JSONL export (`ducklm.runtime.exports`) becomes a
// new conversation (`POST /v1/conversations/import`): its messages as history, nothing in
// it run again. A file the server refuses says why, naming the line.

import * as api from "./api.js";
import { reportErrors, showInfo } from "./notify.js";

export class ImportButton {
  /**
   * @param {{button: HTMLButtonElement, input: HTMLInputElement}} elements
   * @param {(id: string) => void} onImported - Called with the new conversation's id.
   */
  constructor({ button, input }, onImported) {
    button.addEventListener("click", () => input.click());
    input.addEventListener("change", async () => {
      const [file] = input.files;
      input.value = ""; // the same file chosen again imports again
      if (!file) return;
      button.disabled = true;
      const created = await reportErrors(async () => api.post("/v1/conversations/import", { jsonl: await file.text() }));
      button.disabled = false;
      if (!created) return;
      showInfo(`Imported “${created.title || file.name}” as a new conversation.`);
      onImported(created.id);
    });
  }
}
