import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { AgentEvent, CardCall, Transcript } from "../protocol";
import { renderMarkdown } from "../markdown";
import { ChatLog } from "../state";
import { answerAsTheCore } from "../test/core";
import { FakeApi, settle } from "../test/fake-api";
import { CANCEL_ORDER_CALL, CREATE_ORDER_CALL, IPHONE_ORDER_PREVIEW, XSS_IMG, XSS_SCRIPT, callView, card, cardCall } from "../test/fixtures";
import { randomSplit, seeded } from "../test/markdown-samples";
import { ChatView } from "./chat";
import { addCodeCopyButtons } from "./copy-button";

const i18n = createI18n("zh-CN");
let api: FakeApi;
let chat: ChatView;

/** An event from the core, as the page receives it. */
function emit(event: AgentEvent, session_id = "s1"): void {
  api.emit({ session_id, run_id: "r1", event });
}

const all = (testid: string) => [...chat.el.querySelectorAll<HTMLElement>(`[data-testid="${testid}"]`)];
const one = <T extends HTMLElement = HTMLElement>(testid: string): T => {
  const found = chat.el.querySelector<T>(`[data-testid="${testid}"]`);
  if (!found) throw new Error(`no ${testid}`);
  return found;
};

const chipCall = callView;

beforeEach(() => {
  api = new FakeApi();
  api.sessions = [{ id: "s1", title: "", created_at: 1, updated_at: 1 }];
  chat = new ChatView({ api, i18n, ensureSession: async () => "s1" });
  document.body.replaceChildren(chat.el);
  chat.load(new ChatLog("s1"));
  void api.onAgentEvent((envelope) => chat.handle(envelope));
  answerAsTheCore(api);
});

describe("streaming assistant text", () => {
  it("accumulates deltas into one assistant message and finalises it", () => {
    emit({ type: "run_started" });
    emit({ type: "text_delta", text: "为你找到" });
    emit({ type: "text_delta", text: " **两款**" });
    emit({ type: "text_delta", text: "耳机。" });
    expect(all("message-assistant")).toHaveLength(1);
    const message = one("message-assistant");
    expect(message.textContent).toBe("为你找到 两款耳机。");
    expect(message.querySelector("strong")?.textContent).toBe("两款");
    expect(message.dataset.streaming).toBe("true");
    emit({ type: "assistant_message", message_id: 7, text: "为你找到 **两款** 耳机。" });
    expect(all("message-assistant")).toHaveLength(1);
    expect(message.dataset.streaming).toBe("false");
    expect(message.textContent).toBe("为你找到 两款 耳机。");
  });

  it("keeps finished blocks as they are while deltas arrive and ends as a full render of the final text", () => {
    const text = "## 两款耳机\n\n| 型号 | 价格 |\n| --- | ---: |\n| A1 | ¥1,299 |\n\n```sh\necho 下单\n```\n\n- 黑色\n\n  支持降噪\n- 白色\n\n需要我加入购物车吗？";
    const deltas = randomSplit(seeded(11), text, 6);
    emit({ type: "run_started" });
    for (const delta of deltas.slice(0, deltas.length / 2)) emit({ type: "text_delta", text: delta });
    const body = one("message-assistant").querySelector(".markdown");
    const heading = body?.firstChild;
    expect(heading?.nodeName).toBe("H4");
    for (const delta of deltas.slice(deltas.length / 2)) emit({ type: "text_delta", text: delta });
    emit({ type: "assistant_message", message_id: 3, text });
    const full = document.createElement("div");
    full.appendChild(renderMarkdown(text));
    addCodeCopyButtons(full, i18n);
    expect(body?.innerHTML).toBe(full.innerHTML);
    expect(body?.firstChild).toBe(heading);
  });

  it("shows the complete message as sent when it differs from the streamed text", () => {
    emit({ type: "text_delta", text: "先查一下\n\n- 甲" });
    emit({ type: "assistant_message", message_id: 4, text: "查到了 **两款**" });
    const message = one("message-assistant");
    expect(message.textContent).toBe("查到了 两款");
    expect(message.querySelector("ul")).toBeNull();
  });

  it("starts a new message for the next model turn", () => {
    emit({ type: "text_delta", text: "先查一下" });
    emit({ type: "assistant_message", message_id: 1, text: "先查一下" });
    emit({ type: "tool_call_started", call: chipCall({ call_id: "t1", status: "running" }) });
    emit({ type: "text_delta", text: "查到了" });
    expect(all("message-assistant").map((m) => m.textContent)).toEqual(["先查一下", "查到了"]);
  });

  it("renders model markup as text", () => {
    emit({ type: "text_delta", text: `${XSS_IMG} ${XSS_SCRIPT}` });
    expect(chat.el.querySelector("img")).toBeNull();
    expect(chat.el.querySelector("script")).toBeNull();
    expect(one("message-assistant").textContent).toBe(`${XSS_IMG} ${XSS_SCRIPT}`);
  });

  it("ignores events of other sessions", () => {
    emit({ type: "text_delta", text: "别的会话" }, "s2");
    expect(all("message-assistant")).toHaveLength(0);
  });
});

describe("tool activity chips", () => {
  it("follow a call from running to done, with arguments and output as text", () => {
    emit({ type: "tool_call_started", call: chipCall({ call_id: "t1", status: "running" }) });
    const chip = one("tool-chip");
    expect(chip.dataset.callId).toBe("t1");
    expect(chip.dataset.status).toBe("running");
    expect(chip.textContent).toContain("运行中");
    emit({
      type: "tool_call_finished",
      call: chipCall({ call_id: "t1", status: "succeeded", output: `[{"name": "${XSS_IMG}"}]` }),
    });
    expect(all("tool-chip")).toHaveLength(1);
    expect(chip.dataset.status).toBe("succeeded");
    expect(chip.textContent).toContain("完成");
    expect(chip.textContent).toContain(XSS_IMG);
    expect(chip.querySelector("img")).toBeNull();
  });

  it("are not shown for a card's calls: the card alone shows them, asking and then declined", () => {
    emit({ type: "confirmation_requested", card: card([CANCEL_ORDER_CALL]) });
    expect(all("tool-chip")).toHaveLength(0);
    expect(one("card-call").dataset.status).toBe("asking");
    emit({ type: "call_status_changed", call_id: "call-cancel", status: "denied" });
    expect(all("tool-chip")).toHaveLength(0);
    expect(one("card-call").dataset.status).toBe("denied");
  });
});

describe("cards in the chat", () => {
  it("a card's status follows the events after the user approved", async () => {
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" })]) });
    emit({ type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } });
    one("approve").click();
    await settle();
    expect(one("card-call").dataset.status).toBe("approved");
    emit({ type: "run_started" });
    emit({ type: "tool_call_started", call: chipCall({ call_id: "a", status: "running" }) });
    emit({ type: "tool_call_finished", call: chipCall({ call_id: "a", status: "succeeded", output: "ok" }) });
    expect(one("card-call").dataset.status).toBe("succeeded");
    expect(one("card-call").querySelector('[data-testid="call-status"]')?.textContent).toBe("已完成");
    expect(all("tool-chip")).toHaveLength(0);
  });

  it("a changed preview replaces the card in place, keeps accepted decisions and asks again", async () => {
    const first = card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]);
    emit({ type: "confirmation_requested", card: first });
    emit({ type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } });
    const call = (id: string) => chat.el.querySelector<HTMLElement>(`[data-testid="card-call"][data-call-id="${id}"]`)!;
    call("a").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
    await settle();
    expect(call("a").dataset.status).toBe("approved");

    // Approving the order: the core finds the price changed, sends the card
    // again (same reply_id, its own stale view of "a"), then refuses.
    api.hold = true;
    call("call-order").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
    await settle();
    const content = structuredClone(IPHONE_ORDER_PREVIEW.outcome.type === "computed" ? IPHONE_ORDER_PREVIEW.outcome.content : null) as {
      summary: string;
      lines: Array<{ unitPriceFen: number }>;
    };
    content.summary = "提交订单：1 件商品，应付 ¥6,699.00";
    content.lines[0].unitPriceFen = 699900;
    const revised: CardCall = { ...CREATE_ORDER_CALL, preview: { ...IPHONE_ORDER_PREVIEW, outcome: { type: "computed", content } } };
    emit({ type: "confirmation_requested", card: { ...first, calls: [first.calls[0], revised] } });
    api.failNext = { code: "preview_changed", message: "what call call-order would do changed since its card was shown" };
    api.release();
    await settle();

    expect(all("confirmation-card")).toHaveLength(1);
    expect(call("a").dataset.status).toBe("approved");
    expect(all("tool-chip")).toHaveLength(0);
    expect(call("call-order").dataset.status).toBe("asking");
    expect(call("call-order").querySelector('[data-testid="preview-summary"]')?.textContent).toBe("提交订单：1 件商品，应付 ¥6,699.00");
    expect(call("call-order").querySelector(".preview-lines td:nth-child(2)")?.textContent).toBe("¥6,999.00");
    const error = one("card-error");
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("价格、库存或金额已变化，请查看新的预览后重新决定。");
    expect(error.dataset.code).toBe("preview_changed");
    expect(call("call-order").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.disabled).toBe(false);
    expect(call("a").querySelector('[data-testid="approve"]')?.closest<HTMLElement>(".card-actions")?.hidden).toBe(true);
  });

  for (const order of ["before", "after"] as const) {
    it(`an order the core asks again after the add above it ran stays asking, the run's events ${order} the reply's answer`, async () => {
      const add = cardCall({ call_id: "add" });
      const orderCall = { ...CREATE_ORDER_CALL, risk: "moves_money" as const };
      const first = card([add, orderCall]);
      emit({ type: "confirmation_requested", card: first });
      emit({ type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } });
      const call = (id: string) => chat.el.querySelector<HTMLElement>(`[data-testid="card-call"][data-call-id="${id}"]`)!;
      call("add").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
      await settle();

      // Approving the order runs the card: the core records the approval
      // and answers; its run sends the add, then asks again for the order.
      const approved: AgentEvent = { type: "call_status_changed", call_id: "call-order", status: "approved" };
      const askedAgain: AgentEvent[] = [
        { type: "run_started" },
        { type: "tool_call_finished", call: callView({ call_id: "add", status: "succeeded", reply_id: "reply-1" }) },
        { type: "call_status_changed", call_id: "call-order", status: "asking" },
        { type: "confirmation_requested", card: { ...first, calls: [{ ...add, status: "succeeded" }, orderCall] } },
        { type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } },
      ];
      api.onDecisions = () => (order === "before" ? [approved, ...askedAgain] : [approved]);
      call("call-order").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.click();
      await settle();
      if (order === "after") {
        expect(call("call-order").dataset.status).toBe("approved");
        for (const event of askedAgain) emit(event);
      }

      expect(call("add").dataset.status).toBe("succeeded");
      expect(call("call-order").dataset.status).toBe("asking");
      expect(call("call-order").querySelector('[data-testid="preview-sequence"]')?.textContent).toBe(i18n.t("preview.askedAgain"));
      expect(call("call-order").querySelector<HTMLButtonElement>('[data-testid="approve"]')!.closest<HTMLElement>(".card-actions")?.hidden).toBe(false);
    });
  }

  it("edited arguments proposed again replace the card's arguments and close the editor", async () => {
    const first = card([cardCall({ call_id: "a" })]);
    emit({ type: "confirmation_requested", card: first });
    one("edit-arguments").click();
    const edited = { skuCode: "MG6W4CH/A", action: "add", quantity: 3 };
    emit({
      type: "confirmation_requested",
      card: { ...first, calls: [{ ...first.calls[0], arguments: edited, arguments_text: JSON.stringify(edited) }] },
    });
    expect(chat.el.querySelector('[data-testid="arguments-editor"]')).toBeNull();
    expect([...chat.el.querySelectorAll(".card-args dd")].map((dd) => dd.textContent)).toEqual(["MG6W4CH/A", "加入购物车", "3"]);
  });

  it("shows a run's error in Chinese, with the core's words as detail", () => {
    emit({ type: "error", error: { code: "model", message: "model request failed: 401 Unauthorized" } });
    const notice = one("notice");
    expect(notice.textContent).toBe("模型服务出错了，请检查模型设置或稍后再试。");
    expect(notice.title).toContain("401 Unauthorized");
  });

  it("says in Chinese that a failing server's tools are left out and when it is tried again", () => {
    emit({ type: "server_paused", server: "notes", failures: 3, retry_in_secs: 40, problem: "the server had stopped" });
    const notice = one("notice");
    expect(notice.textContent).toBe("服务 notes 已连续失败 3 次，暂时不用它的工具，40 秒后再试。");
    expect(notice.getAttribute("role")).toBe("status");
    expect(notice.title).toBe("the server had stopped");
  });

  it("a reopened transcript with a pending card shows the card, ready to decide", async () => {
    const pending = card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL], "reply-9");
    const transcript: Transcript = {
      session: { id: "s1", title: "买耳机", created_at: 1, updated_at: 2 },
      items: [
        { type: "user", id: 1, text: "把耳机加入购物车", at: 1 },
        { type: "assistant", id: 2, text: "好的，请确认。", at: 2 },
      ],
      pending,
      pending_input: null,
      running: false, failure: null
    };
    chat.load(ChatLog.fromTranscript(transcript));
    expect(all("message-user").map((m) => m.textContent)).toEqual(["把耳机加入购物车"]);
    expect(all("message-assistant").map((m) => m.textContent)).toEqual(["好的，请确认。"]);
    const shown = one("confirmation-card");
    expect(shown.dataset.replyId).toBe("reply-9");
    expect(all("card-call").map((c) => c.dataset.status)).toEqual(["asking", "asking"]);
    one("approve-all").click();
    await settle();
    expect(api.of("respond_confirmation")[0].slice(0, 2)).toEqual(["s1", "reply-9"]);
  });
});

describe("regenerating the last answer", () => {
  const regenerateButtons = () => all("regenerate").filter((button) => !button.hidden);

  it("is offered on the final answer only, once the run has stopped", () => {
    emit({ type: "run_started" });
    emit({ type: "assistant_message", message_id: 1, text: "先查一下" });
    emit({ type: "tool_call_started", call: chipCall({ call_id: "t1", status: "running" }) });
    emit({ type: "text_delta", text: "查到了" });
    expect(regenerateButtons()).toHaveLength(0);
    emit({ type: "assistant_message", message_id: 2, text: "查到了两款。" });
    expect(regenerateButtons()).toHaveLength(0);
    emit({ type: "run_stopped", reason: { type: "completed" } });
    expect(regenerateButtons()).toHaveLength(1);
    expect(regenerateButtons()[0].closest('[data-testid="message-assistant"]')?.textContent).toContain("查到了两款。");
  });

  it("is not offered on an answer that asked for a card", () => {
    emit({ type: "run_started" });
    emit({ type: "assistant_message", message_id: 1, text: "我来下单。" });
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "c1" })]) });
    emit({ type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } });
    expect(regenerateButtons()).toHaveLength(0);
  });

  it("asks the core, and the withdrawn answer makes way for the new one", async () => {
    emit({ type: "run_started" });
    emit({ type: "assistant_message", message_id: 5, text: "推荐 AirPods Pro。" });
    emit({ type: "run_stopped", reason: { type: "completed" } });
    regenerateButtons()[0].click();
    await settle();
    expect(api.of("regenerate_answer")).toEqual([["s1"]]);

    emit({ type: "answer_withdrawn", message_id: 5 });
    emit({ type: "run_started" });
    expect(all("message-assistant")).toHaveLength(0);
    emit({ type: "text_delta", text: "也可以看看 Sony。" });
    emit({ type: "assistant_message", message_id: 6, text: "也可以看看 Sony。" });
    emit({ type: "run_stopped", reason: { type: "completed" } });
    expect(all("message-assistant").map((m) => m.textContent)).toEqual(["也可以看看 Sony。"]);
    expect(regenerateButtons()).toHaveLength(1);
  });

  it("offers it on a reopened session's final answer, and says why the core refused", async () => {
    chat.load(
      ChatLog.fromTranscript({
        session: { id: "s1", title: "耳机", created_at: 1, updated_at: 2 },
        items: [
          { type: "user", id: 1, text: "有什么耳机推荐？", at: 1 },
          { type: "assistant", id: 2, text: "推荐 AirPods Pro。", at: 2 },
        ],
        pending: null,
        pending_input: null,
        running: false, failure: null
      }),
    );
    expect(regenerateButtons()).toHaveLength(1);
    api.failNext = { code: "nothing_to_regenerate", message: "no final answer" };
    regenerateButtons()[0].click();
    await settle();
    expect(chat.el.textContent).toContain("只有最后一条回答能重新生成");
  });
});

describe("a session reopened while its run goes on", () => {
  it("offers stop, not send, and takes the run's events", () => {
    const transcript: Transcript = {
      session: { id: "s1", title: "查订单", created_at: 1, updated_at: 2 },
      items: [{ type: "user", id: 1, text: "查一下我的订单", at: 1 }],
      pending: null,
      pending_input: null,
      running: true, failure: null
    };
    chat.load(ChatLog.fromTranscript(transcript));
    expect(one<HTMLButtonElement>("send").disabled).toBe(true);
    expect(one("stop").hidden).toBe(false);
    emit({ type: "run_stopped", reason: { type: "completed" } });
    expect(one<HTMLButtonElement>("send").disabled).toBe(false);
  });
});

describe("the composer", () => {
  const type = (text: string, key = "Enter", shiftKey = false) => {
    const input = one<HTMLTextAreaElement>("composer-input");
    input.value = text;
    input.dispatchEvent(new KeyboardEvent("keydown", { key, shiftKey, bubbles: true, cancelable: true }));
  };

  it("Enter sends the message and shows it as plain text", async () => {
    type(`看看 ${XSS_SCRIPT}`);
    await settle();
    expect(api.of("send_message")).toEqual([["s1", `看看 ${XSS_SCRIPT}`]]);
    expect(one("message-user").textContent).toBe(`看看 ${XSS_SCRIPT}`);
    expect(chat.el.querySelector("script")).toBeNull();
    expect(one<HTMLTextAreaElement>("composer-input").value).toBe("");
  });

  it("Enter that confirms an input method's composition does not send", async () => {
    const input = one<HTMLTextAreaElement>("composer-input");
    input.value = "ni hao";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", isComposing: true, bubbles: true, cancelable: true }));
    await settle();
    expect(api.of("send_message")).toEqual([]);
  });

  it("Shift+Enter does not send", async () => {
    type("第一行", "Enter", true);
    await settle();
    expect(api.of("send_message")).toEqual([]);
  });

  it("a refused message is taken back, its text restored and the error shown", async () => {
    api.failNext = { code: "run_in_progress", message: "助手还在处理上一条消息" };
    type("再来一个");
    await settle();
    expect(all("message-user")).toHaveLength(0);
    expect(one<HTMLTextAreaElement>("composer-input").value).toBe("再来一个");
    expect(chat.el.querySelector(".composer-error")?.textContent).toBe("助手还在处理上一条消息，请稍候或先停止。");
  });

  it("a message refused on a full disk keeps its text and says to free space", async () => {
    api.failNext = { code: "disk_full", message: "database error: database or disk is full" };
    type("买一台 iPhone 17");
    await settle();
    expect(all("message-user")).toHaveLength(0);
    expect(one<HTMLTextAreaElement>("composer-input").value).toBe("买一台 iPhone 17");
    expect(chat.el.querySelector(".composer-error")?.textContent).toBe(
      "磁盘空间已满，这一步没有保存，也没有执行。已保存的内容都还在；请腾出一些磁盘空间后再试一次。",
    );
  });

  it("warns that a new message drops a pending card, and offers stop while running", async () => {
    const hint = chat.el.querySelector<HTMLElement>(".composer-hint")!;
    expect(hint.hidden).toBe(true);
    emit({ type: "run_started" });
    expect(one<HTMLButtonElement>("send").disabled).toBe(true);
    one("stop").click();
    await settle();
    expect(api.of("cancel_run")).toEqual([["s1"]]);
    emit({ type: "confirmation_requested", card: card([cardCall({ call_id: "a" })]) });
    emit({ type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } });
    expect(hint.hidden).toBe(false);
    expect(one<HTMLButtonElement>("send").disabled).toBe(false);
  });
});

describe("a server that waits for a sign-in", () => {
  const notice = () => all("notice").find((el) => el.textContent?.includes("online"));

  it("holds the run until the user signs in, shows the browser wait, and says who signed in", async () => {
    api.signInResult = "held";
    emit({ type: "run_started" });
    emit({ type: "sign_in_required", server: "online", run_waits: true });
    expect(notice()?.textContent).toContain("online 需要登录后才能使用。登录后，这次对话会自动继续。");
    one("sign-in-start").click();
    await settle();
    expect(api.of("sign_in")).toEqual([["online"]]);
    expect(one("sign-in-waiting").textContent).toBe("正在等待你在浏览器中登录…");
    expect(all("sign-in-start")).toHaveLength(0);

    api.finishSignIn({ type: "signed_in", identity: "alice" });
    await settle();
    expect(one("signed-in").textContent).toBe("已登录：alice");
    emit({ type: "sign_in_ended", server: "online", identity: "alice" });
    expect(notice()?.textContent).toBe("已登录 online（alice），继续。");
    expect(all("sign-in")).toHaveLength(0);
  });

  it("lets the user go on without the server", async () => {
    emit({ type: "run_started" });
    emit({ type: "sign_in_required", server: "online", run_waits: true });
    one("sign-in-go-on").click();
    await settle();
    expect(api.of("go_on_without")).toEqual([["online"]]);
    emit({ type: "sign_in_ended", server: "online", identity: null });
    emit({ type: "text_delta", text: "先用本地商店。" });
    expect(notice()?.textContent).toBe("没有登录 online，这次没有用到它的工具。");
    expect(chat.el.textContent).toContain("先用本地商店。");
  });

  it("cancelling the browser wait offers the sign-in again, without an error", async () => {
    api.signInResult = "held";
    emit({ type: "sign_in_required", server: "online", run_waits: true });
    one("sign-in-start").click();
    await settle();
    one("sign-in-cancel").click();
    await settle();
    expect(api.of("cancel_sign_in")).toEqual([["online"]]);
    expect(one("sign-in-start").textContent).toBe("重新登录");
    expect(all("sign-in").flatMap((el) => [...el.querySelectorAll('[role="alert"]')])).toHaveLength(0);
  });

  it("a sign-in that fails says so and can be tried again", async () => {
    api.signInResult = { code: "sign_in", message: "the token endpoint answered 400" };
    emit({ type: "sign_in_required", server: "online", run_waits: true });
    one("sign-in-start").click();
    await settle();
    const alert = one("sign-in").querySelector('[role="alert"]');
    expect(alert?.textContent).toBe("登录没有完成，请重新登录。");
    expect(alert?.getAttribute("title")).toContain("the token endpoint answered 400");
    api.signInResult = { type: "signed_in", identity: "alice" };
    one("sign-in-start").click();
    await settle();
    expect(api.of("sign_in")).toHaveLength(2);
    expect(one("signed-in").textContent).toBe("已登录：alice");
  });

  it("a run that went on at once still offers signing in for next time", () => {
    emit({ type: "run_started" });
    emit({ type: "sign_in_required", server: "online", run_waits: false });
    expect(notice()?.textContent).toContain("online 需要登录后才能使用，这次没有用到它的工具。");
    expect(all("sign-in-start")).toHaveLength(1);
    expect(all("sign-in-go-on")).toHaveLength(0);
  });
});
