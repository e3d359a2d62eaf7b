// A small Markdown renderer for the assistant's text. It builds DOM nodes
// with createElement and text nodes only, so nothing in the source (model
// output quoting product data) is ever parsed as HTML. Links are shown as
// text with their address, never clickable: the page must not navigate.
//
// Supported: paragraphs with line breaks, headings (rendered as h3-h5 so the
// page's own h1 stays the only one), **bold**, *italic*, ~~strike~~,
// `inline code`, fenced code blocks, bullet and numbered lists (nested by
// indentation), block quotes, tables, horizontal rules, backslash escapes.

import { h } from "./dom";

export function renderMarkdown(source: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const node of blocks(source.replace(/\r\n?/g, "\n").split("\n"))) {
    fragment.appendChild(node);
  }
  return fragment;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function blocks(lines: string[]): Node[] {
  const out: Node[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "") {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      i = codeBlock(lines, i, fence[1], fence[2], out);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const tag = (["h3", "h4", "h5"] as const)[Math.min(heading[1].length, 3) - 1];
      out.push(h(tag, { class: "md-heading" }, ...inline(heading[2])));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      out.push(h("hr"));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        inner.push(lines[i].replace(QUOTE, ""));
        i += 1;
      }
      out.push(h("blockquote", {}, ...blocks(inner)));
      continue;
    }
    if (isTableStart(lines, i)) {
      i = table(lines, i, out);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = list(lines, i, out);
      continue;
    }
    i = paragraph(lines, i, out);
  }
  return out;
}

function codeBlock(lines: string[], start: number, marker: string, lang: string, out: Node[]): number {
  const body: string[] = [];
  let i = start + 1;
  while (i < lines.length && !lines[i].trim().startsWith(marker)) {
    body.push(lines[i]);
    i += 1;
  }
  const code = h("code", { text: body.join("\n") });
  if (lang) code.setAttribute("data-lang", lang);
  out.push(h("pre", { class: "md-code" }, code));
  return i + 1;
}

function startsBlock(lines: string[], i: number): boolean {
  const line = lines[i];
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

function paragraph(lines: string[], start: number, out: Node[]): number {
  const p = h("p");
  let i = start;
  do {
    if (i > start) p.appendChild(h("br"));
    for (const node of inline(lines[i].trim())) p.appendChild(node);
    i += 1;
  } while (i < lines.length && !startsBlock(lines, i));
  out.push(p);
  return i;
}

function list(lines: string[], start: number, out: Node[]): number {
  const first = LIST_ITEM.exec(lines[start]);
  if (!first) return start + 1;
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const el = ordered ? h("ol") : h("ul");
  if (ordered && parseInt(first[2], 10) !== 1) el.setAttribute("start", String(parseInt(first[2], 10)));
  let i = start;
  while (i < lines.length) {
    const item = LIST_ITEM.exec(lines[i]);
    if (!item || item[1].length !== indent || /\d/.test(item[2]) !== ordered) break;
    const body = [item[3]];
    i += 1;
    // The item goes on while lines are indented deeper than its marker
    // (nested lists, continuation text), or are blank lines inside it.
    while (i < lines.length) {
      const next = lines[i];
      const deeper = next.length - next.trimStart().length > indent;
      if (next.trim() !== "" && !deeper) break;
      if (next.trim() === "" && !(i + 1 < lines.length && indentOf(lines[i + 1]) > indent)) break;
      body.push(next.slice(Math.min(indentOf(next), indent + 2)));
      i += 1;
    }
    el.appendChild(h("li", {}, ...listItemContent(body)));
  }
  out.push(el);
  return i;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** A one-paragraph item renders inline; anything more renders as blocks. */
function listItemContent(body: string[]): Node[] {
  const nodes = blocks(body);
  const only = nodes.length === 1 ? nodes[0] : null;
  if (only instanceof HTMLParagraphElement) return Array.from(only.childNodes);
  return nodes;
}

function isTableStart(lines: string[], i: number): boolean {
  return (
    lines[i].includes("|") &&
    i + 1 < lines.length &&
    lines[i + 1].includes("-") &&
    TABLE_SEPARATOR.test(lines[i + 1])
  );
}

function cells(line: string): string[] {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function table(lines: string[], start: number, out: Node[]): number {
  const head = cells(lines[start]);
  const thead = h("thead", {}, h("tr", {}, ...head.map((cell) => h("th", {}, ...inline(cell)))));
  const tbody = h("tbody");
  let i = start + 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") {
    const row = cells(lines[i]);
    tbody.appendChild(
      h("tr", {}, ...head.map((_, col) => h("td", {}, ...inline(row[col] ?? "")))),
    );
    i += 1;
  }
  out.push(h("div", { class: "md-table" }, h("table", {}, thead, tbody)));
  return i;
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
