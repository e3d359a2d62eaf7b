import { describe, expect, it } from "vitest";

import { sequenceOf } from "./card-sequence";
import type { CallPreview } from "./protocol";
import { AIRPODS_CART_PREVIEW, CREATE_ORDER_CALL, cardCall } from "./test/fixtures";

const ORDER = { ...CREATE_ORDER_CALL, risk: "moves_money" as const };
const ADD_AIRPODS = cardCall({ call_id: "add", preview: AIRPODS_CART_PREVIEW });

/** The AirPods add of the fixtures, for another line: one iPhone 17 at ¥6,799, cart ¥15,596 after it alone. */
const IPHONE_CART_PREVIEW: CallPreview = {
  tool: "shop__preview_update_cart_item",
  computed_at: 0,
  outcome: {
    type: "computed",
    content: {
      summary: "加入购物车：iPhone 17 256GB 黑色 ×1，购物车中 0 → 1 件",
      lines: [{ name: "iPhone 17", code: "MG6W4CH/A", unitPriceFen: 679900, quantity: 1, quantityBefore: 0 }],
      totals: [{ kind: "cart", amountFen: 1559600 }],
      warnings: [],
    },
  },
};
const ADD_IPHONE = cardCall({ call_id: "add-iphone", preview: IPHONE_CART_PREVIEW });

describe("how a preview stands to the calls above it on its card", () => {
  it("an order below an add still to run says its preview does not count the add yet", () => {
    const seq = sequenceOf([ADD_AIRPODS, ORDER], 1);
    expect(seq).toEqual({ askedAgain: false, mayAskAgain: true, cartWithEarlier: null });
  });

  it("an order asking again after the add above it ran says it was worked out again", () => {
    const seq = sequenceOf([{ ...ADD_AIRPODS, status: "succeeded" }, ORDER], 1);
    expect(seq).toEqual({ askedAgain: true, mayAskAgain: false, cartWithEarlier: null });
  });

  it("an order alone, or below only reads and denied calls, says nothing", () => {
    const read = cardCall({ call_id: "r", declares_read_only: true, status: "allowed" });
    expect(sequenceOf([ORDER], 0).mayAskAgain).toBe(false);
    expect(sequenceOf([read, { ...ADD_AIRPODS, status: "denied" }, ORDER], 2)).toEqual({
      askedAgain: false,
      mayAskAgain: false,
      cartWithEarlier: null,
    });
  });

  it("a second add counts the first in the cart's total: ¥8,797 + ¥999", () => {
    expect(sequenceOf([ADD_AIRPODS, ADD_IPHONE], 1).cartWithEarlier).toBe(1559600n + 99900n);
    // The first counts nothing above it, and a denied add above counts nothing.
    expect(sequenceOf([ADD_AIRPODS, ADD_IPHONE], 0).cartWithEarlier).toBeNull();
    expect(sequenceOf([{ ...ADD_AIRPODS, status: "denied" }, ADD_IPHONE], 1).cartWithEarlier).toBeNull();
  });

  it("an add the shop says cannot run adds nothing to the total below it", () => {
    const blocked: CallPreview = {
      ...AIRPODS_CART_PREVIEW,
      outcome: {
        type: "computed",
        content: { ...(AIRPODS_CART_PREVIEW.outcome as { content: object }).content, warnings: [{ code: "OUT_OF_STOCK", message: "无货", blocking: true }] },
      },
    };
    expect(sequenceOf([cardCall({ call_id: "b", preview: blocked }), ADD_IPHONE], 1).cartWithEarlier).toBeNull();
  });

  it("a call already decided says nothing", () => {
    expect(sequenceOf([ADD_AIRPODS, { ...ORDER, status: "approved" }], 1).mayAskAgain).toBe(false);
  });
});
