import { afterEach, describe, expect, it, vi } from "vitest";

import { createI18n } from "../i18n";
import { COPIED_MS } from "./copy-button";
import { assistantMessage, userMessage } from "./messages";

const zh = createI18n("zh-CN");

function stubClipboard(writeText: ((text: string) => Promise<void>) | undefined): void {
  Object.defineProperty(navigator, "clipboard", {
    value: writeText ? { writeText } : undefined,
    configurable: true,
  });
}

function stubExecCommand(result: boolean): ReturnType<typeof vi.fn> {
  const exec = vi.fn(() => result);
  Object.defineProperty(document, "execCommand", { value: exec, configurable: true });
  return exec;
}

async function click(button: HTMLElement | null | undefined): Promise<void> {
  button?.click();
  // The copy resolves in a microtask or two.
  await vi.waitFor(() => expect(button?.dataset.state).not.toBe("idle"));
}

function mount(el: HTMLElement): HTMLElement {
  document.body.replaceChildren(el);
  return el;
}

afterEach(() => {
  vi.useRealTimers();
  Reflect.deleteProperty(navigator, "clipboard");
  Reflect.deleteProperty(document, "execCommand");
});

describe("copying messages and code", () => {
  it("copies an assistant message's Markdown source and says so for a moment", async () => {
    const writes: string[] = [];
    stubClipboard(async (text) => void writes.push(text));
    const source = "推荐 **iPhone 17**\n\n| 型号 | 价格 |\n| --- | ---: |\n| A | ¥1 |";
    const el = mount(assistantMessage({ text: source, streaming: false }, zh).el);
    const button = el.querySelector<HTMLElement>('[data-testid="copy-message"]');
    expect(button?.dataset.label).toBe("复制");
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    await click(button);
    expect(writes).toEqual([source]);
    expect(button?.dataset.state).toBe("copied");
    expect(button?.dataset.label).toBe("已复制");
    expect(button?.getAttribute("aria-label")).toBe("已复制");
    vi.advanceTimersByTime(COPIED_MS);
    expect(button?.dataset.state).toBe("idle");
    expect(button?.dataset.label).toBe("复制");
  });

  it("copies a user message as typed", async () => {
    const writes: string[] = [];
    stubClipboard(async (text) => void writes.push(text));
    const el = mount(userMessage("把 *耳机* 加入购物车", zh).el);
    await click(el.querySelector<HTMLElement>('[data-testid="copy-message"]'));
    expect(writes).toEqual(["把 *耳机* 加入购物车"]);
  });

  it("keeps button labels out of a message's text", () => {
    const el = mount(assistantMessage({ text: "好的\n\n```sh\nnpm test\n```", streaming: false }, zh).el);
    expect(el.textContent).toBe("好的npm test");
    expect(el.querySelector("pre")?.textContent).toBe("npm test");
  });

  it("copies a code block's code only", async () => {
    const writes: string[] = [];
    stubClipboard(async (text) => void writes.push(text));
    const el = mount(assistantMessage({ text: "先看\n\n```json\n{\"a\": 1}\n```\n\n再看\n\n```\nsecond\n```", streaming: false }, zh).el);
    const buttons = [...el.querySelectorAll<HTMLElement>('[data-testid="copy-code"]')];
    expect(buttons).toHaveLength(2);
    await click(buttons[0]);
    await click(buttons[1]);
    expect(writes).toEqual(['{"a": 1}', "second"]);
  });

  it("gives a streamed code block exactly one copy button", () => {
    const view = assistantMessage({ text: "", streaming: true }, zh);
    let text = "";
    for (const delta of ["代码：\n\n```", "ts\nconst a", " = 1;\n", "```\n\n完"]) {
      text += delta;
      view.update({ text, streaming: true });
    }
    view.update({ text, streaming: false });
    const pres = view.el.querySelectorAll("pre");
    expect(pres).toHaveLength(1);
    expect(pres[0].querySelectorAll('[data-testid="copy-code"]')).toHaveLength(1);
  });

  it("falls back to a selected text area when the clipboard API is missing", async () => {
    stubClipboard(undefined);
    const exec = stubExecCommand(true);
    const el = mount(userMessage("查订单 88239", zh).el);
    const button = el.querySelector<HTMLElement>('[data-testid="copy-message"]');
    await click(button);
    expect(exec).toHaveBeenCalledWith("copy");
    expect(button?.dataset.state).toBe("copied");
    expect(document.querySelector(".copy-buffer")).toBeNull();
  });

  it("falls back when the clipboard refuses, and says when nothing worked", async () => {
    stubClipboard(() => Promise.reject(new Error("denied")));
    stubExecCommand(false);
    const el = mount(userMessage("x", createI18n("en")).el);
    const button = el.querySelector<HTMLElement>('[data-testid="copy-message"]');
    await click(button);
    expect(button?.dataset.state).toBe("failed");
    expect(button?.dataset.label).toBe("Could not copy");
  });

  it("shows a regenerate button only when its hook is given", () => {
    const plain = assistantMessage({ text: "答", streaming: false }, zh);
    expect(plain.el.querySelector('[data-testid="regenerate"]')).toBeNull();
    const regenerate = vi.fn();
    const hooked = assistantMessage({ text: "答", streaming: false }, zh, { regenerate });
    hooked.el.querySelector<HTMLElement>('[data-testid="regenerate"]')?.click();
    expect(regenerate).toHaveBeenCalledTimes(1);
  });
});
