// Small line icons drawn as inline SVG, so they need no font (emoji are missing on many
// Linux machines) and no file to fetch.

const SVG = "http://www.w3.org/2000/svg";

const PATHS = {
  pencil: "M4 20h4L19 9l-4-4L4 16v4z M13.5 6.5l4 4",
  trash: "M4 7h16 M9 7V4h6v3 M6 7l1 13h10l1-13 M10 11v6 M14 11v6",
};

/** An icon for a button that carries its own label (aria-label), so it is hidden from AT. */
export function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", PATHS[name]);
  svg.append(path);
  return svg;
}
