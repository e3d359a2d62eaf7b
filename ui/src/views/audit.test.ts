import { describe, expect, it, vi } from "vitest";

import { createI18n } from "../i18n";
import type { AuditEntry, CallPreview, KeptMandate, SessionInfo, ToolCallView, ToolPolicyView } from "../protocol";
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
    call: null,
    ...overrides,
  };
}

function toolCall(call_id: string, overrides: Partial<ToolCallView>): ToolCallView {
  return {
    call_id, qualified_name: "shop__pay_order", server: "shop", tool: "pay_order", title: null, arguments: {},
    status: "succeeded", output: "ok", is_error: false, destructive: true, reply_id: null, structured_output: null,
    rejection: null, deny_reason: null, preview: null, labels_schema: null, ...overrides,
  };
}

function tool(name: string, title: string): ToolPolicyView {
  return {
    qualified_name: `shop__${name}`, server: "shop", tool: name, title, read_only: false, destructive: true, trusted: true,
    definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: false, moves_money: true, group: "money",
  };
}

const SESSION: SessionInfo = { id: "s1", title: "买手机", created_at: 1, updated_at: 2 };

interface Setup {
  lang?: "zh-CN" | "en";
  entries: AuditEntry[];
  mandates?: KeptMandate[];
  calls?: ToolCallView[];
  tools?: ToolPolicyView[];
  openSession?: (id: string) => void;
}

async function mount({ lang = "zh-CN", entries, calls = [], tools = [], openSession, mandates = [] }: Setup) {
  const api = new FakeApi();
  api.mandates = mandates;
  // Each row carries its call as the core stores it now.
  api.audit = entries.map((e) => ({ ...e, call: e.call ?? calls.find((c) => c.call_id === e.call_id) ?? null }));
  api.tools = tools;
  api.sessions = [SESSION];
  const view = auditView({ api, i18n: createI18n(lang), sessions: () => api.sessions, openSession });
  await view.load();
  const rows = () => [...view.el.querySelectorAll<HTMLElement>('[data-testid="audit-row"]')];
  return { api, view, rows };
}

const outcome = (row: HTMLElement) => row.querySelector<HTMLElement>('[data-testid="audit-outcome"]');

describe("the audit log and previews", () => {
  it("names a changed preview in both languages", async () => {
    const [zh] = (await mount({ entries: [entry({ decision: "preview_changed" })] })).rows();
    expect(zh.querySelector(".decision")?.textContent).toBe("预览已变化，需重新决定");
    const [en] = (await mount({ lang: "en", entries: [entry({ decision: "preview_changed" })] })).rows();
    expect(en.querySelector(".decision")?.textContent).toBe("what it would do changed: asked again");
  });

  it("says what a call was about with its preview's summary, the amount not repeated", async () => {
    const [row] = (await mount({ entries: [entry({ preview: IPHONE_ORDER_PREVIEW })] })).rows();
    expect(row.querySelector(".audit-preview")?.textContent).toBe("提交订单：1 件商品，应付 ¥6,499.00");
    expect(row.querySelector(".audit-pay")).toBeNull();
  });

  it("adds the amount to pay when the summary does not say it", async () => {
    const preview: CallPreview = {
      tool: "shop__preview_pay_order",
      computed_at: 0,
      outcome: { type: "computed", content: { summary: "支付订单 88239", totals: [{ kind: "pay", amountFen: 679900 }] } },
    };
    const [row] = (await mount({ entries: [entry({ tool: "pay_order", preview })], tools: [tool("pay_order", "支付订单")] })).rows();
    expect(row.querySelector(".audit-title")?.textContent).toBe("支付订单");
    expect(row.querySelector(".audit-pay")?.textContent).toBe("应付 ¥6,799.00");
  });

  it("shows a refused preview's reason, and nothing for a call without a preview or transcript", async () => {
    const refused = entry({ id: 2, at: 2, preview: { tool: "t", computed_at: 0, outcome: { type: "refused", message: "库存不足" } } });
    const [first, second] = (await mount({ entries: [entry({ at: 1, session_id: "gone" }), refused] })).rows();
    expect(first.querySelector(".audit-preview")?.textContent).toBe("商城表示此操作会被拒绝：库存不足");
    expect(second.querySelector(".audit-preview")?.textContent).toBe("");
  });
});

describe("the audit log, for a person", () => {
  it("shows local time, the tool's title and its key arguments in words", async () => {
    const at = Date.UTC(2026, 10, 30, 13, 5);
    const { rows } = await mount({
      entries: [entry({ at, call_id: "p1", tool: "pay_order" })],
      calls: [toolCall("p1", { arguments: { orderNo: "88239", amountFen: 679900 } })],
      tools: [tool("pay_order", "支付订单")],
    });
    const [row] = rows();
    expect(row.querySelector(".audit-time")?.textContent).toBe("2026/11/30 21:05"); // 13:05 UTC in Asia/Shanghai
    expect(row.querySelector(".audit-title")?.textContent).toBe("支付订单");
    expect(row.querySelector(".audit-preview")?.textContent).toBe("订单号 88239 · 金额 ¥6,799.00");
  });

  it("falls back to the tool's name when no tool title is known", async () => {
    const [row] = (await mount({ entries: [entry({ tool: "mystery_tool" })] })).rows();
    expect(row.querySelector(".audit-title")?.textContent).toBe("mystery_tool");
  });

  it("shows each call's outcome from its chat: succeeded, failed with its reason, interrupted, not finished", async () => {
    const { rows } = await mount({
      entries: [
        entry({ id: 1, at: 4, call_id: "ok" }),
        entry({ id: 2, at: 3, call_id: "bad" }),
        entry({ id: 3, at: 2, call_id: "cut" }),
        entry({ id: 4, at: 1, call_id: "run" }),
      ],
      calls: [
        toolCall("ok", {}),
        toolCall("bad", { status: "failed", is_error: true, output: "订单已取消，不能支付" }),
        toolCall("cut", { status: "interrupted", output: null }),
        toolCall("run", { status: "running", output: null }),
      ],
    });
    expect(rows().map((row) => outcome(row)?.dataset.outcome)).toEqual(["succeeded", "failed", "interrupted", "pending"]);
    expect(rows().map((row) => outcome(row)?.textContent)).toEqual(["已完成", "失败：订单已取消，不能支付", "已中断（结果未知）", "尚未完成"]);
  });

  it("says a denied call did not run, and that a deleted chat's outcome is not known", async () => {
    const { rows, api } = await mount({
      entries: [entry({ id: 1, at: 2, call_id: "no", decision: "user_denied", reason: "太贵" }), entry({ id: 2, at: 1, session_id: "deleted" })],
      calls: [toolCall("no", { status: "denied", output: null, deny_reason: "太贵" })],
    });
    const [denied, gone] = rows();
    expect(outcome(denied)?.textContent).toBe("未执行");
    expect(denied.querySelector(".audit-reason")?.textContent).toBe("太贵");
    expect(outcome(gone)?.dataset.outcome).toBe("unknown");
    expect(gone.querySelector(".audit-chat-gone")?.textContent).toBe("对话已删除");
    // Outcomes come with the rows: viewing the log opens no chat.
    expect(api.of("open_session")).toEqual([]);
  });

  it("links each row to its chat", async () => {
    const openSession = vi.fn();
    const [row] = (await mount({ entries: [entry({})], openSession })).rows();
    const link = row.querySelector<HTMLButtonElement>('[data-testid="audit-open-session"]');
    expect(link?.textContent).toBe("买手机");
    link?.click();
    expect(openSession).toHaveBeenCalledWith("s1");
  });

  it("keeps hashes and ids behind details", async () => {
    const [row, definition] = (
      await mount({
        entries: [
          entry({ at: 2 }),
          entry({ id: 2, at: 1, decision: "user_accepted_definition", old_definition_hash: "old1", new_definition_hash: "new2" }),
        ],
      })
    ).rows();
    const details = row.querySelector<HTMLDetailsElement>('[data-testid="audit-details"]');
    expect(details?.open).toBe(false);
    expect(details?.querySelector("summary")?.textContent).toBe("详情");
    expect(details?.textContent).toContain("ab".repeat(32));
    expect(details?.textContent).toContain("call-order");
    expect(row.querySelector(".audit-preview")?.textContent).not.toContain("abab");
    expect(definition.querySelector('[data-testid="audit-details"]')?.textContent).toContain("old1 → new2");
    expect(outcome(definition)?.dataset.outcome).toBe("none");
  });

  it("filters by decision and by a range of local dates", async () => {
    const day = (d: number, hour = 12) => new Date(2026, 10, d, hour).getTime();
    const { view, rows } = await mount({
      entries: [
        entry({ id: 1, at: day(28), call_id: "a", decision: "user_approved" }),
        entry({ id: 2, at: day(29, 0), call_id: "b", decision: "user_denied" }),
        entry({ id: 3, at: day(30, 23), call_id: "c", decision: "user_approved" }),
      ],
    });
    const ids = () => rows().map((row) => row.dataset.callId);
    expect(ids()).toEqual(["c", "b", "a"]);
    const set = (testid: string, value: string) => {
      const control = view.el.querySelector<HTMLInputElement | HTMLSelectElement>(`[data-testid="${testid}"]`);
      if (!control) throw new Error(`no ${testid}`);
      control.value = value;
      control.dispatchEvent(new Event("change"));
    };
    set("audit-filter-decision", "user_approved");
    expect(ids()).toEqual(["c", "a"]);
    set("audit-filter-from", "2026-11-29");
    expect(ids()).toEqual(["c"]);
    set("audit-filter-decision", "");
    set("audit-filter-to", "2026-11-29");
    expect(ids()).toEqual(["b"]);
    set("audit-filter-decision", "expired");
    expect(rows()).toHaveLength(0);
    expect(view.el.querySelector(".empty")?.textContent).toBe("没有符合筛选条件的记录。");
  });

  it("reads the dates in the order the page's language writes them", async () => {
    const day = (d: number) => new Date(2026, 10, d, 12).getTime();
    const { view, rows } = await mount({
      lang: "en",
      entries: [
        entry({ id: 1, at: day(28), call_id: "a", decision: "user_approved" }),
        entry({ id: 2, at: day(30), call_id: "b", decision: "user_denied" }),
      ],
    });
    const from = view.el.querySelector<HTMLInputElement>('[data-testid="audit-filter-from"]');
    const error = view.el.querySelector<HTMLElement>('[data-testid="audit-filter-from-error"]');
    if (!from || !error) throw new Error("no date field");
    expect(from.placeholder).toBe("MM/DD/YYYY");
    const type = (text: string) => {
      from.value = text;
      from.dispatchEvent(new Event("change"));
    };
    type("11/29/2026");
    expect(rows().map((row) => row.dataset.callId)).toEqual(["b"]);
    expect(from.getAttribute("aria-invalid")).toBe("false");
    type("29/11/2026");
    expect(from.getAttribute("aria-invalid")).toBe("true");
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("Not a date: write it as MM/DD/YYYY, for example 11/30/2026");
    expect(rows()).toHaveLength(2);
    type("");
    expect(error.hidden).toBe(true);
  });
});

describe("the payments the shopper signed", () => {
  const signed = (overrides: Partial<KeptMandate>): KeptMandate => ({
    call_id: "c1", session_id: "s1", merchant: "https://shop.example", checkout_id: "chk_1", total: 679900, currency: "CNY",
    signed_at: Date.UTC(2026, 11, 4, 2, 0), completed_at: Date.UTC(2026, 11, 4, 2, 1), order: "88301",
    evidence: { mandate: { outcome: "holds" }, merchant_signature: { outcome: "holds" }, receipt: { outcome: "holds" } },
    ...overrides,
  });

  it("lists each with its merchant, checkout, amount, order and whether its signatures still hold", async () => {
    const altered = signed({
      call_id: "c2", checkout_id: "chk_2", order: null, completed_at: null,
      evidence: { mandate: { outcome: "fails", reason: "the signature does not match the signed content" }, merchant_signature: { outcome: "holds" }, receipt: null },
    });
    const { view } = await mount({ entries: [], mandates: [signed({}), altered] });
    const section = view.el.querySelector<HTMLElement>('[data-testid="mandates"]')!;
    expect(section.hidden).toBe(false);
    const [good, bad] = [...section.querySelectorAll<HTMLElement>('[data-testid="mandate-row"]')];
    expect(good.dataset.holds).toBe("true");
    expect(good.textContent).toContain("https://shop.example");
    expect(good.textContent).toContain("chk_1");
    expect(good.textContent).toContain("¥6,799.00");
    expect(good.textContent).toContain("订单 88301");
    expect([...good.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["你的授权：核对无误", "商家签名：核对无误", "收据：核对无误"]);
    expect(bad.dataset.holds).toBe("false");
    expect(bad.textContent).toContain("未完成");
    expect(bad.querySelector("li")?.textContent).toBe("你的授权：核对不通过（the signature does not match the signed content）");
  });

  it("is not shown while nothing was signed", async () => {
    const { view } = await mount({ entries: [] });
    expect(view.el.querySelector<HTMLElement>('[data-testid="mandates"]')!.hidden).toBe(true);
  });
});
