import { describe, expect, it } from "vitest";

import { renderMarkdown } from "./markdown";
import { MarkdownStream, type StreamWork } from "./markdown-stream";
import { SAMPLE_BLOCKS, randomMarkup, randomMessage, randomSplit, seeded } from "./test/markdown-samples";
import { XSS_IMG, XSS_SCRIPT } from "./test/fixtures";

function fullRender(text: string): string {
  const host = document.createElement("div");
  host.appendChild(renderMarkdown(text));
  return host.innerHTML;
}

function streamed(): { host: HTMLElement; stream: MarkdownStream } {
  const host = document.createElement("div");
  document.body.replaceChildren(host);
  return { host, stream: new MarkdownStream(host) };
}

describe("streamed markdown", () => {
  it("equals a full render of the text so far after every delta, for random splits of varied messages", () => {
    const random = seeded(20261201);
    for (let message = 0; message < 60; message += 1) {
      const text = randomMessage(random, 2 + Math.floor(random() * 8));
      const deltas = randomSplit(random, text, message % 3 === 0 ? 1 : 1 + Math.floor(random() * 40));
      const { host, stream } = streamed();
      let sofar = "";
      for (const delta of deltas) {
        stream.append(delta);
        sofar += delta;
        expect(host.innerHTML, JSON.stringify(sofar)).toBe(fullRender(sofar));
      }
      stream.show(text);
      expect(host.innerHTML, JSON.stringify(text)).toBe(fullRender(text));
    }
  }, 60_000);

  it("equals a full render of the text so far after every delta, for random strings of markup", () => {
    const random = seeded(99);
    for (let message = 0; message < 400; message += 1) {
      const text = randomMarkup(random);
      const { host, stream } = streamed();
      let sofar = "";
      for (const delta of randomSplit(random, text, 1 + Math.floor(random() * 5))) {
        stream.append(delta);
        sofar += delta;
        expect(host.innerHTML, JSON.stringify(sofar)).toBe(fullRender(sofar));
      }
    }
  }, 60_000);

  it("pairs a carriage return at the end of one delta with a line feed opening the next", () => {
    const { host, stream } = streamed();
    for (const delta of ["第一段\r", "\n\r", "\n| a | b |\r\n| --- | ---: |\r", "", "\n| 1 | 2 |\r"]) stream.append(delta);
    expect(host.innerHTML).toBe(fullRender("第一段\r\n\r\n| a | b |\r\n| --- | ---: |\r\n| 1 | 2 |\r"));
    expect(host.querySelectorAll("p")).toHaveLength(1);
    expect(host.querySelectorAll("tbody tr")).toHaveLength(1);
  });

  it("shows a final text that does not extend the streamed one in full", () => {
    const { host, stream } = streamed();
    stream.append("## 旧标题\n\n旧的段落\n\n- 甲");
    stream.show("新的回答 **加粗**");
    expect(host.innerHTML).toBe(fullRender("新的回答 **加粗**"));
  });

  it("keeps model markup as text in every block, finished or open", () => {
    const { host, stream } = streamed();
    const text = `推荐 ${XSS_IMG}\n\n**${XSS_SCRIPT}**\n\n| 名称 |\n| --- |\n| ${XSS_IMG} |\n\n\`\`\`html\n${XSS_SCRIPT}`;
    for (const delta of randomSplit(seeded(7), text, 5)) {
      stream.append(delta);
      expect(host.querySelector("img, script, [onerror]")).toBeNull();
    }
    expect(host.textContent).toContain(XSS_IMG);
    expect(host.textContent).toContain(XSS_SCRIPT);
  });
});

describe("finished blocks while more text streams in", () => {
  const text = "## 标题\n\n第一段 **加粗** 文字\n\n| 型号 | 价格 |\n| --- | ---: |\n| A | ¥1 |\n\n```\ncode\n```\n\n- 甲\n- 乙\n\n最后一段\n";

  it("are the same DOM nodes after later deltas", () => {
    const { host, stream } = streamed();
    let finished: Node[] = [];
    for (const delta of randomSplit(seeded(3), text, 4)) {
      const { openBlocks } = stream.append(delta);
      const children = [...host.childNodes];
      finished.forEach((node, i) => expect(children[i]).toBe(node));
      finished = children.slice(0, children.length - openBlocks);
    }
    expect(finished.map((node) => node.nodeName)).toEqual(["H4", "P", "DIV", "PRE", "UL"]);
    stream.show(text);
    finished.forEach((node, i) => expect(host.childNodes[i]).toBe(node));
  });

  it("keep a selection made in them", () => {
    const { host, stream } = streamed();
    stream.append(text.slice(0, text.indexOf("| A |")));
    const paragraph = host.querySelector("p");
    const bold = paragraph?.querySelector("strong")?.firstChild;
    if (!paragraph || !bold) throw new Error("no finished paragraph");
    const range = document.createRange();
    range.setStart(paragraph.firstChild as Node, 1);
    range.setEnd(bold, 2);
    const selection = document.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    expect(selection?.toString()).toBe("一段 加粗");
    for (const delta of randomSplit(seeded(5), text.slice(text.indexOf("| A |")), 3)) stream.append(delta);
    expect(paragraph.isConnected).toBe(true);
    expect(selection?.rangeCount).toBe(1);
    expect(selection?.getRangeAt(0).startContainer).toBe(paragraph.firstChild);
    expect(selection?.toString()).toBe("一段 加粗");
  });
});

describe("work per delta", () => {
  const DELTAS = 1000;
  const DELTA_SIZE = 10;

  /** A 10,000-character answer made of the sample blocks, cycled. */
  function longAnswer(): string {
    let text = "";
    for (let i = 0; text.length < DELTAS * DELTA_SIZE; i += 1) {
      text += SAMPLE_BLOCKS[i % SAMPLE_BLOCKS.length] + "\n\n";
    }
    return text.slice(0, DELTAS * DELTA_SIZE);
  }

  const total = (works: StreamWork[], key: keyof StreamWork) => works.reduce((sum, work) => sum + work[key], 0);

  it("does not grow with the message: a 10,000-character answer in 1,000 deltas", () => {
    const text = longAnswer();
    const { host, stream } = streamed();
    const works: StreamWork[] = [];
    const times: number[] = [];
    for (let i = 0; i < DELTAS; i += 1) {
      const started = performance.now();
      works.push(stream.append(text.slice(i * DELTA_SIZE, (i + 1) * DELTA_SIZE)));
      times.push(performance.now() - started);
    }
    expect(host.innerHTML).toBe(fullRender(text));

    // No delta parses more than the open block: the longest block, the
    // blank line after it and the one line read past it.
    const longestBlock = Math.max(...SAMPLE_BLOCKS.map((block) => block.length));
    const longestLine = Math.max(...SAMPLE_BLOCKS.flatMap((block) => block.split("\n")).map((line) => line.length));
    const bound = longestBlock + 2 * longestLine + DELTA_SIZE;
    for (const work of works) expect(work.parsedChars).toBeLessThanOrEqual(bound);

    // A full render per delta would parse about 19 times more in the last 100 deltas.
    const first = works.slice(0, 100);
    const last = works.slice(-100);
    for (const key of ["parsedChars", "createdNodes", "replacedNodes", "openBlocks"] as const) {
      expect(total(last, key), key).toBeLessThanOrEqual(2 * total(first, key));
    }

    const ms = (from: number, to: number) => times.slice(from, to).reduce((a, b) => a + b, 0) / (to - from);
    console.info(
      `markdown stream, ${text.length} characters in ${DELTAS} deltas: ` +
        `parsed ${total(first, "parsedChars")} / ${total(last, "parsedChars")} characters, ` +
        `at most ${Math.max(...works.map((work) => work.parsedChars))} in one delta (bound ${bound}), ` +
        `built ${total(first, "createdNodes")} / ${total(last, "createdNodes")} nodes, ` +
        `${ms(0, 100).toFixed(3)} / ${ms(DELTAS - 100, DELTAS).toFixed(3)} ms per delta (first / last 100 deltas)`,
    );
  });
});
