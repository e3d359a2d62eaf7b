import { describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { CallPreview, JsonValue } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { AIRPODS_CART_PREVIEW, CREATE_ORDER_CALL, IPHONE_ORDER_PREVIEW, XSS_IMG, XSS_SCRIPT, card, cardCall } from "../test/fixtures";
import { mountCard } from "../test/mount-card";
import { previewView } from "./card-preview";

const zh = createI18n("zh-CN");
const en = createI18n("en");

function computed(content: JsonValue): CallPreview {
  return { tool: "shop__preview_x", computed_at: 0, outcome: { type: "computed", content } };
}

const texts = (root: Element, sel: string) => [...root.querySelectorAll(sel)].map((el) => el.textContent);

function mountCall(...calls: Parameters<typeof cardCall>[0][]): HTMLElement {
  return mountCard(card(calls.map(cardCall)), new FakeApi()).el;
}

describe("a card shows a call's preview as the shopper's view", () => {
  it("shows the iPhone 17 order: summary, goods, totals with the coupon, and the address", () => {
    const el = previewView(IPHONE_ORDER_PREVIEW, zh);
    expect(el.querySelector('[data-testid="preview-summary"]')?.textContent).toBe("提交订单：1 件商品，应付 ¥6,499.00");
    expect(texts(el, ".preview-lines th")).toEqual(["商品", "单价", "数量", "小计", "剩余库存"]);
    expect(texts(el, ".preview-lines td")).toEqual(["iPhone 17256GB 黑色", "¥6,799.00", "1", "¥6,799.00", "9"]);
    expect(texts(el, ".preview-totals dt")).toEqual(["商品金额", "优惠店铺满减券（SHOP-5000-300）", "应付"]);
    expect(texts(el, ".preview-totals dd")).toEqual(["¥6,799.00", "−¥300.00", "¥6,499.00"]);
    expect(el.querySelector(".preview-totals dd.preview-total-pay")).not.toBeNull();
    expect(el.querySelector('[data-testid="preview-address"]')?.textContent).toContain("张明 13800138000");
    expect(el.querySelector('[data-testid="preview-address"]')?.textContent).toContain("科苑路 88 号");
    // When it was worked out, never the tool's internal name.
    expect(el.querySelector(".preview-source")?.textContent).toMatch(/^预览计算于 /);
    expect(el.textContent).not.toContain(IPHONE_ORDER_PREVIEW.tool);
  });

  it("names each kind of total in the page's language, with the server's label beside it", () => {
    const content = {
      summary: "s",
      totals: ["goods", "discount", "shipping", "pay", "refund", "cart"].map((kind) => ({ kind, amountFen: 100 })),
    };
    expect(texts(previewView(computed(content), en), ".preview-totals dt")).toEqual([
      "Goods",
      "Discount",
      "Shipping",
      "To pay",
      "Refund",
      "Cart total",
    ]);
    expect(texts(previewView(computed(content), zh), ".preview-totals dt")).toEqual(["商品金额", "优惠", "运费", "应付", "退款", "购物车合计"]);
    // A label that only repeats the kind's name is not shown twice.
    expect(texts(previewView(IPHONE_ORDER_PREVIEW, en), ".preview-totals dt")).toEqual(["Goods", "Discount店铺满减券（SHOP-5000-300）", "To pay"]);
  });

  it("shows a cart change as quantity before → after", () => {
    const el = previewView(
      computed({ summary: "加入购物车", lines: [{ name: "AirPods", quantity: 3, quantityBefore: 1 }], totals: [{ kind: "cart", amountFen: 5_399_700 }] }),
      zh,
    );
    // Columns no line fills are left out.
    expect(texts(el, ".preview-lines th")).toEqual(["商品", "数量"]);
    expect(texts(el, ".preview-lines td")).toEqual(["AirPods", "1 → 3"]);
    expect(texts(el, ".preview-totals dd")).toEqual(["¥53,997.00"]);
  });

  it("shows a changed address as before → after", () => {
    const el = previewView(
      computed({
        summary: "修改地址",
        address: { receiverName: "李四", receiverPhone: "139", receiverAddress: "北京" },
        addressBefore: { receiverName: "张明", receiverPhone: "138", receiverAddress: "上海" },
      }),
      en,
    );
    expect(el.querySelector(".preview-address-before")?.textContent).toBe("Before张明 138上海");
    expect(el.querySelector(".preview-address-after")?.textContent).toBe("After李四 139北京");
  });

  it("says the shopper will choose the address when the shop will ask, and shows none as chosen", () => {
    const content = {
      summary: "提交订单：1 件商品，应付 ¥6,799.00",
      addressChoices: [
        { receiverName: "李雷", receiverPhone: "13700137000", receiverAddress: "北京市海淀区中关村大街 1 号" },
        { receiverName: "张明", receiverPhone: "13800138000", receiverAddress: "上海市浦东新区张江镇科苑路 88 号" },
      ],
    };
    const el = previewView(computed(content), zh);
    const block = el.querySelector('[data-testid="preview-address"]');
    expect(block?.querySelector(".preview-address-asked")?.textContent).toBe("尚未选定：下单时商城会请您从 2 个已保存地址中选择");
    expect(texts(block!, ".preview-address-choices li")).toEqual([
      "李雷 13700137000北京市海淀区中关村大街 1 号",
      "张明 13800138000上海市浦东新区张江镇科苑路 88 号",
    ]);
    expect(previewView(computed(content), en).querySelector(".preview-address-asked")?.textContent).toBe(
      "Not chosen yet: when the order is placed, the shop will ask you to choose one of your 2 saved addresses",
    );
  });

  it("shows a finished order's address from its result, not the one the preview expected", () => {
    const used = { receiverName: "李雷", receiverPhone: "13700137000", receiverAddress: "北京市海淀区中关村大街 1 号" };
    const el = previewView(IPHONE_ORDER_PREVIEW, zh, used);
    const block = el.querySelector('[data-testid="preview-address"]');
    expect(block?.querySelector(".preview-address-heading")?.textContent).toBe("收货信息（订单实际使用）");
    expect(block?.querySelector('[data-testid="address-used"]')?.textContent).toBe("李雷 13700137000北京市海淀区中关村大街 1 号");
    expect(block?.textContent).not.toContain("科苑路");
  });

  it("puts blocking warnings first and marks them stronger than notes", () => {
    const el = previewView(
      computed({
        summary: "当前无法执行：库存不足",
        warnings: [
          { code: "price_changed", message: "价格已变化", blocking: false },
          { code: "INSUFFICIENT_STOCK", message: "库存不足", blocking: true },
        ],
      }),
      zh,
    );
    const items = [...el.querySelectorAll<HTMLElement>('[data-testid="preview-warning"]')];
    expect(items.map((li) => [li.dataset.blocking, li.textContent])).toEqual([
      ["true", "无法执行 库存不足"],
      ["false", "提示 价格已变化"],
    ]);
    expect(items[0].classList.contains("preview-warning-blocking")).toBe(true);
    expect(items[1].classList.contains("preview-note")).toBe(true);
  });

  it("shows the shop's refusal prominently and an unavailable preview calmly", () => {
    const refused = previewView({ tool: "t", computed_at: 0, outcome: { type: "refused", message: "库存不足" } }, zh);
    expect(refused.querySelector(".preview-refused")?.textContent).toBe("商城表示此操作会被拒绝：库存不足");
    const unavailable = previewView({ tool: "t", computed_at: 0, outcome: { type: "unavailable", message: "server gone" } }, en);
    expect(unavailable.querySelector(".preview-unavailable")?.textContent).toBe("No preview of this action could be computed: server gone");
    expect(unavailable.dataset.outcome).toBe("unavailable");
  });

  it("says in the shopper's language why a merchant's checkout cannot be paid, the technical reason beside it", () => {
    const notPayable = (problem: Extract<CallPreview["outcome"], { type: "not_payable" }>["problem"], i18n = zh) =>
      previewView({ tool: "merchant__get_checkout", computed_at: 0, outcome: { type: "not_payable", problem } }, i18n);
    const altered = notPayable({ kind: "signature_invalid", detail: "the signature does not match the signed content" }, en);
    expect(altered.dataset.outcome).toBe("not_payable");
    expect(altered.querySelector(".preview-not-payable")?.textContent).toBe(
      "This checkout cannot be paid: the merchant's signature on it does not hold; the amounts or terms may have been changed on the way",
    );
    expect(altered.querySelector(".preview-detail")?.textContent).toBe("Details: the signature does not match the signed content");
    expect(notPayable({ kind: "currency", currency: "USD" }).querySelector(".preview-not-payable")?.textContent).toBe(
      "这笔结账不能付款：结账币种为 USD，本应用只显示人民币金额",
    );
    expect(notPayable({ kind: "not_trusted" }).querySelector(".preview-detail")).toBeNull();
  });

  it("ignores unknown or mistyped fields and never crashes on odd content", () => {
    const odd: JsonValue[] = [
      null,
      "text",
      [1, 2],
      { summary: 5, lines: "x", totals: {}, warnings: [null, 3, { blocking: true }] },
      { summary: "ok", lines: [{ name: 1 }, { name: "A", unitPriceFen: "100", quantity: 1.5, subtotalFen: 1.5, extra: {} }] },
      { totals: [{ kind: "tax", amountFen: 100 }, { kind: "pay", amountFen: 2 ** 60 }, { kind: "bogus" }] },
      { address: "nowhere", addressBefore: { receiverName: 3 } },
    ];
    for (const content of odd) expect(() => previewView(computed(content), zh)).not.toThrow();
    const lines = previewView(computed(odd[4]), zh);
    expect(texts(lines, ".preview-lines td")).toEqual(["A"]);
    // An unknown kind without a label is dropped; an amount that is not exact is not guessed.
    const totals = previewView(computed(odd[5]), zh);
    expect(texts(totals, ".preview-totals dt")).toEqual(["应付"]);
    expect(texts(totals, ".preview-totals dd")).toEqual(["—"]);
  });

  it("renders the server's text as literal text, never as markup", () => {
    const el = previewView(
      computed({
        summary: XSS_SCRIPT,
        lines: [{ name: XSS_IMG, spec: XSS_SCRIPT, note: XSS_IMG, quantity: 1 }],
        totals: [{ kind: "discount", label: XSS_IMG, amountFen: -1 }],
        address: { receiverAddress: XSS_IMG },
        warnings: [{ message: XSS_SCRIPT, blocking: true }],
      }),
      zh,
    );
    expect(el.querySelector("img, script")).toBeNull();
    expect(el.textContent).toContain(XSS_IMG);
    expect(el.textContent).toContain(XSS_SCRIPT);
  });

  it("keeps the arguments one click away on a card with a preview", () => {
    const el = mountCall(CREATE_ORDER_CALL);
    expect(el.querySelector('[data-testid="preview"]')).not.toBeNull();
    const args = el.querySelector<HTMLDetailsElement>('[data-testid="arguments"]');
    expect(args?.open).toBe(false);
    expect(args?.querySelector("summary")?.textContent).toBe("参数");
    expect(texts(args as Element, "dt")).toEqual(["商品", "优惠券"]);
    expect(JSON.parse(args?.querySelector("pre.raw-json")?.textContent ?? "")).toEqual(CREATE_ORDER_CALL.arguments);
  });

  it("shows a call without a preview as before: arguments in the open", () => {
    const el = mountCall({ call_id: "c1" });
    expect(el.querySelector('[data-testid="preview"]')).toBeNull();
    expect(el.querySelector('[data-testid="arguments"]')).toBeNull();
    expect(texts(el, ".card-args dt")).toEqual(["商品编码", "操作", "数量"]);
  });
});

describe("a card's previews account for each other", () => {
  it("the order below an add says it does not count the add yet, in the shopper's language", () => {
    const order = { ...CREATE_ORDER_CALL, risk: "moves_money" as const };
    const el = mountCall({ call_id: "add", preview: AIRPODS_CART_PREVIEW }, { ...order, call_id: "order" });
    const notes = texts(el, '[data-testid="preview-sequence"]');
    expect(notes).toEqual([zh.t("preview.mayAskAgain")]);
    expect(notes[0]).toContain("再确认");
  });

  it("once the add ran and the order asks again, the card says why", () => {
    const order = { ...CREATE_ORDER_CALL, risk: "moves_money" as const };
    const el = mountCall({ call_id: "add", preview: AIRPODS_CART_PREVIEW, status: "succeeded" }, { ...order, call_id: "order" });
    expect(texts(el, '[data-testid="preview-sequence"]')).toEqual([zh.t("preview.askedAgain")]);
  });

  it("two adds: the second shows the cart's total with the first, and the line goes when the first is denied", async () => {
    const el = mountCall({ call_id: "a1", preview: AIRPODS_CART_PREVIEW }, { call_id: "a2", preview: AIRPODS_CART_PREVIEW });
    // ¥8,797 after the second alone, ¥999 more with the first.
    expect(texts(el, '[data-testid="cart-with-earlier"]')).toEqual(["¥9,796.00"]);
    expect(texts(el, ".preview-total-cart-with-earlier")[0]).toBe("连同本卡片上面的加购");
    el.querySelector<HTMLElement>('[data-testid="deny"]')?.click();
    await settle();
    expect(texts(el, '[data-testid="cart-with-earlier"]')).toEqual([]);
  });
});
