import { describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { CallPreview, CallRisk } from "../protocol";
import { IPHONE_ORDER_PREVIEW, cardCall } from "../test/fixtures";
import { riskBadge } from "./risk-badge";

const zh = createI18n("zh-CN");
const en = createI18n("en");

function computed(content: object): CallPreview {
  return { tool: "shop__preview_pay_order", computed_at: 0, outcome: { type: "computed", content: content as never } };
}

describe("the card's risk badge", () => {
  it.each<[string, CallRisk, string | null, "danger" | "caution" | "calm" | null]>([
    ["money without a preview", "moves_money", "涉及付款或退款", "danger"],
    ["a ticket to a person", "reaches_out", "会转给店外的人", "caution"],
    ["a change that cannot be undone", "irreversible", "不可撤销", "danger"],
    ["a cart line or an address", "undoable", "可撤回", "calm"],
    ["a write that only adds", "adds", null, null],
    ["a read", "reads", null, null],
  ])("words %s", (_, risk, text, tone) => {
    const badge = riskBadge(cardCall({ call_id: "c", risk }), zh);
    expect(badge?.text ?? null).toBe(text);
    expect(badge?.tone ?? null).toBe(tone);
  });

  it("names the amount an order would charge, from its preview", () => {
    const badge = riskBadge(cardCall({ call_id: "c", risk: "moves_money", preview: IPHONE_ORDER_PREVIEW }), zh);
    expect(badge?.text).toBe("将付款 ¥6,499.00");
    expect(riskBadge(cardCall({ call_id: "c", risk: "moves_money", preview: IPHONE_ORDER_PREVIEW }), en)?.text).toBe("Pays ¥6,499.00");
  });

  it("names the amount a cancellation would pay back", () => {
    const preview = computed({ totals: [{ kind: "refund", amountFen: 649900 }] });
    expect(riskBadge(cardCall({ call_id: "c", risk: "moves_money", preview }), zh)?.text).toBe("将退款 ¥6,499.00");
  });

  it("promises no amount when the shop says the call cannot run", () => {
    const preview = computed({
      totals: [{ kind: "refund", amountFen: 649900 }],
      warnings: [{ code: "order_not_cancellable", message: "订单已取消", blocking: true }],
    });
    expect(riskBadge(cardCall({ call_id: "c", risk: "moves_money", preview }), zh)?.text).toBe("涉及付款或退款");
  });

  it("leaves an untrusted server's read-only claim to its own note", () => {
    const call = cardCall({ call_id: "c", risk: "irreversible", trusted: false, declares_read_only: true });
    expect(riskBadge(call, zh)).toBeNull();
  });
});
