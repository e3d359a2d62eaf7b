// What the page knows about the fields of a tool's structured result (the
// shop's serde camelCase shapes, crates/bitselect/src): their names in the
// shopper's language, which hold money or a time, which only the model
// needs, and which columns make a list of known things readable.

import type { Lang } from "./i18n";

/** Field names in zh-CN and en; any other field is named from its key. */
const LABELS: Record<string, readonly [string, string]> = {
  name: ["名称", "Name"],
  skuName: ["商品", "Product"],
  skuCode: ["商品编码", "SKU"],
  spuCode: ["型号编码", "Model code"],
  skus: ["配置", "Configurations"],
  config: ["配置", "Configuration"],
  minPriceFen: ["最低价", "From"],
  maxPriceFen: ["最高价", "Up to"],
  nearestCategories: ["相近的类目", "Nearest categories"],
  examples: ["例如", "For example"],
  specs: ["规格", "Specs"],
  priceFen: ["价格", "Price"],
  stock: ["库存", "Stock"],
  available: ["可购买", "Available"],
  status: ["状态", "Status"],
  category: ["类目", "Category"],
  brand: ["品牌", "Brand"],
  quantity: ["数量", "Qty"],
  previousQuantity: ["原数量", "Qty before"],
  addedAt: ["加入时间", "Added"],
  addedPriceFen: ["加入时价格", "Price when added"],
  currentPriceFen: ["现价", "Price now"],
  priceChangeFen: ["价格变化", "Price change"],
  subtotalFen: ["小计", "Subtotal"],
  availability: ["能否下单", "Orderable"],
  itemCount: ["件数", "Items"],
  totalFen: ["合计", "Total"],
  orderableTotalFen: ["可下单合计", "Orderable total"],
  matched: ["匹配", "Matched"],
  returned: ["显示", "Shown"],
  items: ["商品", "Products"],
  lines: ["商品", "Items"],
  orders: ["订单", "Orders"],
  orderNo: ["订单号", "Order"],
  createdAt: ["创建时间", "Created"],
  paidAt: ["支付时间", "Paid"],
  shippedAt: ["发货时间", "Shipped"],
  receivedAt: ["签收时间", "Received"],
  cancelledAt: ["取消时间", "Cancelled"],
  finishedAt: ["完成时间", "Finished"],
  totalAmountFen: ["商品金额", "Goods"],
  discountAmountFen: ["优惠", "Discount"],
  payAmountFen: ["支付金额", "Payment"],
  paidAmountFen: ["已支付", "Paid"],
  refundAmountFen: ["退款金额", "Refund"],
  couponCode: ["优惠券", "Coupon"],
  couponReturned: ["退回的优惠券", "Coupon returned"],
  trackingNo: ["运单号", "Tracking no."],
  receiver: ["收货人", "Receiver"],
  previousReceiver: ["原收货人", "Receiver before"],
  phone: ["电话", "Phone"],
  address: ["地址", "Address"],
  afterSaleWindows: ["售后期限", "After-sale windows"],
  returnDeadline: ["退货截止", "Return by"],
  returnDaysLeft: ["退货剩余天数", "Days left to return"],
  returnOpen: ["可退货", "Return open"],
  exchangeDeadline: ["换货截止", "Exchange by"],
  exchangeDaysLeft: ["换货剩余天数", "Days left to exchange"],
  exchangeOpen: ["可换货", "Exchange open"],
  coupons: ["优惠券", "Coupons"],
  code: ["券码", "Code"],
  rule: ["规则", "Rule"],
  kind: ["类型", "Kind"],
  thresholdFen: ["门槛", "Threshold"],
  validFrom: ["生效时间", "Valid from"],
  validTo: ["有效期至", "Valid until"],
  usedOnOrder: ["使用的订单", "Used on order"],
  usable: ["可用", "Usable"],
  discountFen: ["可优惠", "Discount"],
  reason: ["原因", "Reason"],
  basis: ["试算依据", "Based on"],
  categoryAmounts: ["各类目金额", "By category"],
  amountFen: ["金额", "Amount"],
  bestCode: ["最优惠的券", "Best coupon"],
  orderStatus: ["订单状态", "Order status"],
  delivered: ["已签收", "Delivered"],
  latest: ["最新", "Latest"],
  events: ["物流轨迹", "Tracking"],
  at: ["时间", "Time"],
  time: ["时间", "Time"],
  location: ["地点", "Place"],
  description: ["说明", "Description"],
  afterSales: ["售后单", "After-sales"],
  afterSaleNo: ["售后单号", "After-sale no."],
  action: ["操作", "Action"],
  removed: ["已移出", "Removed"],
  note: ["提示", "Note"],
  cart: ["购物车", "Cart"],
  order: ["订单", "Order"],
  previousStatus: ["原状态", "Status before"],
  restocked: ["退回库存", "Restocked"],
  ticketNo: ["工单号", "Ticket"],
  topic: ["主题", "Topic"],
  error: ["错误", "Error"],
  message: ["说明", "Message"],
};

/** The field's name for the shopper. */
export function fieldLabel(key: string, lang: Lang): string {
  const known = Object.prototype.hasOwnProperty.call(LABELS, key) ? LABELS[key] : undefined;
  if (known) return known[lang === "en" ? 1 : 0];
  // fooBarFen -> "foo bar"; snake_case too.
  const words = key.replace(/Fen$/, "").replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Integer fen: shown as ¥. */
export const isMoneyKey = (key: string): boolean => /Fen$/.test(key);

/** A time: epoch milliseconds or an ISO string. */
export const isTimeKey = (key: string): boolean => /(^at|At|^time|Time|Deadline|^validFrom|^validTo)$/.test(key);

/**
 * Fields written for the model only (the tools it could call next, a
 * refusal's code beside its words, the sort it asked for, how a search
 * read its keyword).
 */
const MODEL_ONLY = new Set(["nextActions", "reasonCode", "sort", "terms", "ignored"]);

/**
 * Whether a field is left out of the shopper's view: model-only fields and
 * the formatted yuan text beside its fen (`price` next to `priceFen`).
 */
export function isHiddenField(key: string, siblings: readonly string[]): boolean {
  return MODEL_ONLY.has(key) || siblings.includes(`${key}Fen`);
}

export interface TableProfile {
  /** Keys that all appear in the shape this profile is for. */
  when: readonly string[];
  columns: readonly string[];
  /** A list of one is shown in full, not as a one-row table. */
  singleInFull?: boolean;
}

/** Columns for the lists the shop answers with, tried in order. */
export const TABLE_PROFILES: readonly TableProfile[] = [
  // search_product's models, each with its configurations
  { when: ["spuCode", "skus", "minPriceFen"], columns: ["name", "category", "minPriceFen", "maxPriceFen", "skus"] },
  // a model's configurations (SKUs)
  { when: ["skuCode", "priceFen", "stock", "available"], columns: ["config", "priceFen", "stock", "status"] },
  // query_cart's lines
  { when: ["currentPriceFen", "subtotalFen"], columns: ["name", "quantity", "currentPriceFen", "priceChangeFen", "subtotalFen", "availability"] },
  // an order's lines
  { when: ["lineNo", "skuName"], columns: ["skuName", "priceFen", "quantity", "subtotalFen"] },
  // query_order's orders
  { when: ["orderNo", "payAmountFen", "lines"], columns: ["orderNo", "createdAt", "status", "lines", "payAmountFen"], singleInFull: true },
  // query_coupons' coupons
  { when: ["rule", "usable"], columns: ["name", "rule", "validTo", "usable", "discountFen", "reason"] },
  // query_logistics' events
  { when: ["location", "description"], columns: ["at", "location", "description"] },
  // query_after_sale's after-sales
  { when: ["afterSaleNo"], columns: ["afterSaleNo", "orderNo", "skuName", "kind", "status", "createdAt", "refundAmountFen"] },
];

export function profileFor(keys: readonly string[]): TableProfile | null {
  return TABLE_PROFILES.find((profile) => profile.when.every((key) => keys.includes(key))) ?? null;
}
