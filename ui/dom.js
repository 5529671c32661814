// Building DOM without HTML strings. Everything the model, a tool or the API sends is
// untrusted, so text only ever enters the page through textContent: no innerHTML anywhere.

/**
 * Create an element.
 *
 * @param {string} tag - Tag name, e.g. "button".
 * @param {object} [props] - `class`, `text`, `testid`, `dataset`, `on` (event name ->
 *   handler), `attrs` (attribute name -> value) and any DOM property (`type`, `hidden`, ...).
 * @param {...(Node|string|null|false)} children - Nodes or strings (added as text).
 * @returns {HTMLElement}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "testid") el.dataset.testid = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "attrs") for (const [name, v] of Object.entries(value)) el.setAttribute(name, v);
    else if (key === "on") for (const [name, fn] of Object.entries(value)) el.addEventListener(name, fn);
    else el[key] = value;
  }
  append(el, ...children);
  return el;
}

/** Append nodes or strings (as text) to `parent`, skipping null/false. */
export function append(parent, ...children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return parent;
}

/** Replace all children of `parent`. */
export function replaceChildren(parent, ...children) {
  parent.replaceChildren();
  return append(parent, ...children);
}

/** A local date-time from a Unix time in seconds (the API's unit), or "" when missing. */
export function formatTime(seconds) {
  if (typeof seconds !== "number") return "";
  return new Date(seconds * 1000).toLocaleString();
}

/** Pretty JSON for display (always through textContent). */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
