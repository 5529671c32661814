// What an MCP tool returned, drawn on its card: the `mcp_content` of `tool_call_finished`
// (ducklm/mcp/content.py) as the person expects to see it (images shown, audio playable,
// resource links listed, structured content as JSON), and its live progress
// (`tool_progress`). Everything here came from a server: text only through textContent,
// media only from DuckLM's own media route, never a link that opens by itself.

import { h, prettyJson } from "./dom.js";

/** Where the server serves a saved media file (server/routes/mcp_media.py). */
const MEDIA_ROUTE = "/v1/mcp/media/";

/** The name a media part is served by: `file`, or (older events) its path's last part. */
function mediaName(part) {
  const name = part.file || String(part.path ?? "").split("/").pop();
  return /^[0-9a-f]{24}\.[A-Za-z0-9]{1,16}$/.test(name ?? "") ? name : null;
}

function sizeText(bytes) {
  if (typeof bytes !== "number") return "";
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** An image, audio or blob part: shown when the page may show it, else a download link. */
function mediaPart(part) {
  const name = mediaName(part);
  const kind = part.type === "resource" ? "file" : part.type;
  const caption = [kind, part.mime_type, sizeText(part.size)].filter(Boolean).join(" · ");
  if (!name) return h("p", { class: "mcp-part-note", text: `${caption} (not saved)` });
  const src = MEDIA_ROUTE + name;
  const mime = part.mime_type ?? "";
  let view;
  if (mime.startsWith("image/")) {
    view = h("img", { class: "mcp-image", testid: "mcp-image", src, alt: `image from the tool (${mime})` });
  } else if (mime.startsWith("audio/")) {
    view = h("audio", { class: "mcp-audio", testid: "mcp-audio", src, controls: true, preload: "metadata" });
  } else {
    view = h("a", { testid: "mcp-file", href: src, text: part.uri || name, attrs: { download: name } });
  }
  return h("figure", { class: "mcp-media" }, view, h("figcaption", { text: caption }));
}

/** Resource links, in one list: name, URI and type. Not links: a server's URI is its own. */
function linkList(parts) {
  return h(
    "ul",
    { class: "mcp-links", testid: "mcp-links", attrs: { "aria-label": "Resource links" } },
    ...parts.map((part) => h(
      "li",
      { class: "mcp-link", testid: "mcp-link" },
      part.name ? h("span", { class: "mcp-link-name", text: part.name }) : null,
      h("code", { class: "mcp-link-uri", testid: "mcp-link-uri", text: part.uri ?? "" }),
      part.mime_type ? h("span", { class: "mcp-part-note", text: part.mime_type }) : null,
    )),
  );
}

/** A collapsible block, closed: its text is in the card's output too. */
function folded(title, text, testid) {
  return h(
    "details",
    { class: "mcp-json", testid },
    h("summary", { text: title }),
    h("pre", { text }),
  );
}

function onePart(part) {
  if (part.type === "image" || part.type === "audio") return mediaPart(part);
  if (part.type === "resource" && part.text === undefined) return mediaPart(part);
  if (part.type === "resource") return folded(`resource ${part.uri ?? ""}`, String(part.text ?? ""), "mcp-resource");
  if (part.type === "text") return h("pre", { class: "mcp-text", text: part.text ?? "" });
  return h("p", { class: "mcp-part-note", text: `${part.type} content (not shown)` });
}

/**
 * The view of `mcp_content` (`{parts, structured}`), or null when it adds nothing to the
 * card's output: text-only results are their output already.
 */
export function mcpContentView(content) {
  const parts = Array.isArray(content?.parts) ? content.parts : [];
  const links = parts.filter((part) => part.type === "resource_link");
  const others = parts.filter((part) => part.type !== "resource_link" && part.type !== "text");
  const shown = others.map(onePart);
  if (links.length) shown.push(linkList(links));
  if (content?.structured !== undefined && content?.structured !== null) {
    shown.push(folded("structured content", prettyJson(content.structured), "mcp-structured"));
  }
  if (!shown.length) return null;
  return h("div", { class: "mcp-content", testid: "mcp-content" }, ...shown);
}

/** A progress report in words: "step 3 of 10: reading", "42%", "3 done". */
export function progressText({ progress, total, message }) {
  const done = Number(progress) || 0;
  let said;
  if (typeof total === "number" && total > 0) {
    const steps = Number.isInteger(done) && Number.isInteger(total) && total > 1;
    said = steps ? `step ${done} of ${total}` : `${Math.round((100 * done) / total)}%`;
  } else {
    said = `${done} done`;
  }
  return message ? `${said}: ${message}` : said;
}

/** The live progress line of a running call: a bar when the total is known, and words. */
export class ProgressLine {
  constructor() {
    this.bar = h("progress", { class: "tool-progress-bar", testid: "tool-progress-bar", max: 1 });
    this.text = h("span", { class: "tool-progress-text", testid: "tool-progress-text" });
    this.el = h("div", { class: "tool-progress", testid: "tool-progress", hidden: true }, this.bar, this.text);
  }

  /** Show a `tool_progress` event. */
  show(event) {
    if (typeof event.total === "number" && event.total > 0) {
      this.bar.max = event.total;
      this.bar.value = Math.min(Number(event.progress) || 0, event.total);
    } else {
      this.bar.removeAttribute("value"); // an indeterminate bar: it moves, with no end known
    }
    this.text.textContent = progressText(event);
    this.el.hidden = false;
  }

  /** The call ended: its outcome replaces the progress. */
  hide() {
    this.el.hidden = true;
  }
}
