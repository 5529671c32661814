// A small Markdown renderer that builds DOM nodes directly. Model output is untrusted:
// no HTML string is ever parsed, raw HTML in the text stays visible text, links are kept
// only for http(s) URLs, and images are shown as links (nothing is fetched on the
// model's say-so).
//
// Supported: paragraphs (single newlines kept as line breaks, as chat models mean them),
// ATX headings, fenced code (an unclosed fence, common mid-stream, runs to the end),
// block quotes, bullet and numbered lists (nested by indentation), tables, rules, and
// inline code, bold, italic, strike-through, links and bare URLs.

import { h } from "./dom.js";
import { copyButton } from "./copy.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_DIVIDER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** Render `text` as a fragment of safe DOM nodes. */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  fragment.append(...renderBlocks(String(text ?? "").split(/\r?\n/)));
  return fragment;
}

function renderBlocks(lines) {
  const nodes = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "") {
      i += 1;
      continue;
    }
    const parsed =
      fenced(lines, i) ?? heading(line, i) ?? rule(line, i) ?? quote(lines, i) ??
      list(lines, i) ?? table(lines, i) ?? paragraph(lines, i);
    nodes.push(parsed.node);
    i = parsed.next;
  }
  return nodes;
}

function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    LIST_ITEM.test(line) || isTableStart(lines, i);
}

function fenced(lines, start) {
  const open = FENCE.exec(lines[start]);
  if (!open) return null;
  const marker = open[1];
  const body = [];
  let i = start + 1;
  while (i < lines.length) {
    const close = lines[i].trim();
    if (close.startsWith(marker[0].repeat(marker.length)) && /^(`+|~+)$/.test(close)) break;
    body.push(lines[i]);
    i += 1;
  }
  return { node: codeBlock(body.join("\n"), open[2]), next: i + 1 };
}

function codeBlock(code, language) {
  const copy = copyButton(() => code, { className: "code-copy" });
  return h(
    "figure",
    { class: "code-block", testid: "code-block" },
    h("figcaption", {}, h("span", { class: "code-lang", text: language || "text" }), copy),
    h("pre", {}, h("code", { text: code, dataset: { language: language || "" } })),
  );
}

function heading(line, i) {
  const match = HEADING.exec(line);
  if (!match) return null;
  // h1/h2 would outrank the page's own headings: answers start at h3.
  const level = Math.min(match[1].length + 2, 6);
  return { node: h(`h${level}`, { class: "md-heading" }, ...renderInline(match[2])), next: i + 1 };
}

function rule(line, i) {
  return RULE.test(line) ? { node: h("hr"), next: i + 1 } : null;
}

function quote(lines, start) {
  if (!QUOTE.test(lines[start])) return null;
  const inner = [];
  let i = start;
  while (i < lines.length && QUOTE.test(lines[i])) {
    inner.push(lines[i].replace(QUOTE, ""));
    i += 1;
  }
  return { node: h("blockquote", {}, ...renderBlocks(inner)), next: i };
}

function list(lines, start) {
  const first = LIST_ITEM.exec(lines[start]);
  if (!first) return null;
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const element = h(ordered ? "ol" : "ul");
  if (ordered && Number.parseInt(first[2], 10) !== 1) element.start = Number.parseInt(first[2], 10);
  let i = start;
  while (i < lines.length) {
    const item = LIST_ITEM.exec(lines[i]);
    if (!item || item[1].length !== indent || /\d/.test(item[2]) !== ordered) break;
    const body = [item[3]];
    i += 1;
    // An item goes on while lines are indented deeper than its marker (nested lists,
    // continued text), across single blank lines followed by such a line.
    while (i < lines.length) {
      const line = lines[i];
      const deeper = line.trim() !== "" && line.search(/\S/) > indent;
      const blankThenDeeper =
        line.trim() === "" && i + 1 < lines.length && lines[i + 1].search(/\S/) > indent;
      if (!deeper && !blankThenDeeper) break;
      body.push(line.slice(Math.min(indent + 2, line.search(/\S|$/))));
      i += 1;
    }
    element.append(listItem(body));
  }
  return { node: element, next: i };
}

function listItem(body) {
  const blocks = renderBlocks(body);
  // A tight item ("- text") holds its text directly, not wrapped in a paragraph.
  if (blocks.length > 0 && blocks[0].tagName === "P") {
    const [paragraphNode, ...rest] = blocks;
    return h("li", {}, ...paragraphNode.childNodes, ...rest);
  }
  return h("li", {}, ...blocks);
}

function isTableStart(lines, i) {
  return lines[i].includes("|") && i + 1 < lines.length && TABLE_DIVIDER.test(lines[i + 1]) &&
    lines[i + 1].includes("-");
}

function cells(line) {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

function table(lines, start) {
  if (!isTableStart(lines, start)) return null;
  const head = h("tr", {}, ...cells(lines[start]).map((c) => h("th", {}, ...renderInline(c))));
  const body = h("tbody");
  let i = start + 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") {
    body.append(h("tr", {}, ...cells(lines[i]).map((c) => h("td", {}, ...renderInline(c)))));
    i += 1;
  }
  const node = h("div", { class: "table-scroll" }, h("table", {}, h("thead", {}, head), body));
  return { node, next: i };
}

function paragraph(lines, start) {
  const collected = [lines[start]];
  let i = start + 1;
  while (i < lines.length && lines[i].trim() !== "" && !startsBlock(lines, i)) {
    collected.push(lines[i]);
    i += 1;
  }
  const children = [];
  collected.forEach((line, index) => {
    if (index > 0) children.push(h("br"));
    children.push(...renderInline(line.trim()));
  });
  return { node: h("p", {}, ...children), next: i };
}

// Inline rules, tried at every position; the earliest match wins, then the first listed.
const INLINE_RULES = [
  { re: /\\([\\`*_{}[\]()#+\-.!~|>])/, make: (m) => document.createTextNode(m[1]) },
  { re: /(`+)([\s\S]*?[^`])\1(?!`)/, make: (m) => h("code", { text: m[2].trim() || m[2] }) },
  {
    re: /(!?)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/,
    make: (m) => link(m[3], m[2] || m[3], m[0]),
  },
  { re: /\bhttps?:\/\/[^\s<>"'`]*[^\s<>"'`.,;:!?)\]]/, make: (m) => link(m[0], m[0], m[0]) },
  // Underscores never open or close inside a word (snake_case, __dunder__ names).
  {
    re: /\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)/,
    make: (m) => wrap("strong", m[1] ?? m[2]),
  },
  { re: /~~(?=\S)([\s\S]*?\S)~~/, make: (m) => wrap("del", m[1]) },
  {
    re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<!\w)_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/,
    make: (m) => wrap("em", m[1] ?? m[2]),
  },
];

function wrap(tag, inner) {
  return h(tag, {}, ...renderInline(inner));
}

/** A link only for absolute http(s) URLs; anything else (javascript:, data:, ...) stays text. */
function link(href, label, original) {
  let url;
  try {
    url = new URL(href);
  } catch {
    return document.createTextNode(original);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return document.createTextNode(original);
  }
  return h("a", {
    href: url.href,
    target: "_blank",
    rel: "noopener noreferrer",
    text: label,
  });
}

/** Inline Markdown of one line or table cell, as nodes. */
export function renderInline(text) {
  const nodes = [];
  let rest = text;
  while (rest) {
    let best = null;
    for (const rule of INLINE_RULES) {
      const match = rule.re.exec(rest);
      if (match && (best === null || match.index < best.match.index)) best = { rule, match };
    }
    if (!best) {
      nodes.push(document.createTextNode(rest));
      break;
    }
    if (best.match.index > 0) nodes.push(document.createTextNode(rest.slice(0, best.match.index)));
    nodes.push(best.rule.make(best.match));
    rest = rest.slice(best.match.index + best.match[0].length);
  }
  return nodes;
}
