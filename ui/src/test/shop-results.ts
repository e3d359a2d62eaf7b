// Structured results as the shop's tools give them (crates/bitselect/src,
// serde camelCase): money both as integer fen and as formatted yuan text.

import type { JsonValue } from "../protocol";

export const SEARCH_RESULT: JsonValue = {
  matched: 2,
  returned: 2,
  sort: "relevance",
  items: [
    {
      spuCode: "IPHONE-17", name: "iPhone 17", brand: "Apple", category: "手机", subCategory: "iPhone",
      tags: ["主力", "拍照"], specs: { 芯片: "A19 芯片" },
      minPriceFen: 679900, maxPriceFen: 879900, available: true,
      skus: [
        {
          skuCode: "MG6W4CH/A", config: "256GB 黑色",
          priceFen: 679900, stock: 11, status: "在售", available: true,
        },
        {
          skuCode: "MG724CH/A", config: "512GB 黑色",
          priceFen: 879900, stock: 22, status: "在售", available: true,
        },
      ],
    },
    {
      spuCode: "IPHONE-16", name: "iPhone 16", brand: "Apple", category: "手机", subCategory: "iPhone",
      tags: [], specs: { 芯片: "A18 芯片" },
      minPriceFen: 599900, maxPriceFen: 599900, available: false,
      skus: [
        {
          skuCode: "MYEV3CH/A", config: "128GB 黑色",
          priceFen: 599900, stock: 0, status: "已下架", available: false,
        },
      ],
    },
  ],
  terms: [{ said: "iphone", lookedFor: ["iphone"] }],
};

export const CART_VIEW: JsonValue = {
  lines: [
    {
      skuCode: "MX3A2CH/A", name: "AirPods Pro 3", category: "耳机", quantity: 2, addedAt: "2026-11-30T10:00:00+08:00",
      addedPriceFen: 189900, addedPrice: "1899.00", currentPriceFen: 179900, currentPrice: "1799.00",
      priceChangeFen: -10000, priceChange: "-100.00", stock: 40, status: "在售", available: true,
      availability: "可下单", subtotalFen: 359800, subtotal: "3598.00",
    },
  ],
  itemCount: 2,
  totalFen: 359800,
  total: "3598.00",
  orderableTotalFen: 359800,
  orderableTotal: "3598.00",
};

const order = (orderNo: string, createdAt: string, lines: JsonValue[], payAmountFen: number): JsonValue => ({
  orderNo,
  status: "待支付",
  createdAt,
  paidAt: null,
  shippedAt: null,
  receivedAt: null,
  cancelledAt: null,
  lines,
  itemCount: 1,
  totalAmountFen: payAmountFen,
  totalAmount: "-",
  discountAmountFen: 0,
  discountAmount: "0.00",
  payAmountFen,
  payAmount: "-",
  couponCode: null,
  trackingNo: null,
  receiver: { name: "张三", phone: "13800000000", address: "上海市浦东新区世纪大道 100 号" },
  nextActions: ["pay_order", "cancel_order"],
});

const orderLine = (skuName: string, priceFen: number): JsonValue => ({
  lineNo: 1, skuCode: "MG6W4CH/A", skuName, priceFen, price: "-", quantity: 1, subtotalFen: priceFen, subtotal: "-",
});

export const ONE_ORDER: JsonValue = {
  orders: [order("88239", "2026-11-30T21:15:00+08:00", [orderLine("iPhone 17 256GB 黑色", 679900)], 679900)],
  matched: 1,
};

export const TWO_ORDERS: JsonValue = {
  orders: [
    order("88239", "2026-11-30T21:15:00+08:00", [orderLine("iPhone 17 256GB 黑色", 679900)], 679900),
    order("88101", "2026-11-28T09:00:00+08:00", [orderLine("AirPods Pro 3", 179900)], 179900),
  ],
  matched: 2,
};

export const TRACE: JsonValue = {
  trackingNo: "SF1234567890",
  orderNo: "88101",
  orderStatus: "已发货",
  delivered: false,
  latest: { at: "2026-11-30T08:30:00+08:00", location: "上海", description: "快件已到达【上海转运中心】" },
  events: [
    { at: "2026-11-30T08:30:00+08:00", location: "上海", description: "快件已到达【上海转运中心】" },
    { at: "2026-11-29T18:00:00+08:00", location: "深圳", description: "顺丰速运 已收取快件" },
  ],
};

export const COUPON_REPORT: JsonValue = {
  basis: "购物车中可下单的商品",
  totalFen: 359800,
  total: "3598.00",
  categoryAmounts: [{ category: "耳机", amountFen: 359800, amount: "3598.00" }],
  coupons: [
    {
      code: "CPN-200", name: "满3000减200", kind: "满减", rule: "全场满 3000 元减 200 元", category: null,
      thresholdFen: 300000, threshold: "3000.00", validFrom: "2026-11-01T00:00:00+08:00", validTo: "2026-12-31T23:59:59+08:00",
      status: "未使用", usedOnOrder: null, usable: true, discountFen: 20000, discount: "200.00", reason: null, reasonCode: null,
    },
  ],
  bestCode: "CPN-200",
};
