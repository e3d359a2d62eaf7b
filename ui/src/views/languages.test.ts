// Every view of the window in each language holds only that language's
// words and no internal names (tool names, field keys, option codes):
// what the servers said is theirs, everything else is the app's.

import { describe, expect, it } from "vitest";

import type { Lang } from "../i18n";
import type { AuditEntry, JsonValue, Transcript } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { AIRPODS_CART_PREVIEW, CREATE_ORDER_CALL, CREATE_ORDER_SCHEMA, UPDATE_CART_SCHEMA, callView, card, cardCall } from "../test/fixtures";
import { SEARCH_RESULT } from "../test/shop-results";
import { App } from "./app";

const PAY_FORM = {
  key: "confirm_payment",
  message: "确认支付订单 88236：应付 ¥498.00。",
  kind: {
    type: "form" as const,
    schema: {
      type: "object",
      properties: {
        method: { type: "string", title: "支付方式", oneOf: [{ const: "alipay", title: "支付宝" }, { const: "wechat", title: "微信支付" }] },
      },
      required: ["method"],
    },
  },
};

const ORDER = { ...CREATE_ORDER_CALL, risk: "moves_money" as const };

function transcript(): Transcript {
  return {
    session: { id: "s1", title: "买耳机", created_at: 1, updated_at: 5 },
    items: [
      { type: "user", id: 1, text: "帮我买一副 AirPods", at: 1 },
      { type: "assistant", id: 2, text: "找到了。", at: 2 },
      { type: "tool_call", call: callView({ call_id: "s", status: "succeeded", arguments: { keyword: "AirPods", limit: 10 }, structured_output: SEARCH_RESULT, output: "找到 2 个型号" }) },
      { type: "tool_call", call: { ...callView({ call_id: "done", status: "succeeded", reply_id: "reply-0" }), qualified_name: "shop__update_cart_item", tool: "update_cart_item", title: "加入/修改购物车", arguments: { skuCode: "MKFW4CH/A", action: "add", quantity: 1 }, preview: AIRPODS_CART_PREVIEW, labels_schema: UPDATE_CART_SCHEMA } },
      {
        type: "input",
        card: { request_id: "r1", session_id: "s1", call_id: "pay", server: "shop", tool: "pay_order", title: "支付订单", trusted: true, round: 1, max_rounds: 5, created_at: 1, expires_at: 2, durable: true, asks: [PAY_FORM] },
        outcome: "accepted",
        replies: [{ key: "confirm_payment", reply: { type: "accept", content: { method: "wechat" } } }],
      },
    ],
    pending: card([cardCall({ call_id: "add", preview: AIRPODS_CART_PREVIEW }), { ...ORDER, call_id: "order" }]),
    pending_input: null,
    running: false,
    failure: { code: "model", message: "model request failed: 401 Unauthorized" },
  };
}

const AUDIT: AuditEntry[] = [
  {
    id: 1, at: Date.UTC(2026, 11, 2, 8, 0), session_id: "s1", call_id: "order", server: "shop", tool: "create_order",
    arguments_hash: "ab".repeat(32), decision: "user_approved", reason: null, old_definition_hash: null, new_definition_hash: null,
    preview: CREATE_ORDER_CALL.preview, call: { ...callView({ call_id: "order", status: "succeeded" }), tool: "create_order", qualified_name: "shop__create_order", title: "提交订单", arguments: { items: [{ skuCode: "MG6W4CH/A", quantity: 1 }], couponCode: "SHOP-5000-300" }, labels_schema: CREATE_ORDER_SCHEMA },
  },
];

/** Every string a fixture holds: the servers' and the user's words, which keep their own language. */
function fixtureStrings(): Set<string> {
  const out = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === "string") out.add(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk([transcript(), AUDIT, SEARCH_RESULT as JsonValue]);
  return out;
}

/**
 * The words a person sees or hears: text, and the attributes read aloud or
 * shown. Left out: what is typed as it is (code, and a field's example
 * value in its placeholder), and what fields hold (values the user set).
 */
function seen(root: Element): string[] {
  const out: string[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement?.closest("script, style, [hidden], code, textarea")) continue;
    const text = node.textContent?.trim();
    if (text) out.push(text);
  }
  for (const el of root.querySelectorAll("[aria-label], [title]")) {
    for (const attr of ["aria-label", "title"]) {
      const value = el.getAttribute(attr)?.trim();
      if (value) out.push(value);
    }
  }
  return out;
}

async function everyView(lang: Lang): Promise<string[]> {
  const api = new FakeApi();
  api.settings.appearance.language = lang;
  api.sessions = [{ id: "s1", title: "买耳机", created_at: 1, updated_at: 5 }];
  api.transcripts.set("s1", transcript());
  api.audit = AUDIT;
  const root = document.createElement("div");
  document.body.replaceChildren(root);
  const app = new App({ api, root, systemLanguage: lang });
  await app.start();
  await settle();
  const texts = seen(root);
  for (const nav of ["settings", "audit"]) {
    root.querySelector<HTMLElement>(`[data-testid="${nav === "audit" ? "nav-audit" : "settings"}"]`)?.click();
    await settle();
    for (const tab of root.querySelectorAll<HTMLElement>('[role="tab"]')) {
      tab.click();
      await settle();
      texts.push(...seen(root));
    }
    texts.push(...seen(root));
  }
  app.stop();
  return texts;
}

const SERVER_NAMES = ["shop"];

/** A name from code (a key, an option's value, a tool): never the servers' words to show. */
const IDENTIFIER = /^[a-z][A-Za-z0-9_]*$/;

/** What is left of a text once the fixtures' own words are taken out. */
function appWords(texts: string[]): string[] {
  // A server's name is the one it has in the settings, as the user knows it.
  const fixtures = [...[...fixtureStrings()].filter((s) => s.length > 1 && !IDENTIFIER.test(s)), ...SERVER_NAMES]
    .sort((a, b) => b.length - a.length);
  return texts
    .map((text) => fixtures.reduce((rest, s) => rest.split(s).join(" "), text))
    .map((text) => text.trim())
    .filter((text) => text !== "");
}

const CJK = /[\u3400-\u9fff，。：；（）、]/;
/** Names from code: snake_case, server__tool. */
const INTERNAL = /\b[a-z]+(?:_[a-z]+)+\b|__/;

/**
 * Names that stay as they are in a Chinese window: keys on the keyboard,
 * formats and protocols, other apps and model providers.
 */
const NAMES = new Set([
  "Ctrl", "Enter", "Backspace", "Shift", "Tab", "Esc",
  "JSON", "MCP", "UCP", "URL", "HTTP", "HTTPS", "API", "Markdown", "Header",
  "OpenAI", "Chat", "Completions", "DeepSeek", "DashScope", "Ollama", "Base",
  "Claude", "Desktop", "Cursor", "Cline", "Cherry", "Studio", "Code",
  "English",
]);
/** A value to type in (an address, a config), shown as an example. */
const EXAMPLE = /:\/\/|[{}$]/;

/** The language names a language menu shows, each in its own language. */
const LANGUAGE_NAMES = new Set(["中文", "English"]);

describe("every view speaks the window's language", () => {
  it("the English window holds no Chinese of its own and no internal names", async () => {
    const words = appWords(await everyView("en")).filter((w) => !LANGUAGE_NAMES.has(w));
    expect(words.filter((w) => CJK.test(w))).toEqual([]);
    expect(words.filter((w) => INTERNAL.test(w))).toEqual([]);
  });

  it("the Chinese window holds no English of its own and no internal names", async () => {
    const words = appWords(await everyView("zh-CN"));
    expect(words.filter((w) => INTERNAL.test(w))).toEqual([]);
    const english = words.filter((w) => !EXAMPLE.test(w)).flatMap((w) => w.match(/[A-Za-z]{3,}/g) ?? []);
    expect([...new Set(english)].filter((word) => !NAMES.has(word))).toEqual([]);
  });
});
