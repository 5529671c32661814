// Unified diffs (the coder's proposals) as highlighted text: added, removed, hunk-header
// and file-header lines each get their own class. The diff is model output, so every line
// enters the page as a text node.

import { h } from "./dom.js";

/** The class of one diff line, by its first characters (git style). */
function lineClass(line) {
  if (line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("diff --git")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  if (line.startsWith("\\")) return "diff-note";
  return "diff-context";
}

/**
 * A `<pre>` showing unified diff `text`, one span per line.
 *
 * @param {string} text - The diff (untrusted).
 * @returns {HTMLElement}
 */
export function diffView(text) {
  const lines = String(text).replace(/\n$/, "").split("\n");
  const pre = h("pre", { class: "diff", testid: "diff", attrs: { "aria-label": "Changes (unified diff)" } });
  for (const line of lines) {
    // Each line is a block span, so its background spans the width; its newline keeps
    // the text (and a copy of it) a faithful diff.
    pre.append(h("span", { class: `diff-line ${lineClass(line)}`, text: `${line}\n` }));
  }
  return pre;
}

/**
 * Split `text` at the start of a unified diff inside it: `{before, diff}`, `diff` ""
 * when there is none. A diff starts at a `--- ` line followed by a `+++ ` line, or at a
 * `diff --git` line.
 *
 * @param {string} text - E.g. an approval's description or a coder tool's output.
 */
export function splitDiff(text) {
  const source = String(text ?? "");
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const gitHeader = lines[i].startsWith("diff --git ");
    const fileHeader = lines[i].startsWith("--- ") && lines[i + 1]?.startsWith("+++ ");
    if (gitHeader || fileHeader) {
      return { before: lines.slice(0, i).join("\n").trimEnd(), diff: lines.slice(i).join("\n") };
    }
  }
  return { before: source, diff: "" };
}
