import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { createI18n } from "../i18n";
import type { AgentEvent, ErrorInfo, ModelFailureKind } from "../protocol";
import { ChatLog } from "../state";
import { FakeApi, settle } from "../test/fake-api";
import { ChatView } from "./chat";
import { modelFailureText } from "./model-error";

let api: FakeApi;
let chat: ChatView;
let settingsOpened: number;

function mount(lang: "zh-CN" | "en" = "zh-CN"): void {
  chat = new ChatView({
    api,
    i18n: createI18n(lang),
    ensureSession: async () => "s1",
    openSettings: () => (settingsOpened += 1),
  });
  document.body.replaceChildren(chat.el);
  chat.load(new ChatLog("s1"));
}

function emit(event: AgentEvent): void {
  chat.handle({ session_id: "s1", run_id: "r1", event });
}

const one = <T extends HTMLElement = HTMLElement>(testid: string): T => {
  const found = chat.el.querySelector<T>(`[data-testid="${testid}"]`);
  if (!found) throw new Error(`no ${testid}`);
  return found;
};

function failure(kind: ModelFailureKind, details: Partial<NonNullable<ErrorInfo["model_failure"]>["details"]> = {}): ErrorInfo {
  return {
    code: "model",
    message: "the model endpoint answered HTTP 500: boom",
    model_failure: { kind, details: { status: null, raw: "boom", request_id: null, ...details } },
  };
}

function failTurn(error: ErrorInfo): void {
  emit({ type: "run_started" });
  emit({ type: "error", error });
  emit({ type: "run_stopped", reason: { type: "failed" } });
}

beforeEach(() => {
  api = new FakeApi();
  settingsOpened = 0;
  mount();
});

describe("the message of each failure kind", () => {
  const zh = createI18n("zh-CN");
  const en = createI18n("en");
  const rows: Array<[ModelFailureKind, string, string]> = [
    [{ type: "unreachable" }, "无法连接模型服务", "could not be reached"],
    [{ type: "timeout" }, "长时间没有响应", "did not answer in time"],
    [{ type: "unauthorized" }, "模型服务拒绝了密钥，请检查 API Key", "The model service refused the key; check the API key"],
    [{ type: "rate_limited", retry_after_secs: null }, "限制了请求频率", "limiting requests"],
    [{ type: "rate_limited", retry_after_secs: 20 }, "请在 20 秒后重试", "Try again in 20 s"],
    [{ type: "server_error" }, "内部出错", "internal error"],
    [{ type: "rejected" }, "拒绝了这次请求", "refused this request"],
    [{ type: "bad_response" }, "无法识别", "not understood"],
    [{ type: "not_configured" }, "还没有设置模型", "No model is set up"],
  ];
  it.each(rows)("%o says what happened in Chinese and English", (kind, chinese, english) => {
    expect(modelFailureText(kind, zh)).toContain(chinese);
    expect(modelFailureText(kind, en)).toContain(english);
  });
});

describe("a failed model turn in the chat", () => {
  it("shows the localized message with Retry and Open settings, and the composer stays usable", () => {
    failTurn(failure({ type: "unauthorized" }, { status: 401 }));
    expect(one("model-error-message").textContent).toBe("模型服务拒绝了密钥，请检查 API Key。");
    expect(one("model-error-retry").textContent).toBe("重试");
    expect(one("model-error-settings").textContent).toBe("打开设置");
    expect(one<HTMLTextAreaElement>("composer-input").disabled).toBe(false);
  });

  it("speaks English when the page does", () => {
    mount("en");
    failTurn(failure({ type: "server_error" }, { status: 503 }));
    expect(one("model-error-message").textContent).toContain("internal error");
    expect(one("model-error-retry").textContent).toBe("Retry");
    expect(one("model-error-settings").textContent).toBe("Open settings");
    expect(one("model-error-details").querySelector("summary")?.textContent).toBe("Details");
  });

  it("retries the session and then puts its buttons away", async () => {
    failTurn(failure({ type: "server_error" }, { status: 500 }));
    one("model-error-retry").click();
    await settle();
    expect(api.of("retry_run")).toEqual([["s1"]]);
    expect(one("model-error-retry").closest<HTMLElement>(".model-error-actions")?.hidden).toBe(true);
  });

  it("keeps Retry and says why when the core refuses it", async () => {
    failTurn(failure({ type: "timeout" }));
    api.failNext = { code: "run_in_progress", message: "a run is already in progress" };
    one("model-error-retry").click();
    await settle();
    expect(one<HTMLButtonElement>("model-error-retry").disabled).toBe(false);
    expect(one("model-error-problem").hidden).toBe(false);
    expect(one("model-error-problem").textContent).toBe("助手还在处理上一条消息，请稍候或先停止。");
  });

  it("opens the settings", () => {
    failTurn(failure({ type: "unauthorized" }, { status: 401 }));
    one("model-error-settings").click();
    expect(settingsOpened).toBe(1);
  });

  it("keeps status, request id and the raw answer behind Details, as text", () => {
    const raw = '<img src=x onerror="alert(1)"> {"error":"bad key [redacted]"}';
    failTurn(failure({ type: "unauthorized" }, { status: 401, request_id: "req-42", raw }));
    const details = one<HTMLDetailsElement>("model-error-details");
    expect(details.open).toBe(false);
    expect(details.querySelector("summary")?.textContent).toBe("详情");
    expect(one("model-error-status").textContent).toBe("401");
    expect(one("model-error-request-id").textContent).toBe("req-42");
    expect(one("model-error-raw").textContent).toBe(raw);
    expect(details.querySelector("img")).toBeNull();
  });

  it("says none for what the failure did not have", () => {
    failTurn(failure({ type: "unreachable" }, { raw: "could not reach the model endpoint: connection refused" }));
    expect(one("model-error-status").textContent).toBe("无");
    expect(one("model-error-request-id").textContent).toBe("无");
  });

  it("leaves errors that are not the model's as a plain notice", () => {
    failTurn({ code: "mcp", message: "shop: stopped" });
    expect(chat.el.querySelector('[data-testid="model-error"]')).toBeNull();
    expect(one("notice").textContent).toBe("工具服务出错了，请稍后再试。");
  });

  it("says once that the run stopped: the error is the notice", () => {
    failTurn({ code: "mcp", message: "shop: stopped" });
    expect(chat.el.querySelectorAll('[data-testid="notice"]')).toHaveLength(1);
  });

  it("is shown again, with Retry, when the session is reopened (after a restart too)", async () => {
    chat.load(
      ChatLog.fromTranscript({
        session: { id: "s1", title: "耳机", created_at: 1, updated_at: 2 },
        items: [{ type: "user", id: 1, text: "有什么耳机推荐？", at: 1 }],
        pending: null,
        pending_input: null,
        running: false,
        failure: failure({ type: "unauthorized" }, { status: 401 }),
      }),
    );
    expect(one("model-error-message").textContent).toBe("模型服务拒绝了密钥，请检查 API Key。");
    one("model-error-retry").click();
    await settle();
    expect(api.of("retry_run")).toEqual([["s1"]]);
  });

  it("goes when a new run answers what the failed one could not", () => {
    failTurn(failure({ type: "server_error" }, { status: 500 }));
    emit({ type: "run_started" });
    expect(chat.el.querySelector('[data-testid="model-error"]')).toBeNull();
    emit({ type: "assistant_message", message_id: 2, text: "推荐 AirPods Pro。" });
    expect(one("message-assistant").textContent).toBe("推荐 AirPods Pro。");
  });
});

describe("a request the client sends again", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("says why and counts down to the retry, then gives way to the answer", () => {
    vi.useFakeTimers();
    emit({ type: "run_started" });
    emit({ type: "model_retrying", attempt: 1, retries: 3, delay_ms: 3000, kind: { type: "rate_limited", retry_after_secs: 3 } });
    expect(one("model-retrying").textContent).toBe("模型服务限制了请求频率，3 秒后自动重试（第 1/3 次）…");
    vi.advanceTimersByTime(1000);
    expect(one("model-retrying").textContent).toBe("模型服务限制了请求频率，2 秒后自动重试（第 1/3 次）…");
    vi.advanceTimersByTime(2000);
    expect(one("model-retrying").textContent).toBe("模型服务限制了请求频率，正在自动重试（第 1/3 次）…");

    emit({ type: "model_retrying", attempt: 2, retries: 3, delay_ms: 1000, kind: { type: "server_error" } });
    expect(chat.el.querySelectorAll('[data-testid="model-retrying"]')).toHaveLength(1);
    expect(one("model-retrying").textContent).toBe("模型服务内部出错，1 秒后自动重试（第 2/3 次）…");

    emit({ type: "text_delta", text: "推荐" });
    expect(chat.el.querySelector('[data-testid="model-retrying"]')).toBeNull();
    expect(one("message-assistant").textContent).toBe("推荐");
  });

  it("gives way to the error when the last retry fails too", () => {
    emit({ type: "run_started" });
    emit({ type: "model_retrying", attempt: 1, retries: 1, delay_ms: 500, kind: { type: "unreachable" } });
    failTurn(failure({ type: "unreachable" }));
    expect(chat.el.querySelector('[data-testid="model-retrying"]')).toBeNull();
    expect(one("model-error-message").textContent).toContain("无法连接模型服务");
  });

  it("speaks English when the page does", () => {
    mount("en");
    emit({ type: "model_retrying", attempt: 1, retries: 3, delay_ms: 2000, kind: { type: "timeout" } });
    expect(one("model-retrying").textContent).toBe("The model service did not answer in time; retrying in 2 s (attempt 1 of 3)…");
  });
});
