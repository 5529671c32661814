// Non-blocking notices: errors from the API (its `detail`) and short confirmations,
// stacked in a corner, announced to screen readers, dismissed by a click or in time.

import { h } from "./dom.js";

const ERROR_MS = 10000;
const INFO_MS = 4000;

let region = null;

/** Attach to the page's notice region (an element with aria-live). */
export function initNotices(element) {
  region = element;
}

function show(kind, message, lifetime) {
  if (!region) return;
  const close = h("button", {
    type: "button",
    class: "toast-close",
    text: "×",
    attrs: { "aria-label": "Dismiss" },
  });
  const toast = h(
    "div",
    { class: `toast toast-${kind}`, testid: `toast-${kind}`, role: kind === "error" ? "alert" : "status" },
    h("span", { class: "toast-text", text: message }),
    close,
  );
  const remove = () => toast.remove();
  close.addEventListener("click", remove);
  region.append(toast);
  setTimeout(remove, lifetime);
}

/** Show an error; accepts an ApiError, any Error or a string. AbortErrors are not errors. */
export function showError(error) {
  if (error && error.name === "AbortError") return;
  const message = typeof error === "string" ? error : error?.message || "Something went wrong.";
  show("error", message, ERROR_MS);
}

export function showInfo(message) {
  show("info", message, INFO_MS);
}

/** Run an async action and report its failure as a notice; returns its result or undefined. */
export async function reportErrors(action) {
  try {
    return await action();
  } catch (error) {
    showError(error);
    return undefined;
  }
}
