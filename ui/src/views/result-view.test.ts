import { describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { JsonValue, ToolCallView } from "../protocol";
import { XSS_IMG, XSS_SCRIPT } from "../test/fixtures";
import { CART_VIEW, COUPON_REPORT, ONE_ORDER, SEARCH_RESULT, TRACE, TWO_ORDERS } from "../test/shop-results";
import { toolChip } from "./chip";
import { resultView } from "./result-view";

const zh = createI18n("zh-CN");

const headers = (el: ParentNode) => [...el.querySelectorAll("th")].map((th) => th.textContent);
const column = (el: ParentNode, field: string) => [...el.querySelectorAll(`td[data-field="${field}"]`)].map((td) => td.textContent);
const field = (el: ParentNode, name: string) => el.querySelector(`dd[data-field="${name}"]`)?.textContent;

describe("a tool's structured result as the shopper reads it", () => {
  it("shows search_product's models as a table of name, category, price range and configurations", () => {
    const el = resultView(SEARCH_RESULT, zh);
    expect(headers(el)).toEqual(["名称", "类目", "最低价", "最高价", "配置"]);
    expect(column(el, "name")).toEqual(["iPhone 17", "iPhone 16"]);
    expect(column(el, "minPriceFen")).toEqual(["¥6,799.00", "¥5,999.00"]);
    expect(column(el, "maxPriceFen")).toEqual(["¥8,799.00", "¥5,999.00"]);
    expect(column(el, "skus")).toEqual(["256GB 黑色、512GB 黑色", "128GB 黑色"]);
    expect(el.querySelector("tbody tr")?.getAttribute("title")).toBe("IPHONE-17");
    // The yuan text written beside the fen, and what only the model needs, are left out.
    expect(el.textContent).not.toContain("6799.00");
    expect(el.textContent).not.toContain("relevance");
    expect(el.textContent).not.toContain("lookedFor");
    expect(field(el, "matched")).toBe("2");
  });

  it("shows the cart's lines with prices now and their change, then its totals", () => {
    const el = resultView(CART_VIEW, zh);
    expect(headers(el)).toEqual(["名称", "数量", "现价", "价格变化", "小计", "能否下单"]);
    expect(column(el, "priceChangeFen")).toEqual(["\u2212¥100.00"]);
    expect(column(el, "subtotalFen")).toEqual(["¥3,598.00"]);
    const amounts = el.querySelector(".result-amounts");
    expect(amounts?.textContent).toBe("合计¥3,598.00可下单合计¥3,598.00");
    expect(field(el, "itemCount")).toBe("2");
  });

  it("shows one order in full: times in local time, its lines, amounts and receiver", () => {
    const el = resultView(ONE_ORDER, zh);
    expect(field(el, "orderNo")).toBe("88239");
    expect(field(el, "createdAt")).toBe("2026/11/30 21:15");
    expect(field(el, "paidAt")).toBe("—");
    expect(column(el, "skuName")).toEqual(["iPhone 17 256GB 黑色"]);
    expect(field(el, "payAmountFen")).toBe("¥6,799.00");
    expect(el.querySelector('[data-field="receiver"]')?.textContent).toContain("上海市浦东新区世纪大道 100 号");
    expect(el.textContent).not.toContain("pay_order");
  });

  it("shows several orders as a table, each order's goods in a word", () => {
    const el = resultView(TWO_ORDERS, zh);
    expect(headers(el)).toEqual(["订单号", "创建时间", "状态", "商品", "支付金额"]);
    expect(column(el, "lines")).toEqual(["iPhone 17 256GB 黑色 ×1", "AirPods Pro 3 ×1"]);
    expect(column(el, "payAmountFen")).toEqual(["¥6,799.00", "¥1,799.00"]);
  });

  it("shows a logistics trace's events with local times", () => {
    const el = resultView(TRACE, zh);
    const events = el.querySelector('[data-field="events"]');
    expect(events && headers(events)).toEqual(["时间", "地点", "说明"]);
    expect(events && column(events, "at")).toEqual(["2026/11/30 08:30", "2026/11/29 18:00"]);
    expect(field(el, "delivered")).toBe("否");
  });

  it("shows coupons with their rule, validity and discount", () => {
    const el = resultView(COUPON_REPORT, zh);
    const coupons = el.querySelector('[data-field="coupons"]');
    expect(coupons && headers(coupons)).toEqual(["名称", "规则", "有效期至", "可用", "可优惠"]);
    expect(coupons && column(coupons, "validTo")).toEqual(["2026/12/31 23:59"]);
    expect(coupons && column(coupons, "discountFen")).toEqual(["¥200.00"]);
    expect(el.textContent).not.toContain("reasonCode");
  });

  it("shows any other structure as labelled fields, nested, with epoch-millisecond times", () => {
    const at = Date.UTC(2026, 10, 30, 12, 0);
    const value: JsonValue = { ticketNo: "T-1", refundFen: 1250, handledAt: at, extra: { deepValue: [1, 2], flag: true } };
    const en = resultView(value, createI18n("en"));
    expect(field(en, "ticketNo")).toBe("T-1");
    expect(field(en, "refundFen")).toBe("¥12.50");
    // 12:00 UTC in the tests' zone (Asia/Shanghai, vite.config.ts).
    expect(field(en, "handledAt")).toBe("11/30/2026, 08:00 PM");
    const extra = en.querySelector('[data-field="extra"]');
    expect(extra?.querySelector("h5")?.textContent).toBe("Extra");
    expect(extra && field(extra, "deepValue")).toBe("1, 2");
    expect(extra && field(extra, "flag")).toBe("yes");
    expect([...en.querySelectorAll("dt")].map((dt) => dt.textContent)).toContain("Deep value");
  });

  it("keeps HTML in values and keys as text", () => {
    const el = resultView({ items: [{ name: XSS_IMG, [XSS_SCRIPT]: XSS_SCRIPT }], note: XSS_IMG }, zh);
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("script")).toBeNull();
    expect(el.textContent).toContain(XSS_IMG);
    expect(el.textContent).toContain(XSS_SCRIPT);
  });
});

function call(overrides: Partial<ToolCallView>): ToolCallView {
  return {
    call_id: "c1", qualified_name: "shop__query_cart", server: "shop", tool: "query_cart", title: "查看购物车",
    arguments: {}, status: "succeeded", output: "购物车：AirPods Pro 3 × 2", is_error: false, destructive: false,
    reply_id: null, structured_output: CART_VIEW, rejection: null, deny_reason: null, preview: null, labels_schema: null,
    ...overrides,
  };
}

describe("a chip's result", () => {
  it("shows the shopper's view with the text for the model one click away", () => {
    const chip = toolChip(call({}), zh);
    expect(chip.el.querySelector('[data-testid="result-view"]')).not.toBeNull();
    const raw = chip.el.querySelector<HTMLDetailsElement>('[data-testid="result-raw"]');
    expect(raw?.querySelector("summary")?.textContent).toBe("原文");
    expect(raw?.open).toBe(false);
    expect(raw?.querySelector("pre")?.textContent).toBe("购物车：AirPods Pro 3 × 2");
  });

  it("keeps Raw open while the call's status moves on", () => {
    const chip = toolChip(call({ status: "running", structured_output: null, output: null }), zh);
    expect(chip.el.querySelector('[data-testid="result-view"]')).toBeNull();
    const done = call({});
    chip.update(done);
    const raw = chip.el.querySelector<HTMLDetailsElement>('[data-testid="result-raw"]');
    if (raw) raw.open = true;
    chip.update({ ...done });
    expect(chip.el.querySelector<HTMLDetailsElement>('[data-testid="result-raw"]')?.open).toBe(true);
  });

  it("shows a failed call's text, not its structured error", () => {
    const chip = toolChip(call({ status: "failed", is_error: true, output: "库存不足", structured_output: { error: { code: "OUT_OF_STOCK", message: "库存不足" } } }), zh);
    expect(chip.el.querySelector('[data-testid="result-view"]')).toBeNull();
    expect(chip.el.querySelector('[data-testid="result-raw"]')).toBeNull();
    expect(chip.el.textContent).toContain("库存不足");
  });
});
