import { beforeEach, describe, expect, it } from "vitest";

import { FakeApi, settle } from "../test/fake-api";
import { XSS_IMG, card, cardCall } from "../test/fixtures";
import type { SessionInfo, Transcript } from "../protocol";
import { App } from "./app";

let api: FakeApi;
let root: HTMLElement;
let systemLanguage: string;
let app: App;

const q = <T extends HTMLElement = HTMLElement>(testid: string): T => {
  const found = root.querySelector<T>(`[data-testid="${testid}"]`);
  if (!found) throw new Error(`no ${testid}`);
  return found;
};

/** A stored session as open_session answers it, with no run going. */
const transcriptOf = (session: SessionInfo, items: Transcript["items"], pending: Transcript["pending"] = null): Transcript => ({
  session,
  items,
  pending,
  pending_input: null,
  running: false,
  failure: null,
});

async function start(): Promise<void> {
  root = document.createElement("div");
  document.body.replaceChildren(root);
  app = new App({ api, root, systemLanguage });
  await app.start();
  await settle();
}

/** Chooses a provider on the first-run page, lists its models and saves; the model then answers. */
async function setUpOnTheFirstRunPage(): Promise<void> {
  q<HTMLInputElement>("provider-ollama").click();
  q("test-models").click();
  await settle();
  api.check = { state: "ok", message: null };
  q("save-settings").click();
  await settle();
}

beforeEach(() => {
  api = new FakeApi();
  api.sessions = [{ id: "s1", title: "买耳机", created_at: 1, updated_at: 5 }];
  systemLanguage = "zh-CN";
  document.documentElement.removeAttribute("data-theme");
});

describe("the window", () => {
  it("has the app's name as its first h1", async () => {
    await start();
    expect(document.querySelector("h1")?.textContent).toBe("比特严选助手");
    expect(document.documentElement.lang).toBe("zh-CN");
    app.stop();
  });

  it("opens the latest session and shows its pending card, and applies its events", async () => {
    api.transcripts.set("s1", {
      session: api.sessions[0],
      items: [{ type: "user", id: 1, text: "加一副耳机", at: 1 }],
      pending: card([cardCall({ call_id: "a" })]),
      pending_input: null,
      running: false, failure: null
    });
    await start();
    expect(api.of("open_session")).toEqual([["s1"]]);
    expect(q("confirmation-card").dataset.replyId).toBe("reply-1");
    api.emit({ session_id: "s1", run_id: null, event: { type: "call_status_changed", call_id: "a", status: "expired" } });
    expect(q("card-call").dataset.status).toBe("expired");
    app.stop();
  });

  it("asks for its settings, restored databases and events together, and lists sessions once subscribed", async () => {
    let answerSettings = (): void => {};
    const settingsHeld = new Promise<void>((resolve) => (answerSettings = resolve));
    const getSettings = api.getSettings.bind(api);
    api.getSettings = async () => {
      await settingsHeld;
      return getSettings();
    };
    let subscribed = false;
    const onAgentEvent = api.onAgentEvent.bind(api);
    api.onAgentEvent = async (handler) => {
      const unlisten = await onAgentEvent(handler);
      subscribed = true;
      return unlisten;
    };
    const listSessions = api.listSessions.bind(api);
    let subscribedWhenListed: boolean | null = null;
    api.listSessions = async () => {
      subscribedWhenListed ??= subscribed;
      return listSessions();
    };
    root = document.createElement("div");
    document.body.replaceChildren(root);
    app = new App({ api, root, systemLanguage });
    const started = app.start();
    await settle();
    // The settings are still on their way; the other two answered meanwhile.
    expect(api.of("databases_restored")).toHaveLength(1);
    expect(subscribed).toBe(true);
    expect(api.of("list_sessions")).toEqual([]);
    answerSettings();
    await started;
    expect(subscribedWhenListed).toBe(true);
    expect(api.of("open_session")).toEqual([["s1"]]);
    app.stop();
  });

  it("marks the first frame the chat can be used in, once, even while the model check waits", async () => {
    performance.clearMarks();
    api.checkModel = () => new Promise(() => {});
    root = document.createElement("div");
    document.body.replaceChildren(root);
    app = new App({ api, root, systemLanguage });
    void app.start();
    await settle();
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null))));
    await new Promise((done) => requestAnimationFrame(() => done(null)));
    expect(performance.getEntriesByName("interactive")).toHaveLength(1);
    expect(q("composer-input")).toBeTruthy();
    app.stop();
  });

  it("draws the first screen the shell handed over before asking the core anything, and marks that frame", async () => {
    performance.clearMarks();
    const transcript = transcriptOf(api.sessions[0], [{ type: "user", id: 1, text: "加一副耳机", at: 1 }]);
    api.transcripts.set("s1", transcript);
    api.settings.appearance = { language: "en", theme: "dark" };
    api.start = { settings: structuredClone(api.settings), restored: [], sessions: [...api.sessions], latest: transcript, model: null };
    systemLanguage = "zh-CN";
    root = document.createElement("div");
    document.body.replaceChildren(root);
    app = new App({ api, root, systemLanguage });
    expect(api.calls).toEqual([]);
    expect(document.documentElement.lang).toBe("en");
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(q("session-item").dataset.sessionId).toBe("s1");
    const shown = q("message-user");
    expect(shown.textContent).toContain("加一副耳机");
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null))));
    await new Promise((done) => requestAnimationFrame(() => done(null)));
    expect(performance.getEntriesByName("interactive")).toHaveLength(1);

    await app.start();
    await settle();
    // Asked once subscribed, to check; not the settings or restored databases it was handed.
    expect(api.of("get_settings")).toEqual([]);
    expect(api.of("databases_restored")).toEqual([]);
    expect(api.of("list_sessions")).toHaveLength(1);
    expect(api.of("open_session")).toEqual([["s1"]]);
    // Nothing changed since the shell read it: what the shopper sees is what was drawn first.
    expect(q("message-user")).toBe(shown);
    expect(q("session-item").dataset.sessionId).toBe("s1");
    app.stop();
  });

  it("draws again what changed between the shell's reading and the page hearing events", async () => {
    const first = transcriptOf(api.sessions[0], [{ type: "user", id: 1, text: "加一副耳机", at: 1 }], card([cardCall({ call_id: "a" })]));
    api.start = { settings: structuredClone(api.settings), restored: [], sessions: [...api.sessions], latest: first, model: null };
    const later = { session: { ...api.sessions[0], title: "买降噪耳机", updated_at: 9 } };
    api.sessions = [later.session];
    api.transcripts.set("s1", { ...first, session: later.session, pending: null });
    root = document.createElement("div");
    document.body.replaceChildren(root);
    app = new App({ api, root, systemLanguage });
    expect(root.querySelector('[data-testid="confirmation-card"]')).not.toBeNull();
    await app.start();
    await settle();
    expect(q("session-item").textContent).toContain("买降噪耳机");
    expect(root.querySelector('[data-testid="confirmation-card"]')).toBeNull();
    app.stop();
  });

  it("opens the newest session itself when the shell handed another's transcript", async () => {
    api.sessions = [
      { id: "s1", title: "买耳机", created_at: 1, updated_at: 5 },
      { id: "s2", title: "买手机", created_at: 2, updated_at: 7 },
    ];
    const older = transcriptOf(api.sessions[0], []);
    api.start = { settings: structuredClone(api.settings), restored: [], sessions: [...api.sessions], latest: older, model: null };
    api.transcripts.set("s2", transcriptOf(api.sessions[1], [{ type: "user", id: 2, text: "看看手机", at: 2 }]));
    await start();
    expect(api.of("open_session")).toEqual([["s2"]]);
    expect(q("message-user").textContent).toContain("看看手机");
    app.stop();
  });

  it("sends a first message only once the page hears the core's events", async () => {
    api.sessions = [];
    api.start = { settings: structuredClone(api.settings), restored: [], sessions: [], latest: null, model: null };
    let subscribe = (): void => {};
    const held = new Promise<void>((resolve) => (subscribe = resolve));
    const onAgentEvent = api.onAgentEvent.bind(api);
    api.onAgentEvent = async (handler) => {
      await held;
      return onAgentEvent(handler);
    };
    root = document.createElement("div");
    document.body.replaceChildren(root);
    app = new App({ api, root, systemLanguage });
    const started = app.start();
    const input = q<HTMLTextAreaElement>("composer-input");
    input.value = "你好";
    q("send").click();
    await settle();
    expect(api.of("send_message")).toEqual([]);
    subscribe();
    await started;
    await settle();
    expect(api.of("send_message")).toHaveLength(1);
    app.stop();
  });

  it("creates a session when the first message is sent with none open", async () => {
    api.sessions = [];
    await start();
    const input = q<HTMLTextAreaElement>("composer-input");
    input.value = "你好";
    q("send").click();
    await settle();
    expect(api.of("create_session")).toHaveLength(1);
    expect(api.of("send_message")).toEqual([["s1", "你好"]]);
    expect(root.querySelectorAll('[data-testid="session-item"]')).toHaveLength(1);
    app.stop();
  });

  it("shows the first-run screen when the model is not configured, and the chat once it answers", async () => {
    api.check = { state: "not_configured", message: null };
    await start();
    expect(q("first-run-about").textContent).toContain("确认");
    await setUpOnTheFirstRunPage();
    expect(api.settings.model).toMatchObject({ base_url: "http://127.0.0.1:11434/v1", model: "scripted" });
    expect(root.querySelector('[data-testid="first-run"]')).toBeNull();
    expect(root.querySelector('[data-testid="composer-input"]')).not.toBeNull();
    app.stop();
  });

  it("draws the first-run page again in the language chosen on it", async () => {
    api.check = { state: "not_configured", message: null };
    await start();
    expect(q("first-run-about").textContent).toContain("确认");
    const choice = q<HTMLSelectElement>("first-run-language");
    choice.value = "en";
    choice.dispatchEvent(new Event("change"));
    await settle();
    expect(q("first-run-about").textContent).toContain("always shows you exactly what it is about to do");
    expect(q<HTMLSelectElement>("first-run-language").value).toBe("en");
    expect(q("nav-chat").textContent).toBe("Chat");
    app.stop();
  });

  it("never shows the first-run page without its language choice while it is drawn again, and keeps focus on the choice", async () => {
    api.check = { state: "not_configured", message: null };
    await start();
    const shownWithoutChoice: string[] = [];
    const watch = new MutationObserver(() => {
      const page = root.querySelector('[data-testid="first-run"]');
      if (page && !page.querySelector('[data-testid="first-run-language"]')) shownWithoutChoice.push(page.textContent ?? "");
    });
    watch.observe(root, { childList: true, subtree: true });
    const choice = q<HTMLSelectElement>("first-run-language");
    choice.focus();
    choice.value = "en";
    choice.dispatchEvent(new Event("change"));
    await settle();
    watch.disconnect();
    expect(q("first-run-about").textContent).toContain("always shows you exactly");
    expect(shownWithoutChoice).toEqual([]);
    expect(document.activeElement).toBe(q("first-run-language"));
    app.stop();
  });

  it("makes a first run's first screen the first-run page the shell's answer draws, never the chat before it", async () => {
    performance.clearMarks();
    const notConfigured = { state: "not_configured" as const, message: "no model is configured" };
    api.check = notConfigured;
    api.start = { settings: structuredClone(api.settings), restored: [], sessions: [...api.sessions], latest: null, model: notConfigured };
    root = document.createElement("div");
    document.body.replaceChildren(root);
    app = new App({ api, root, systemLanguage });
    // Drawn whole before the page asks the core anything: the form too.
    expect(api.calls).toEqual([]);
    expect(q("first-run-about").textContent).toContain("确认");
    expect(q("first-run").textContent).toContain("no model is configured");
    expect(q("first-run-language")).toBeTruthy();
    expect(q("provider-ollama")).toBeTruthy();
    expect(root.querySelector('[data-testid="composer-input"]')).toBeNull();
    await app.start();
    await settle();
    // The handed answer is the check: the page does not ask it, nor leave its page.
    expect(api.of("check_model")).toEqual([]);
    expect(api.of("get_settings")).toEqual([]);
    expect(q("first-run")).toBeTruthy();
    expect(root.querySelector('[data-testid="composer-input"]')).toBeNull();
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null))));
    await new Promise((done) => requestAnimationFrame(() => done(null)));
    expect(performance.getEntriesByName("interactive")).toHaveLength(1);
    // Set up on it, the chat opens.
    await setUpOnTheFirstRunPage();
    expect(root.querySelector('[data-testid="first-run"]')).toBeNull();
    expect(root.querySelector('[data-testid="composer-input"]')).not.toBeNull();
    app.stop();
  });

  it("keeps a returning user whose model is down in the chat, never on the first-run page", async () => {
    api.check = { state: "unreachable", message: "could not reach the model endpoint: connection refused" };
    await start();
    expect(root.querySelector('[data-testid="first-run"]')).toBeNull();
    expect(q<HTMLTextAreaElement>("composer-input").disabled).toBe(false);
    expect(root.textContent).toContain("模型服务暂时无法使用");
    expect(root.textContent).toContain("connection refused");
    app.stop();
  });

  it("opens the settings from a failed model turn", async () => {
    await start();
    api.emit({ session_id: "s1", run_id: "r1", event: { type: "run_started" } });
    api.emit({
      session_id: "s1",
      run_id: "r1",
      event: {
        type: "error",
        error: {
          code: "model",
          message: "the model endpoint answered HTTP 401: bad key",
          model_failure: { kind: { type: "unauthorized" }, details: { status: 401, raw: "bad key", request_id: null } },
        },
      },
    });
    q("model-error-settings").click();
    await settle();
    expect(q("settings-view")).toBeTruthy();
    app.stop();
  });

  it("starts a fresh data directory in the system's language, following the system's theme", async () => {
    systemLanguage = "en-US";
    await start();
    expect(document.documentElement.lang).toBe("en");
    expect(q("new-session").textContent).toContain("New chat");
    expect(document.documentElement.hasAttribute("data-theme")).toBe(false);
    app.stop();
  });

  it("takes the language and theme the core keeps over the system's", async () => {
    systemLanguage = "en-US";
    api.settings.appearance = { language: "zh-CN", theme: "dark" };
    await start();
    expect(document.documentElement.lang).toBe("zh-CN");
    expect(q("new-session").textContent).toContain("新对话");
    expect(document.documentElement.dataset.theme).toBe("dark");
    app.stop();
  });

  it("saves a chosen language and theme in the core's settings and applies them once saved", async () => {
    await start();
    q("settings").click();
    await settle();
    q("section-appearance").click();
    const language = q<HTMLSelectElement>("language");
    language.value = "en";
    language.dispatchEvent(new Event("change"));
    const theme = q<HTMLSelectElement>("theme");
    theme.value = "dark";
    theme.dispatchEvent(new Event("change"));
    expect(document.documentElement.lang).toBe("zh-CN");
    q("save-settings").click();
    await settle();
    expect(api.settings.appearance).toEqual({ language: "en", theme: "dark" });
    expect(document.documentElement.lang).toBe("en");
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(q("settings").textContent).toBe("Settings");
    expect(q("settings-view")).toBeTruthy();
    app.stop();
    // Another window on the same data directory starts as saved.
    systemLanguage = "zh-CN";
    await start();
    expect(q("new-session").textContent).toContain("New chat");
    app.stop();
  });
});

describe("a start after the database was found damaged", () => {
  it("says which backup was restored and from when, where the damaged file is, until closed", async () => {
    api.restored = [
      {
        database: "assistant",
        damagedKeptAt: "/data/damaged/1796000000000-assistant.db",
        problem: "file is not a database",
        restoredFrom: Date.UTC(2026, 11, 3, 8, 30),
      },
    ];
    await start();
    const notice = q("restore-notice");
    expect(notice.getAttribute("role")).toBe("alert");
    expect(notice.textContent).toContain("助手的数据文件损坏了，已恢复到");
    expect(notice.textContent).toContain("2026");
    expect(notice.textContent).toContain("/data/damaged/1796000000000-assistant.db");
    q<HTMLButtonElement>("restore-notice-close").click();
    expect(root.querySelector("[data-testid=restore-notice]")).toBeNull();
    app.stop();
  });

  it("says so when the shop's could not be restored, and says nothing on an ordinary start", async () => {
    api.restored = [
      { database: "shop", damagedKeptAt: "/data/shop/damaged/x-shop.db", problem: "malformed", restoredFrom: null },
    ];
    await start();
    expect(q("restore-notice").textContent).toContain("本地商城的数据文件损坏了，且没有可用的备份");
    app.stop();

    api.restored = [];
    await start();
    expect(root.querySelector("[data-testid=restore-notice]")).toBeNull();
    app.stop();
  });
});

describe("the audit log", () => {
  it("lists every decision with time, action, decision and reason, outcome, chat and details", async () => {
    api.tools = [
      {
        qualified_name: "shop__cancel_order", server: "shop", tool: "cancel_order", title: "取消订单", read_only: false,
        destructive: true, trusted: true, definition_changed: false, user_override: null, verdict: "ask",
        auto_approve_allowed: false, moves_money: true, group: "money",
      },
    ];
    api.audit = [
      {
        id: 1,
        at: Date.UTC(2025, 0, 1, 8, 0),
        session_id: "s1",
        call_id: "a",
        server: "shop",
        tool: "cancel_order",
        arguments_hash: "0123456789abcdef0123456789abcdef",
        decision: "user_denied",
        reason: XSS_IMG,
        old_definition_hash: null,
        new_definition_hash: null,
        preview: null,
        call: null,
      },
      {
        id: 2,
        at: Date.UTC(2025, 0, 1, 9, 0),
        session_id: "gone-session-id",
        call_id: "b",
        server: "shop",
        tool: "search_product",
        arguments_hash: "ffff",
        decision: "policy_allowed",
        reason: null,
        old_definition_hash: null,
        new_definition_hash: null,
        preview: null,
        call: null,
      },
    ];
    await start();
    q("audit").click();
    await settle();
    expect(api.of("list_audit")).toEqual([[500]]);
    const rows = [...root.querySelectorAll<HTMLElement>('[data-testid="audit-row"]')];
    expect(rows.map((r) => r.dataset.decision)).toEqual(["policy_allowed", "user_denied"]);
    const cells = [...rows[1].querySelectorAll(":scope > td")].map((td) => td.textContent);
    expect(cells.slice(1)).toEqual(["取消订单", `你已拒绝${XSS_IMG}`, "无法得知", "买耳机", "详情工具shop · cancel_order调用编号a参数摘要（SHA-256）0123456789abcdef0123456789abcdef"]);
    expect(rows[0].querySelectorAll("td")[4].textContent).toBe("对话已删除");
    expect(root.querySelector("img")).toBeNull();
    app.stop();
  });

  it("opens a row's chat from its link", async () => {
    api.sessions = [
      { id: "s1", title: "买耳机", created_at: 1, updated_at: 5 },
      { id: "s0", title: "查订单", created_at: 0, updated_at: 1 },
    ];
    api.audit = [
      {
        id: 1, at: 1, session_id: "s0", call_id: "a", server: "shop", tool: "query_order", arguments_hash: "ff",
        decision: "policy_allowed", reason: null, old_definition_hash: null, new_definition_hash: null, preview: null, call: null,
      },
    ];
    await start();
    q("audit").click();
    await settle();
    q("audit-open-session").click();
    await settle();
    expect(api.of("open_session").slice(-1)).toEqual([["s0"]]);
    expect(q("nav-chat").getAttribute("aria-current")).toBe("page");
    expect(root.querySelector('[data-testid="audit-view"]')).toBeNull();
    app.stop();
  });
});
