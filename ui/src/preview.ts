// A development preview of the page without the Tauri shell: the app on the
// test fake backend with a scripted conversation (a streamed answer, chips,
// a card with a destructive call). Open /preview.html under `npm run dev`;
// `?theme=dark|light` forces a theme, `?page=settings|audit|first-run` opens
// that page, `?lang=en` switches to English. Not part of the built app.

import { FakeApi } from "./test/fake-api";
import { CANCEL_ORDER_CALL, CREATE_ORDER_CALL, card, cardCall } from "./test/fixtures";
import type { AgentEvent } from "./protocol";
import { App } from "./views/app";

const params = new URLSearchParams(window.location.search);
const theme = params.get("theme");
if (theme === "dark" || theme === "light") window.localStorage.setItem("bitselect.theme", theme);
const lang = params.get("lang");
if (lang === "en" || lang === "zh-CN") window.localStorage.setItem("bitselect.lang", lang);

const api = new FakeApi();
api.sessions = [
  { id: "s1", title: "买一副降噪耳机", created_at: 1, updated_at: 3 },
  { id: "s2", title: "查订单物流", created_at: 1, updated_at: 2 },
];
api.tools = [
  { qualified_name: "shop__search_product", server: "shop", tool: "search_product", title: "搜索商品", destructive: false, read_only: true, trusted: true, definition_changed: false, user_override: null, verdict: "allow", auto_approve_allowed: false, moves_money: false },
  { qualified_name: "shop__update_cart_item", server: "shop", tool: "update_cart_item", title: "加入/修改购物车", destructive: false, read_only: false, trusted: true, definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: true, moves_money: false },
  { qualified_name: "shop__cancel_order", server: "shop", tool: "cancel_order", title: "取消订单", destructive: true, read_only: false, trusted: true, definition_changed: false, user_override: null, verdict: "ask", auto_approve_allowed: false, moves_money: true },
];
api.audit = [
  { id: 1, at: Date.now() - 60_000, session_id: "s1", call_id: "c0", server: "shop", tool: "search_product", arguments_hash: "9f2c1e7b44d0a1b2c3d4", decision: "policy_allowed", reason: null, old_definition_hash: null, new_definition_hash: null, preview: null },
  { id: 2, at: Date.now() - 30_000, session_id: "s1", call_id: "c1", server: "shop", tool: "cancel_order", arguments_hash: "1a2b3c4d5e6f7a8b9c0d", decision: "user_denied", reason: "先不取消", old_definition_hash: null, new_definition_hash: null, preview: null },
];
if (params.get("page") === "first-run") api.check = { state: "not_configured", message: null };
api.transcripts.set("s1", {
  session: api.sessions[0],
  items: [
    { type: "user", id: 1, text: "帮我找一副 1000 元以内的降噪耳机 <img src=x onerror=alert(1)>", at: 1 },
    {
      type: "tool_call",
      call: {
        call_id: "c0", qualified_name: "shop__search_product", server: "shop", tool: "search_product", title: "搜索商品",
        arguments: { keyword: "降噪耳机", priceMax: 1000 }, status: "succeeded", output: '[{"skuCode":"MX2D3CH/A","name":"<script>alert(1)</script>"}]',
        is_error: false, destructive: false, reply_id: null,
      },
    },
  ],
  pending: null,
  running: false,
});

const root = document.getElementById("app");
if (root) {
  const app = new App({ api, root, storage: window.localStorage });
  void app.start().then(() => {
    const page = params.get("page");
    if (page === "settings" || page === "audit") document.querySelector<HTMLElement>(`[data-testid="${page}"]`)?.click();
    else script();
  });
}

function script(): void {
  const events: AgentEvent[] = [
    { type: "run_started" },
    { type: "text_delta", text: "为你找到两款：\n\n| 型号 | 价格 |\n| --- | --- |\n| **AirPods Pro** | ¥1,899 |\n| `MX2D3CH/A` | ¥899 |\n\n" },
    { type: "text_delta", text: "我先把第二款加入购物车并下单，同时取消你之前的订单：" },
    { type: "assistant_message", message_id: 3, text: "为你找到两款：\n\n| 型号 | 价格 |\n| --- | --- |\n| **AirPods Pro** | ¥1,899 |\n| `MX2D3CH/A` | ¥899 |\n\n我先把第二款加入购物车并下单，同时取消你之前的订单：" },
    {
      type: "confirmation_requested",
      card: {
        ...card([cardCall({ call_id: "a", arguments: { skuCode: "MX2D3CH/A", action: "add", quantity: 1 } }), CREATE_ORDER_CALL, CANCEL_ORDER_CALL, cardCall({ call_id: "r", status: "allowed", title: "查看购物车", tool: "query_cart", arguments: {} })], "reply-demo"),
        expires_at: Date.now() + 30 * 60_000,
      },
    },
    { type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-demo" } },
  ];
  events.forEach((event, i) => setTimeout(() => api.emit({ session_id: "s1", run_id: "r1", event }), 200 + i * 150));
}
