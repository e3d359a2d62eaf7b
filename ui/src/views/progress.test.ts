import { describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import { ChatLog } from "../state";
import { callView } from "../test/fixtures";
import { toolChip } from "./chip";
import { progressText } from "./progress";

const i18n = createI18n("zh-CN");

describe("a running call's progress", () => {
  it("shows the share done and the server's words on the chip while the call runs, and goes when it ends", () => {
    const log = new ChatLog("s1");
    const [entry] = log.apply({ type: "tool_call_started", call: callView({ call_id: "t1", status: "running" }) });
    if (entry.kind !== "call") throw new Error("a chip");
    const chip = toolChip(entry.call, i18n);
    const line = chip.el.querySelector<HTMLElement>('[data-testid="call-progress"]')!;
    expect(line.hidden).toBe(true);

    log.apply({ type: "tool_call_progress", call_id: "t1", progress: { progress: 1, total: 3, message: "翻到第 1 页" } });
    chip.update((log.entries[0] as typeof entry).call);
    expect(line.hidden).toBe(false);
    expect(line.textContent).toBe(" · 33% · 翻到第 1 页");

    log.apply({ type: "tool_call_finished", call: callView({ call_id: "t1", status: "succeeded", output: "3 pages" }) });
    chip.update((log.entries[0] as typeof entry).call);
    expect(line.hidden).toBe(true);
    expect(line.textContent).toBe("");
  });

  it("is not kept for a call that is not running", () => {
    const log = new ChatLog("s1");
    log.apply({ type: "tool_call_finished", call: callView({ call_id: "t2", status: "succeeded" }) });
    log.apply({ type: "tool_call_progress", call_id: "t2", progress: { progress: 2, total: 2, message: "late" } });
    const entry = log.entries[0];
    expect(entry.kind === "call" && entry.call.progress).toBeFalsy();
  });

  it("says only what a shopper can read: a count without a total is left out, a share stays within 0-100%", () => {
    expect(progressText({ progress: 7, total: null, message: null })).toBe("");
    expect(progressText({ progress: 7, total: null, message: "下载中" })).toBe(" · 下载中");
    expect(progressText({ progress: 5, total: 4, message: null })).toBe(" · 100%");
    expect(progressText({ progress: 1, total: 0, message: "  " })).toBe("");
  });
});
