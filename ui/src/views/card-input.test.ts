import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { InputAsk, InputCard } from "../protocol";
import { ChatLog } from "../state";
import { FakeApi, settle } from "../test/fake-api";
import { inputCardView, type InputCardView } from "./card-input";

let api: FakeApi;

const PAYMENT: InputAsk = {
  key: "confirm_payment",
  message: "确认支付订单 A1：应付 ¥6799.00。<img src=x onerror=alert(1)>",
  kind: {
    type: "form",
    schema: {
      type: "object",
      properties: {
        method: {
          type: "string",
          title: "支付方式",
          oneOf: [
            { const: "alipay", title: "支付宝" },
            { const: "wechat", title: "微信支付" },
          ],
        },
        note: { type: "string", title: "备注" },
        copies: { type: "integer", title: "份数", minimum: 1 },
        invoice: { type: "boolean", title: "开发票" },
      },
      required: ["method"],
    },
  },
};

const PAGE: InputAsk = {
  key: "pay_page",
  message: "请在支付页面完成付款",
  kind: { type: "url", url: "https://pay.example.com:8443/checkout?order=A1", origin: "https://pay.example.com:8443", elicitation_id: "e1" },
};

function inputCard(over: Partial<InputCard> = {}): InputCard {
  return {
    request_id: "req-1",
    session_id: "s1",
    call_id: "call-pay",
    server: "shop",
    tool: "pay_order",
    title: "支付订单",
    trusted: true,
    round: 1,
    max_rounds: 5,
    created_at: Date.UTC(2026, 0, 1, 8, 0),
    expires_at: Date.UTC(2026, 0, 1, 8, 30),
    durable: true,
    asks: [PAYMENT],
    ...over,
  };
}

function mount(card: InputCard, lang: "zh-CN" | "en" = "zh-CN"): InputCardView & { q<T extends HTMLElement = HTMLElement>(sel: string): T } {
  const view = inputCardView(card, { api, i18n: createI18n(lang) });
  document.body.replaceChildren(view.el);
  return {
    ...view,
    q: <T extends HTMLElement = HTMLElement>(sel: string): T => {
      const found = view.el.querySelector<T>(sel);
      if (!found) throw new Error(`no ${sel}`);
      return found;
    },
  };
}

beforeEach(() => {
  api = new FakeApi();
});

describe("a server's request for input as a card", () => {
  it("generates the form from the requested schema: titled options, numbers, booleans, required marks", () => {
    const view = mount(inputCard());
    const select = view.q<HTMLSelectElement>('[data-testid="field-method"]');
    expect([...select.options].map((o) => o.textContent)).toEqual(["—", "支付宝", "微信支付"]);
    expect(select.getAttribute("aria-required")).toBe("true");
    expect(view.q<HTMLInputElement>('[data-testid="field-copies"]').type).toBe("number");
    expect(view.q<HTMLInputElement>('[data-testid="field-invoice"]').type).toBe("checkbox");
    expect(view.q<HTMLInputElement>('[data-testid="field-note"]').type).toBe("text");
  });

  it("shows the server's message as text, never as markup", () => {
    const view = mount(inputCard());
    expect(view.q('[data-testid="input-message"]').textContent).toContain("<img src=x onerror=alert(1)>");
    expect(view.el.querySelector("img")).toBeNull();
  });

  it("submits the filled form as an accept with its content", async () => {
    const view = mount(inputCard());
    const select = view.q<HTMLSelectElement>('[data-testid="field-method"]');
    select.value = "wechat";
    select.dispatchEvent(new Event("change"));
    view.q('[data-testid="input-submit"]').click();
    await settle();
    expect(api.of("answer_input")).toEqual([
      ["s1", "req-1", [{ key: "confirm_payment", reply: { type: "accept", content: { method: "wechat" } } }]],
    ]);
  });

  it("refuses to send a form whose required field is empty, and says which", async () => {
    const view = mount(inputCard());
    view.q('[data-testid="input-submit"]').click();
    await settle();
    expect(api.of("answer_input")).toEqual([]);
    expect(view.q('[data-testid="input-error"]').textContent).toContain("支付方式");
  });

  it("declines and cancels every request of the card", async () => {
    mount(inputCard()).q('[data-testid="input-decline"]').click();
    await settle();
    mount(inputCard()).q('[data-testid="input-cancel"]').click();
    await settle();
    expect(api.of("answer_input").map((c) => c[2])).toEqual([
      [{ key: "confirm_payment", reply: { type: "decline" } }],
      [{ key: "confirm_payment", reply: { type: "cancel" } }],
    ]);
  });

  it("never answers on Escape", async () => {
    const view = mount(inputCard());
    const select = view.q<HTMLSelectElement>('[data-testid="field-method"]');
    select.value = "alipay";
    select.dispatchEvent(new Event("change"));
    select.focus();
    select.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    view.el.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    await settle();
    expect(api.of("answer_input")).toEqual([]);
  });

  it("sends once on a double click and shows the core's refusal", async () => {
    api.hold = true;
    const view = mount(inputCard({ asks: [PAGE] }));
    view.q('[data-testid="input-url-done"]').click();
    view.q('[data-testid="input-url-done"]').click();
    api.failNext = { code: "invalid_input", message: "the answer was not sent" };
    api.release();
    await settle();
    expect(api.of("answer_input")).toHaveLength(1);
    expect(view.q('[data-testid="input-error"]').hidden).toBe(false);
  });

  it("shows a page's origin plainly, opens it through the core, and accepts it with done", async () => {
    const view = mount(inputCard({ asks: [PAGE] }));
    expect(view.q('[data-testid="input-origin"]').textContent).toBe("将打开的网站：https://pay.example.com:8443");
    expect(view.el.querySelector('[data-testid="input-submit"]')).toBeNull();
    view.q('[data-testid="input-open-url"]').click();
    view.q('[data-testid="input-url-done"]').click();
    await settle();
    expect(api.of("open_input_url")).toEqual([["s1", "req-1", "pay_page"]]);
    expect(api.of("answer_input")[0][2]).toEqual([{ key: "pay_page", reply: { type: "accept", content: null } }]);
  });

  it("says when no browser could open the page, and shows the link to copy", async () => {
    const view = mount(inputCard({ asks: [PAGE] }));
    expect(view.q('[data-testid="input-not-opened"]').hidden).toBe(true);
    api.failNext = { code: "internal", message: "cannot open the page in the browser: no handler" };
    view.q('[data-testid="input-open-url"]').click();
    await settle();
    expect(view.q('[data-testid="input-not-opened"]').hidden).toBe(false);
    expect(view.q('[data-testid="input-not-opened"]').textContent).toBe("没能打开浏览器。请复制下面的完整链接，在浏览器中打开。");
    expect(view.el.querySelector("details")?.open).toBe(true);
    // A later attempt that works hides it again.
    view.q('[data-testid="input-open-url"]').click();
    await settle();
    expect(view.q('[data-testid="input-not-opened"]').hidden).toBe(true);
  });

  it("marks an untrusted server's request and one that will not outlive the connection", () => {
    const view = mount(inputCard({ trusted: false, durable: false }), "en");
    expect(view.q("h3").textContent).toBe("Unverified server shop asks for your input");
    expect(view.q('[data-testid="input-untrusted"]').textContent).toBe("Unverified server");
    expect(view.q('[data-testid="input-not-durable"]').textContent).toBe("This request is valid only while the app runs: closing the app ends it.");
  });

  it("says in plain words that a request held on the connection ends with the app, and only for such a request", () => {
    const live = mount(inputCard({ durable: false }));
    expect(live.q('[data-testid="input-not-durable"]').textContent).toBe("这个请求只在本次运行中有效，关闭应用后会失效。");
    const stored = mount(inputCard({ durable: true }));
    expect(stored.el.querySelector('[data-testid="input-not-durable"]')).toBeNull();
  });

  it("shows what became of it once the core closed it", () => {
    const view = mount(inputCard());
    view.close("declined");
    expect(view.q('[data-testid="input-outcome"]').textContent).toBe("已拒绝提供");
    expect(view.q('[data-testid="input-submit"]').closest("[hidden]")).not.toBeNull();
  });
});

describe("the chat log keeps the request until the core closes it", () => {
  it("adds it from the event and from a reopened transcript, and closes it from the event", () => {
    const log = new ChatLog("s1");
    log.apply({ type: "input_requested", card: inputCard() });
    expect(log.pendingInput()?.request_id).toBe("req-1");
    expect(log.regenerable()).toBeNull();
    log.apply({ type: "input_closed", request_id: "req-1", outcome: "accepted" });
    expect(log.pendingInput()).toBeNull();

    const reopened = ChatLog.fromTranscript({
      session: { id: "s1", title: "t", created_at: 0, updated_at: 0 },
      items: [],
      pending: null,
      pending_input: inputCard(),
      running: false,
      failure: null,
    });
    expect(reopened.pendingInput()?.request_id).toBe("req-1");
  });

  it("an answered request read back from the history shows what was sent, closed", async () => {
    const { ChatView } = await import("./chat");
    const chat = new ChatView({ api, i18n: createI18n("zh-CN"), ensureSession: async () => "s1" });
    document.body.replaceChildren(chat.el);
    chat.load(
      ChatLog.fromTranscript({
        session: { id: "s1", title: "t", created_at: 0, updated_at: 0 },
        items: [
          {
            type: "input",
            card: inputCard(),
            outcome: "accepted",
            replies: [{ key: "confirm_payment", reply: { type: "accept", content: { method: "wechat", copies: 2, invoice: true } } }],
          },
        ],
        pending: null,
        pending_input: null,
        running: false,
        failure: null,
      }),
    );
    const card = chat.el.querySelector<HTMLElement>('[data-testid="input-card"]')!;
    expect(card.dataset.outcome).toBe("accepted");
    expect(card.querySelector('[data-testid="input-outcome"]')?.textContent).toBe(createI18n("zh-CN").t("input.outcome.accepted"));
    const method = card.querySelector<HTMLSelectElement>('[data-testid="field-method"]')!;
    expect(method.value).toBe("wechat");
    expect(method.disabled).toBe(true);
    expect(card.querySelector<HTMLInputElement>('[data-testid="field-copies"]')!.value).toBe("2");
    expect(card.querySelector<HTMLInputElement>('[data-testid="field-invoice"]')!.checked).toBe(true);
    expect(card.querySelector<HTMLElement>('[data-testid="input-submit"]')?.closest<HTMLElement>(".card-actions")?.hidden).toBe(true);
  });
});
