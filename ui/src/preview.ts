// A development preview of the page without the Tauri shell: the app on the
// test fake backend with a scripted conversation (a streamed answer, chips,
// a card whose order shows the shop's preview, a destructive call). Open
// /preview.html under `npm run dev`; `?theme=dark|light` and `?lang=en|zh-CN`
// are the fake core's stored appearance, `?page=settings|audit|first-run`
// opens that page. Not part of the built app.

import { FakeApi } from "./test/fake-api";
import { AIRPODS_CART_PREVIEW, CANCEL_ORDER_CALL, CREATE_ORDER_CALL, IPHONE_ORDER_PREVIEW, card, cardCall } from "./test/fixtures";
import { SEARCH_RESULT } from "./test/shop-results";
import type { AgentEvent } from "./protocol";
import { App } from "./views/app";

const params = new URLSearchParams(window.location.search);
const api = new FakeApi();
const theme = params.get("theme");
if (theme === "dark" || theme === "light") api.settings.appearance.theme = theme;
const lang = params.get("lang");
if (lang === "en" || lang === "zh-CN") api.settings.appearance.language = lang;
api.sessions = [
  { id: "s1", title: "买 iPhone 17", created_at: 1, updated_at: 3 },
  { id: "s2", title: "查订单物流", created_at: 1, updated_at: 2 },
];
api.tools = [
  { qualified_name: "shop__search_product", server: "shop", tool: "search_product", title: "搜索商品", destructive: false, read_only: true, trusted: true, definition_changed: false, user_override: null, verdict: "allow", auto_approve_allowed: false, moves_money: false, group: "read" },
  { qualified_name: "shop__query_cart", server: "shop", tool: "query_cart", title: "查看购物车", destructive: false, read_only: true, trusted: true, definition_changed: false, user_override: null, verdict: "allow", auto_approve_allowed: false, moves_money: false, group: "read" },
  { qualified_name: "shop__update_cart_item", server: "shop", tool: "update_cart_item", title: "加入/修改购物车", destructive: false, read_only: false, trusted: true, definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: true, moves_money: false, group: "cart" },
  { qualified_name: "shop__pay_order", server: "shop", tool: "pay_order", title: "支付订单", destructive: true, read_only: false, trusted: true, definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: false, moves_money: true, group: "money" },
  { qualified_name: "shop__cancel_order", server: "shop", tool: "cancel_order", title: "取消订单", destructive: true, read_only: false, trusted: true, definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: false, moves_money: true, group: "money" },
  { qualified_name: "shop__change_address", server: "shop", tool: "change_address", title: "修改收货地址", destructive: true, read_only: false, trusted: true, definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: false, moves_money: false, group: "other_write" },
];
api.audit = [
  { id: 1, at: Date.now() - 60_000, session_id: "s1", call_id: "c0", server: "shop", tool: "search_product", arguments_hash: "9f2c1e7b44d0a1b2c3d4", decision: "policy_allowed", reason: null, old_definition_hash: null, new_definition_hash: null, preview: null, call: null },
  { id: 2, at: Date.now() - 30_000, session_id: "s1", call_id: "c1", server: "shop", tool: "cancel_order", arguments_hash: "1a2b3c4d5e6f7a8b9c0d", decision: "user_denied", reason: "先不取消", old_definition_hash: null, new_definition_hash: null, preview: null, call: null },
  { id: 3, at: Date.now() - 20_000, session_id: "s1", call_id: "call-order", server: "shop", tool: "create_order", arguments_hash: "5e6f7a8b9c0d1a2b3c4d", decision: "preview_changed", reason: null, old_definition_hash: null, new_definition_hash: null, preview: IPHONE_ORDER_PREVIEW, call: null },
  { id: 4, at: Date.now() - 10_000, session_id: "s1", call_id: "call-order", server: "shop", tool: "create_order", arguments_hash: "5e6f7a8b9c0d1a2b3c4d", decision: "user_approved", reason: null, old_definition_hash: null, new_definition_hash: null, preview: IPHONE_ORDER_PREVIEW, call: null },
];
if (params.get("page") === "first-run") api.check = { state: "not_configured", message: null };
api.transcripts.set("s1", {
  session: api.sessions[0],
  items: [
    { type: "user", id: 1, text: "帮我买一台 iPhone 17 256GB 黑色，用上优惠券，再加一副 AirPods <img src=x onerror=alert(1)>", at: 1 },
    {
      type: "tool_call",
      call: {
        call_id: "c0", qualified_name: "shop__search_product", server: "shop", tool: "search_product", title: "搜索商品",
        arguments: { keyword: "iPhone 17" }, status: "succeeded", output: '[{"skuCode":"MG6W4CH/A","name":"iPhone 17 256GB 黑色 <script>alert(1)</script>","priceFen":679900}]',
        is_error: false, destructive: false, reply_id: null,
        structured_output: SEARCH_RESULT, rejection: null, deny_reason: null, preview: null,
        labels_schema: { type: "object", properties: { keyword: { type: "string", title: "关键词" } } },
      },
    },
  ],
  pending: null,
  pending_input: null,
  running: false, failure: null
});

const root = document.getElementById("app");
if (root) {
  const app = new App({ api, root });
  void app.start().then(() => {
    const page = params.get("page");
    if (page === "settings" || page === "audit") document.querySelector<HTMLElement>(`[data-testid="${page}"]`)?.click();
    else script();
  });
}

function script(): void {
  const events: AgentEvent[] = [
    { type: "run_started" },
    { type: "text_delta", text: "找到了：\n\n| 商品 | 价格 |\n| --- | ---: |\n| **iPhone 17** 256GB 黑色" },
    { type: "text_delta", text: " | ¥6,799.00 |\n| `MKFW4CH/A` AirPods 5 | ¥999.00 |\n\n店铺满减券 SHOP-5000-300 可减 ¥300。我把 AirPods 再加一副到购物车，为 iPhone 下单，并取消你之前未支付的订单：" },
    { type: "assistant_message", message_id: 3, text: "找到了：\n\n| 商品 | 价格 |\n| --- | ---: |\n| **iPhone 17** 256GB 黑色 | ¥6,799.00 |\n| `MKFW4CH/A` AirPods 5 | ¥999.00 |\n\n店铺满减券 SHOP-5000-300 可减 ¥300。我把 AirPods 再加一副到购物车，为 iPhone 下单，并取消你之前未支付的订单：" },
    {
      type: "confirmation_requested",
      card: {
        ...card([cardCall({ call_id: "a", arguments: { skuCode: "MKFW4CH/A", action: "add", quantity: 1 }, preview: AIRPODS_CART_PREVIEW }), CREATE_ORDER_CALL, CANCEL_ORDER_CALL, cardCall({ call_id: "r", status: "allowed", title: "查看购物车", tool: "query_cart", arguments: {} })], "reply-demo"),
        expires_at: Date.now() + 30 * 60_000,
      },
    },
    { type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-demo" } },
  ];
  events.forEach((event, i) => setTimeout(() => api.emit({ session_id: "s1", run_id: "r1", event }), 200 + i * 150));
}
