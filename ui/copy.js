// The one Copy button of the web chat: code blocks, whole answers and tool outputs use it.
// What it copies is read when clicked, so an answer still streaming copies what it has.

import { h } from "./dom.js";

const SAID_FOR_MS = 1500;

/**
 * A button that copies `read()` to the clipboard and says whether it worked.
 *
 * @param {() => string} read - The text to copy, read at the click.
 * @param {{label?: string, testid?: string, className?: string, title?: string}} [options]
 * @returns {HTMLButtonElement}
 */
export function copyButton(read, { label = "Copy", testid, className = "copy-button", title } = {}) {
  const button = h("button", { type: "button", class: className, testid, text: label, title });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(read());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = label), SAID_FOR_MS);
  });
  return button;
}
