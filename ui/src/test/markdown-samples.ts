// Markdown the way the model writes it, and seeded randomness to cut it
// into deltas, so a failing split can be replayed.

/** Blocks covering every construct, including those that span blank lines. */
export const SAMPLE_BLOCKS: readonly string[] = [
  "## 推荐的耳机",
  "为你找到 **两款** 降噪耳机，*价格* 都在 `¥1000` 以内。\n第二行继续说明 ~~旧价~~ 新价。",
  "| 型号 | 价格 | 库存 |\n| :--- | ---: | :---: |\n| A1 | ¥1,299 | 有 |\n| B2 \\| 特别版 | ¥999 | 无 |",
  "```ts\nconst price = 1299;\n\n| not | a table |\n- not a list\n```",
  "~~~\n```\n不是结束 **也不加粗**\n~~~",
  "1. 手机\n   - 黑色\n   - 白色\n2. 耳机\n\n   耳机的补充说明\n3. 充电器",
  "- 甲\n- 乙\n\n- 丙",
  "> 引用一段\n> - 列表项\n> **粗体**",
  "---",
  "3) 第三\n4) 第四",
  "段落后面\n| 紧跟 | 表格 |\n| --- | ---: |\n| x | y |",
  "See [the shop](https://example.com) and sku_code, order_no here.",
  "* star item\n+ plus item",
  "#### 小标题 ####",
  "<img src=x onerror=alert(1)> <script>alert(1)</script>",
  "行尾的 \\*不是斜体\\* 和 __下划线加粗__",
  "  - 缩进的列表\n    继续的行\n  - 第二项",
  "| 只有表头 |\n| ---: |",
  "```\n没有语言的代码\n```",
];

const SEPARATORS: readonly string[] = ["\n", "\n\n", "\n\n\n", "\n  \n", "\r\n\r\n", "\r\n"];

/** A small deterministic generator (mulberry32). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

/** A message of `count` sample blocks in random order with random separators. */
export function randomMessage(random: () => number, count: number): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i += 1) {
    if (i > 0) parts.push(pick(random, SEPARATORS));
    parts.push(pick(random, SAMPLE_BLOCKS));
  }
  // Some messages end open: inside a fence, a table or a line.
  const ending = pick(random, ["", "\n", "\n```py\nprint(1)", "\n| a | b |\n| --- |", " 最后"]);
  return parts.join("") + ending;
}

const MARKUP: readonly string[] = [
  "|", "-", " ", "  ", "\n", "\n", "\n\n", "`", "```", "~~~", ">", "#", "*", "1.", "2)",
  "\r", "a", ":", "中", "---", "| --- |", "_", "\\",
];

/** A short string of markup pieces in random order: the edge cases no one writes by hand. */
export function randomMarkup(random: () => number): string {
  let text = "";
  const count = Math.floor(random() * 60);
  for (let i = 0; i < count; i += 1) text += pick(random, MARKUP);
  return text;
}

/** `text` cut at random points into deltas (some empty, some one character). */
export function randomSplit(random: () => number, text: string, maxDelta: number): string[] {
  const deltas: string[] = [];
  let at = 0;
  while (at < text.length) {
    const size = Math.floor(random() * (maxDelta + 1));
    deltas.push(text.slice(at, at + size));
    at += size;
  }
  return deltas;
}
