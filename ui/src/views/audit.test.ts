import { describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { AuditEntry } from "../protocol";
import { FakeApi } from "../test/fake-api";
import { IPHONE_ORDER_PREVIEW } from "../test/fixtures";
import { auditView } from "./audit";

function entry(overrides: Partial<AuditEntry>): AuditEntry {
  return {
    id: 1,
    at: Date.UTC(2025, 0, 1, 8, 0),
    session_id: "s1",
    call_id: "call-order",
    server: "shop",
    tool: "create_order",
    arguments_hash: "ab".repeat(32),
    decision: "user_approved",
    reason: null,
    old_definition_hash: null,
    new_definition_hash: null,
    preview: null,
    ...overrides,
  };
}

async function rows(lang: "zh-CN" | "en", entries: AuditEntry[]): Promise<HTMLElement[]> {
  const api = new FakeApi();
  api.audit = entries;
  const view = auditView({ api, i18n: createI18n(lang), sessions: () => [] });
  await view.load();
  return [...view.el.querySelectorAll<HTMLElement>('[data-testid="audit-row"]')];
}

describe("the audit log and previews", () => {
  it("names a changed preview in both languages", async () => {
    const [zh] = await rows("zh-CN", [entry({ decision: "preview_changed" })]);
    expect(zh.querySelector(".decision")?.textContent).toBe("预览已变化，需重新决定");
    const [en] = await rows("en", [entry({ decision: "preview_changed" })]);
    expect(en.querySelector(".decision")?.textContent).toBe("what it would do changed: asked again");
  });

  it("shows the summary of the preview a decision was taken on, with the amount to pay", async () => {
    const [row] = await rows("zh-CN", [entry({ preview: IPHONE_ORDER_PREVIEW })]);
    const cell = row.querySelector(".audit-preview");
    expect(cell?.textContent).toContain("提交订单：1 件商品，应付 ¥6,499.00");
    expect(cell?.querySelector(".audit-pay")?.textContent).toBe("应付 ¥6,499.00");
  });

  it("shows a refused preview's reason, and nothing for a call without a preview", async () => {
    const refused = entry({ id: 2, at: 2, preview: { tool: "t", computed_at: 0, outcome: { type: "refused", message: "库存不足" } } });
    const [first, second] = await rows("zh-CN", [entry({ at: 1 }), refused]);
    expect(first.querySelector(".audit-preview")?.textContent).toBe("商城表示此操作会被拒绝：库存不足");
    expect(second.querySelector(".audit-preview")?.textContent).toBe("");
  });
});
