// A small Markdown renderer for the assistant's text. It builds DOM nodes
// with createElement and text nodes only, so nothing in the source (model
// output quoting product data) is ever parsed as HTML. Links are shown as
// text with their address, never clickable: the page must not navigate.
//
// Supported: paragraphs with line breaks, headings (rendered as h3-h5 so the
// page's own h1 stays the only one), **bold**, *italic*, ~~strike~~,
// `inline code`, fenced code blocks, bullet and numbered lists (nested by
// indentation), block quotes, tables (with `:---:` column alignment),
// horizontal rules, backslash escapes.

import { h } from "./dom";
import { Lines } from "./markdown-lines";

export function renderMarkdown(source: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const node of blocks(new Lines(source.replace(/\r\n?/g, "\n").split("\n")))) {
    fragment.appendChild(node);
  }
  return fragment;
}

/** One top-level block and the index of the line after it. */
export interface Block {
  node: Node;
  end: number;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function blocks(lines: Lines): Node[] {
  const out: Node[] = [];
  for (let block = nextBlock(lines, 0); block; block = nextBlock(lines, block.end)) out.push(block.node);
  return out;
}

/**
 * The block at line `start`, blank lines before it skipped; null when only
 * blank lines are left. It reads `lines` forwards only, so a block parsed
 * from a later start line is the same as in a parse of the whole text.
 */
export function nextBlock(lines: Lines, start: number): Block | null {
  let i = start;
  while (lines.has(i) && lines.at(i).trim() === "") i += 1;
  if (!lines.has(i)) return null;
  const line = lines.at(i);
  const fence = FENCE.exec(line);
  if (fence) return codeBlock(lines, i, fence[1], fence[2]);
  const heading = HEADING.exec(line);
  if (heading) {
    const tag = (["h3", "h4", "h5"] as const)[Math.min(heading[1].length, 3) - 1];
    return { node: h(tag, { class: "md-heading" }, ...inline(heading[2])), end: i + 1 };
  }
  if (RULE.test(line)) return { node: h("hr"), end: i + 1 };
  if (QUOTE.test(line)) {
    const inner: string[] = [];
    while (lines.has(i) && QUOTE.test(lines.at(i))) {
      inner.push(lines.at(i).replace(QUOTE, ""));
      i += 1;
    }
    return { node: h("blockquote", {}, ...blocks(new Lines(inner))), end: i };
  }
  if (isTableStart(lines, i)) return table(lines, i);
  const item = LIST_ITEM.exec(line);
  if (item) return list(lines, i, item);
  return paragraph(lines, i);
}

function codeBlock(lines: Lines, start: number, marker: string, lang: string): Block {
  const body: string[] = [];
  let i = start + 1;
  while (lines.has(i) && !lines.at(i).trim().startsWith(marker)) {
    body.push(lines.at(i));
    i += 1;
  }
  const code = h("code", { text: body.join("\n") });
  if (lang) code.setAttribute("data-lang", lang);
  return { node: h("pre", { class: "md-code" }, code), end: i + 1 };
}

function startsBlock(lines: Lines, i: number): boolean {
  const line = lines.at(i);
  return (
    line.trim() === "" ||
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line) ||
    isTableStart(lines, i)
  );
}

function paragraph(lines: Lines, start: number): Block {
  const p = h("p");
  let i = start;
  do {
    if (i > start) p.appendChild(h("br"));
    for (const node of inline(lines.at(i).trim())) p.appendChild(node);
    i += 1;
  } while (lines.has(i) && !startsBlock(lines, i));
  return { node: p, end: i };
}

function list(lines: Lines, start: number, first: RegExpExecArray): Block {
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const el = ordered ? h("ol") : h("ul");
  if (ordered && parseInt(first[2], 10) !== 1) el.setAttribute("start", String(parseInt(first[2], 10)));
  let i = start;
  while (lines.has(i)) {
    const item = LIST_ITEM.exec(lines.at(i));
    if (!item || item[1].length !== indent || /\d/.test(item[2]) !== ordered) break;
    const body = [item[3]];
    i += 1;
    // The item goes on while lines are indented deeper than its marker
    // (nested lists, continuation text), or are blank lines inside it.
    while (lines.has(i)) {
      const next = lines.at(i);
      const deeper = next.length - next.trimStart().length > indent;
      if (next.trim() !== "" && !deeper) break;
      if (next.trim() === "" && !(lines.has(i + 1) && indentOf(lines.at(i + 1)) > indent)) break;
      body.push(next.slice(Math.min(indentOf(next), indent + 2)));
      i += 1;
    }
    el.appendChild(h("li", {}, ...listItemContent(body)));
  }
  return { node: el, end: i };
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** A one-paragraph item renders inline; anything more renders as blocks. */
function listItemContent(body: string[]): Node[] {
  const nodes = blocks(new Lines(body));
  const only = nodes.length === 1 ? nodes[0] : null;
  if (only instanceof HTMLParagraphElement) return Array.from(only.childNodes);
  return nodes;
}

function isTableStart(lines: Lines, i: number): boolean {
  return (
    lines.at(i).includes("|") &&
    lines.has(i + 1) &&
    lines.at(i + 1).includes("-") &&
    TABLE_SEPARATOR.test(lines.at(i + 1))
  );
}

function cells(line: string): string[] {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

type Align = "left" | "center" | "right" | null;

/** A separator cell's alignment: `:---` left, `:---:` center, `---:` right. */
function alignOf(cell: string): Align {
  const left = cell.startsWith(":");
  const right = cell.endsWith(":");
  if (left && right) return "center";
  if (right) return "right";
  return left ? "left" : null;
}

// A class, not a style attribute: the alignment is the page's stylesheet's.
const alignClass = (align: Align | undefined): string | undefined => (align ? `md-align-${align}` : undefined);

function table(lines: Lines, start: number): Block {
  const head = cells(lines.at(start));
  const aligns = cells(lines.at(start + 1)).map(alignOf);
  const thead = h("thead", {}, h("tr", {}, ...head.map((cell, col) => h("th", { class: alignClass(aligns[col]) }, ...inline(cell)))));
  const tbody = h("tbody");
  let i = start + 2;
  while (lines.has(i) && lines.at(i).includes("|") && lines.at(i).trim() !== "") {
    const row = cells(lines.at(i));
    tbody.appendChild(
      h("tr", {}, ...head.map((_, col) => h("td", { class: alignClass(aligns[col]) }, ...inline(row[col] ?? "")))),
    );
    i += 1;
  }
  return { node: h("div", { class: "md-table" }, h("table", {}, thead, tbody)), end: i };
}

// ---- inline

type InlineRule = {
  re: RegExp;
  render: (m: RegExpExecArray) => Node[];
};

const INLINE_RULES: InlineRule[] = [
  { re: /\\([\\`*_{}[\]()#+\-.!|>~])/y, render: (m) => [document.createTextNode(m[1])] },
  { re: /(`+)([\s\S]*?[^`])\1(?!`)/y, render: (m) => [h("code", { text: m[2].trim() })] },
  { re: /!?\[([^\]]*)\]\(\s*([^)\s]*)(?:\s+"[^"]*")?\s*\)/y, render: (m) => link(m[1], m[2]) },
  { re: /\*\*(?=\S)([\s\S]*?\S)\*\*/y, render: (m) => [h("strong", {}, ...inline(m[1]))] },
  { re: /__(?=\S)([\s\S]*?\S)__(?!\w)/y, render: (m) => [h("strong", {}, ...inline(m[1]))] },
  { re: /~~(?=\S)([\s\S]*?\S)~~/y, render: (m) => [h("del", {}, ...inline(m[1]))] },
  { re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*/y, render: (m) => [h("em", {}, ...inline(m[1]))] },
  { re: /_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/y, render: (m) => [h("em", {}, ...inline(m[1]))] },
];

/** Inline markup to nodes; every piece of source text becomes a text node. */
export function inline(text: string): Node[] {
  const out: Node[] = [];
  let plain = "";
  let i = 0;
  while (i < text.length) {
    const match = matchAt(text, i);
    // `_` inside a word (sku_code) is not emphasis.
    if (match && !(text[i] === "_" && i > 0 && /\w/.test(text[i - 1]))) {
      if (plain) out.push(document.createTextNode(plain));
      plain = "";
      out.push(...match.nodes);
      i += match.length;
    } else {
      plain += text[i];
      i += 1;
    }
  }
  if (plain) out.push(document.createTextNode(plain));
  return out;
}

function matchAt(text: string, index: number): { nodes: Node[]; length: number } | null {
  for (const rule of INLINE_RULES) {
    rule.re.lastIndex = index;
    const m = rule.re.exec(text);
    if (m) return { nodes: rule.render(m), length: m[0].length };
  }
  return null;
}

/** A link as text: its label, then its address when that says something more. */
function link(label: string, url: string): Node[] {
  const nodes: Node[] = [h("span", { class: "md-link" }, ...inline(label || url))];
  if (url && url !== label) nodes.push(document.createTextNode(" "), h("span", { class: "md-url", text: `(${url})` }));
  return nodes;
}
