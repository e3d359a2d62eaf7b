import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { AgentEvent, ToolCallView, Transcript } from "../protocol";
import { ChatLog, viewOf } from "../state";
import { answerAsTheCore, declined } from "../test/core";
import { FakeApi, settle } from "../test/fake-api";
import { AIRPODS_CART_PREVIEW, CREATE_ORDER_CALL, CREATE_ORDER_SCHEMA, UPDATE_CART_SCHEMA, callView, card, cardCall } from "../test/fixtures";
import { ChatView } from "./chat";

const i18n = createI18n("zh-CN");
const NOT_IN_CART = "购物车中没有 MG6W4CH/A，请先调用 update_cart_item（action=add）加入购物车";
let api: FakeApi;
let chat: ChatView;

/** An event from the core, as the page receives it. */
function emit(event: AgentEvent): void {
  api.emit({ session_id: "s1", run_id: "r1", event });
}

const all = (testid: string) => [...chat.el.querySelectorAll<HTMLElement>(`[data-testid="${testid}"]`)];
const call = (id: string) => chat.el.querySelector<HTMLElement>(`[data-testid="card-call"][data-call-id="${id}"]`)!;
const text = (el: Element, testid: string) => el.querySelector(`[data-testid="${testid}"]`)?.textContent ?? null;
const shown = (el: Element, testid: string) => {
  const found = el.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
  return found !== null && !found.hidden;
};

/** An update_cart_item call as the core reports it. */
const viewOfCall = (overrides: Partial<ToolCallView> & Pick<ToolCallView, "call_id" | "status">): ToolCallView =>
  callView({
    qualified_name: "shop__update_cart_item",
    tool: "update_cart_item",
    title: "加入/修改购物车",
    arguments: { skuCode: "MKFW4CH/A", action: "add", quantity: 1 },
    labels_schema: UPDATE_CART_SCHEMA,
    ...overrides,
  });

const failedOrder = (): ToolCallView =>
  viewOfCall({
    call_id: "call-order",
    qualified_name: "shop__create_order",
    tool: "create_order",
    title: "提交订单",
    arguments: CREATE_ORDER_CALL.arguments,
    labels_schema: CREATE_ORDER_SCHEMA,
    status: "failed",
    is_error: true,
    output: NOT_IN_CART,
    structured_output: { error: { code: "NOT_IN_CART", message: NOT_IN_CART } },
    preview: CREATE_ORDER_CALL.preview,
  });

beforeEach(() => {
  localStorage.clear();
  api = new FakeApi();
  api.sessions = [{ id: "s1", title: "", created_at: 1, updated_at: 1 }];
  chat = new ChatView({ api, i18n, ensureSession: async () => "s1" });
  document.body.replaceChildren(chat.el);
  chat.load(new ChatLog("s1"));
  void api.onAgentEvent((envelope) => chat.handle(envelope));
  answerAsTheCore(api);
});

describe("a call approved and then failed", () => {
  it("turns its card red with the shop's reason visible without a click, and no chip says otherwise", async () => {
    emit({ type: "confirmation_requested", card: card([CREATE_ORDER_CALL]) });
    all("approve")[0].click();
    await settle();
    emit({ type: "tool_call_started", call: { ...failedOrder(), status: "running", output: null, structured_output: null } });
    expect(call("call-order").dataset.status).toBe("running");
    emit({ type: "tool_call_finished", call: failedOrder() });

    const line = call("call-order");
    expect(line.dataset.status).toBe("failed");
    expect(line.dataset.tone).toBe("bad");
    expect(text(line, "call-status")).toBe("失败");
    expect(text(line, "call-reason")).toBe(NOT_IN_CART);
    expect(shown(line, "call-reason")).toBe(true);
    // The reason sits in the summary line, not in a closed disclosure.
    expect(line.querySelector("summary")?.textContent).toContain(NOT_IN_CART);
    expect(all("tool-chip")).toHaveLength(0);
  });

  it("a succeeded call reads done on its card line", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" })]) });
    all("approve")[0].click();
    await settle();
    emit({ type: "tool_call_finished", call: viewOfCall({ call_id: "a", status: "succeeded", output: "ok" }) });
    expect(call("a").dataset.tone).toBe("ok");
    expect(call("a").querySelector("summary")?.textContent).toMatch(/^✓ 已完成 · /);
  });

  it("a finished order shows the address it was sent to, from its result, not the preview's", async () => {
    emit({ type: "confirmation_requested", card: card([CREATE_ORDER_CALL]) });
    all("approve")[0].click();
    await settle();
    const beijing = { name: "李雷", phone: "13700137000", address: "北京市海淀区中关村大街 1 号" };
    const placed = {
      ...failedOrder(),
      status: "succeeded" as const,
      is_error: false,
      output: "订单 88240 已提交",
      structured_output: { orderNo: "88240", receiver: beijing },
    };
    emit({ type: "tool_call_finished", call: placed });
    const address = call("call-order").querySelector('[data-testid="preview-address"]');
    expect(address?.querySelector('[data-testid="address-used"]')?.textContent).toBe("李雷 13700137000北京市海淀区中关村大街 1 号");
    expect(address?.textContent).not.toContain("科苑路");
  });

  it("an interrupted call reads outcome unknown", () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a", status: "approved" })]) });
    emit({ type: "tool_call_finished", call: viewOfCall({ call_id: "a", status: "interrupted" }) });
    expect(text(call("a"), "call-status")).toBe("结果未知");
    expect(call("a").dataset.tone).toBe("unknown");
  });
});

describe("an approval in a batch with calls still to decide", () => {
  it("says it runs together once the remaining calls are decided", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]) });
    call("a").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
    await settle();
    expect(text(call("a"), "call-status")).toBe("已批准，将在你决定剩下 1 项后一起执行");
    expect(call("call-order").dataset.status).toBe("asking");
  });

  it("says so in English too", async () => {
    chat = new ChatView({ api, i18n: createI18n("en"), ensureSession: async () => "s1" });
    chat.load(new ChatLog("s1"));
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]) });
    call("a").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
    await settle();
    expect(text(call("a"), "call-status")).toBe("Approved — runs together once you decide the remaining 1");
  });
});

describe("a denied or refused call", () => {
  it("a denied call shows the user's reason on its card line", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" })]) });
    const reason = chat.el.querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!;
    reason.value = "太贵了";
    all("deny")[0].click();
    await settle();
    expect(call("a").dataset.status).toBe("denied");
    expect(call("a").querySelector("summary")?.textContent).toContain("✗ 已拒绝 · ");
    expect(text(call("a"), "call-reason")).toBe("理由：太贵了");
  });

  it("a denial the core reported while its answer is on the way shows its reason, and the answer changes nothing", async () => {
    const asked = card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]);
    emit({ type: "confirmation_requested", card: asked });
    call("a").querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!.value = "先不买了";
    api.hold = true;
    api.onDecisions = null;
    call("a").querySelector<HTMLButtonElement>('[data-testid="deny"]')!.click();
    await settle();
    emit({ type: "tool_call_finished", call: { ...viewOf(asked.calls[0], "reply-1"), status: "denied", deny_reason: "先不买了" } });
    expect(text(call("a"), "call-reason")).toBe("理由：先不买了");
    api.release();
    await settle();
    expect(call("a").dataset.status).toBe("denied");
    expect(text(call("a"), "call-reason")).toBe("理由：先不买了");
    expect(call("call-order").dataset.status).toBe("asking");
  });

  it("a call on a card refused for bad arguments says so in Chinese, not in the validator's words alone", () => {
    emit({
      type: "tool_call_finished",
      call: viewOfCall({
        call_id: "bad",
        status: "rejected",
        is_error: true,
        output: "invalid arguments: \"two\" is not of type \"integer\"",
        rejection: { type: "invalid_arguments", details: ["/quantity: \"two\" is not of type \"integer\""] },
      }),
    });
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "bad", status: "rejected" }), cardCall({ call_id: "a" })]) });
    expect(all("tool-chip")).toHaveLength(0);
    expect(text(call("bad"), "call-status")).toBe("已被规则拒绝");
    expect(text(call("bad"), "call-reason")).toBe("参数有误，未执行：/quantity: \"two\" is not of type \"integer\"");
    expect(shown(call("bad"), "call-reason")).toBe(true);
  });

  it("a call without a card refused as an unknown tool or by the settings says why on its chip", () => {
    emit({ type: "tool_call_finished", call: viewOfCall({ call_id: "u", status: "rejected", rejection: { type: "unknown_tool" } }) });
    emit({ type: "tool_call_finished", call: viewOfCall({ call_id: "p", status: "rejected", rejection: { type: "policy_denied" } }) });
    expect(all("tool-chip").map((chip) => text(chip, "call-reason"))).toEqual(["没有这个工具，未执行", "设置中已禁止此工具，未执行"]);
  });
});

describe("a deny reason being typed", () => {
  const pending: Transcript = {
    session: { id: "s1", title: "", created_at: 1, updated_at: 2 },
    items: [],
    pending: card([cardCall({ call_id: "a" })]),
    pending_input: null,
    running: false, failure: null
  };

  it("survives closing and reopening the app, and is dropped once the call is decided", async () => {
    answerAsTheCore(api, pending.pending!);
    chat.load(ChatLog.fromTranscript(pending));
    const typed = chat.el.querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!;
    typed.value = "先问问家人";
    typed.dispatchEvent(new Event("input", { bubbles: true }));

    // A new window on the same storage.
    chat = new ChatView({ api, i18n, ensureSession: async () => "s1" });
    chat.load(ChatLog.fromTranscript(structuredClone(pending)));
    const reopened = chat.el.querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!;
    expect(reopened.value).toBe("先问问家人");

    all("deny")[0].click();
    await settle();
    expect(api.of("respond_confirmation")[0][2]).toEqual([{ call_id: "a", decision: { type: "deny", reason: "先问问家人" } }]);
    chat.load(ChatLog.fromTranscript(structuredClone(pending)));
    expect(chat.el.querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!.value).toBe("");
  });
});

describe("a calm history", () => {
  const approvedCart = (): ToolCallView =>
    viewOfCall({ call_id: "a", status: "succeeded", output: "已加入", reply_id: "reply-1", preview: AIRPODS_CART_PREVIEW });
  const deniedOrder = (): ToolCallView => ({ ...failedOrder(), status: "denied", output: declined("太贵了"), structured_output: null, is_error: false, deny_reason: "太贵了", reply_id: "reply-1" });

  it("a decided card collapses to one line per call, expandable to its preview and arguments", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a", preview: AIRPODS_CART_PREVIEW })]) });
    all("approve")[0].click();
    await settle();
    const line = call("a");
    expect(line.querySelector("summary")?.textContent).toBe("✓ 已批准 · 加入购物车：AirPods 5 ×1，购物车中 1 → 2 件");
    const details = line.querySelector("details")!;
    expect(details.open).toBe(false);
    expect(details.querySelector('[data-testid="preview"]')).not.toBeNull();
    expect(details.querySelector(".args")?.textContent).toContain("MG6W4CH/A");
    expect(all("approve")).toHaveLength(0);
  });

  it("each call appears once: a call that was on a card has no chip, one without keeps its chip", async () => {
    emit({ type: "tool_call_finished", call: viewOfCall({ call_id: "read", status: "succeeded", title: "查看购物车" }) });
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" })]) });
    all("approve")[0].click();
    await settle();
    emit({ type: "tool_call_finished", call: viewOfCall({ call_id: "a", status: "succeeded" }) });
    expect(all("tool-chip").map((chip) => chip.dataset.callId)).toEqual(["read"]);
    expect(all("card-call").map((c) => c.dataset.callId)).toEqual(["a"]);
  });

  it("a reopened chat rebuilds decided cards from the calls' reply_id and draws them as the live chat did", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a", preview: AIRPODS_CART_PREVIEW }), CREATE_ORDER_CALL]) });
    const reason = call("call-order").querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!;
    reason.value = "太贵了";
    call("a").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
    await settle();
    call("call-order").querySelector<HTMLButtonElement>('[data-testid="deny"]')!.click();
    await settle();
    // The core's events for the run; an event's view names no card once the call ran.
    emit({ type: "tool_call_finished", call: { ...approvedCart(), reply_id: null } });
    const live = all("confirmation-card").map((el) => el.outerHTML);

    const transcript: Transcript = {
      session: { id: "s1", title: "", created_at: 1, updated_at: 2 },
      items: [
        { type: "tool_call", call: approvedCart() },
        { type: "tool_call", call: deniedOrder() },
      ],
      pending: null,
      pending_input: null,
      running: false, failure: null
    };
    chat.load(ChatLog.fromTranscript(transcript));
    expect(all("confirmation-card").map((el) => el.outerHTML)).toEqual(live);
    expect(all("tool-chip")).toHaveLength(0);
    expect(all("card-call").map((c) => c.querySelector("summary")?.textContent)).toEqual([
      "✓ 已完成 · 加入购物车：AirPods 5 ×1，购物车中 1 → 2 件",
      "✗ 已拒绝 · 提交订单：1 件商品，应付 ¥6,499.00 · 理由：太贵了",
    ]);
  });
});

describe("deciding the last call by keyboard", () => {
  it("goes back to the composer after the last call is decided, and stays on the card while one still asks", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]) });
    await settle();
    const first = call("a").querySelector<HTMLButtonElement>('[data-testid="approve"]')!;
    first.focus();
    first.click();
    await settle();
    const composer = chat.el.querySelector('[data-testid="composer-input"]');
    expect(document.activeElement).not.toBe(composer);
    expect(call("call-order").contains(document.activeElement)).toBe(true);

    call("call-order").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
    await settle();
    expect(document.activeElement).toBe(composer);
  });
});
