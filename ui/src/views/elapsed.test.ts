import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { createI18n } from "../i18n";
import { callView } from "../test/fixtures";
import { toolChip } from "./chip";

const i18n = createI18n("zh-CN");

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a running call's elapsed time", () => {
  it("appears once the call has run a second, counts while it runs, and goes when it ends", () => {
    const chip = toolChip(callView({ call_id: "t1", status: "running" }), i18n);
    document.body.replaceChildren(chip.el);
    const clock = chip.el.querySelector<HTMLElement>('[data-testid="call-elapsed"]')!;
    expect(clock.hidden).toBe(true);
    expect(clock.textContent).toBe("");
    vi.advanceTimersByTime(1000);
    expect(clock.hidden).toBe(false);
    expect(clock.textContent).toBe("· 1 秒");
    // A later event of the same call does not restart the count.
    chip.update(callView({ call_id: "t1", status: "running" }));
    vi.advanceTimersByTime(2000);
    expect(clock.textContent).toBe("· 3 秒");
    chip.update(callView({ call_id: "t1", status: "succeeded", output: "ok" }));
    expect(clock.hidden).toBe(true);
    expect(clock.textContent).toBe("");
  });

  it("is never shown for a call that ends within a second", () => {
    const chip = toolChip(callView({ call_id: "t2", status: "running" }), i18n);
    document.body.replaceChildren(chip.el);
    vi.advanceTimersByTime(600);
    chip.update(callView({ call_id: "t2", status: "succeeded", output: "ok" }));
    vi.advanceTimersByTime(2000);
    expect(chip.el.querySelector<HTMLElement>('[data-testid="call-elapsed"]')!.hidden).toBe(true);
  });
});
