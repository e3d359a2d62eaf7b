import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import { SECRET_MASK, type ServerStatus, type SettingsEdit, type ToolPolicyView } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { NOTES_CHANGE } from "../test/fixtures";
import { settingsView } from "./settings";

const i18n = createI18n("zh-CN");
let api: FakeApi;
let root: HTMLElement;

function tool(name: string, facts: Partial<ToolPolicyView>): ToolPolicyView {
  return {
    qualified_name: `shop__${name}`,
    server: "shop",
    tool: name,
    title: name,
    destructive: false,
    read_only: false,
    trusted: true,
    definition_changed: false,
    user_override: null,
    verdict: "ask",
    auto_approve_allowed: false,
    moves_money: false,
    group: facts.read_only ? "read" : facts.moves_money ? "money" : "other_write",
    ...facts,
  };
}

const TOOLS: ToolPolicyView[] = [
  tool("search_product", { read_only: true, verdict: "allow" }),
  tool("update_cart_item", { auto_approve_allowed: true, group: "cart" }),
  tool("cancel_order", { destructive: true }),
  tool("pay_order", { destructive: true, moves_money: true }),
  tool("submit_ticket", {}),
  { ...tool("notes_write", {}), qualified_name: "notes__write", server: "notes", trusted: false },
];

async function mount(): Promise<void> {
  const view = settingsView({ api, i18n });
  root = view.el;
  document.body.replaceChildren(root);
  await view.load();
}

const q = <T extends HTMLElement>(sel: string): T => {
  const found = root.querySelector<T>(sel);
  if (!found) throw new Error(`no ${sel}`);
  return found;
};
const input = (sel: string, value: string) => {
  const el = q<HTMLInputElement | HTMLTextAreaElement>(sel);
  el.value = value;
  el.dispatchEvent(new Event("input"));
};
const policyOptions = (qualified: string) =>
  [...q(`[data-tool="${qualified}"]`).querySelectorAll("option")].map((o) => o.value);

async function save(): Promise<SettingsEdit> {
  q<HTMLButtonElement>('[data-testid="save-settings"]').click();
  await settle();
  const all = api.of("save_settings");
  const saved = all[all.length - 1];
  if (!saved) throw new Error("nothing saved");
  return saved[0] as SettingsEdit;
}

beforeEach(async () => {
  api = new FakeApi();
  api.tools = TOOLS;
  api.settings.mcp_servers = { notes: { command: "npx", args: ["notes-mcp"], env: { TOKEN: { action: "keep" } }, trusted: false, disabled: false, timeout_secs: null } };
  await mount();
});

describe("model provider settings", () => {
  it("saves base URL, model, key and extra headers, then checks the model", async () => {
    input('[data-testid="model-base-url"]', "https://api.deepseek.com/v1");
    input('[data-testid="model-name"]', "deepseek-chat");
    input('[data-testid="model-api-key"]', "sk-secret");
    expect(q<HTMLInputElement>('[data-testid="model-api-key"]').type).toBe("password");
    input('[data-testid="model-headers-new"]', "X-Org: bit");
    const saved = await save();
    expect(saved.model).toEqual({
      base_url: "https://api.deepseek.com/v1",
      model: "deepseek-chat",
      api_key: { action: "set", value: "sk-secret" },
      extra_headers: { "X-Org": { action: "set", value: "bit" } },
    });
    expect(api.of("check_model")).toHaveLength(1);
    expect(q('[data-testid="save-status"]').textContent).toBe("模型可以连接。");
  });

  it("says in Chinese why a save was refused, the core's words only as detail", async () => {
    api.failNext = { code: "invalid_settings", message: "the model base URL \"ftp://x\" is not an http(s) URL" };
    await save();
    const error = q('[data-testid="save-error"]');
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("设置无法保存，请检查填写的内容。");
    expect(error.title).toContain("ftp://x");
  });
});

describe("secrets are write-only", () => {
  async function mountWithStoredSecrets(): Promise<void> {
    api.settings.model = { ...api.settings.model, api_key: { action: "keep" }, extra_headers: { "X-Org": { action: "keep" } } };
    await mount();
  }

  it("shows a stored key and header as set, masked and empty, and keeps them when left alone", async () => {
    await mountWithStoredSecrets();
    const key = q<HTMLInputElement>('[data-testid="model-api-key"]');
    expect(key.type).toBe("password");
    expect(key.value).toBe("");
    expect(key.placeholder).toBe("已设置（留空则保持不变）");
    const header = q('[data-testid="model-headers"] [data-name="X-Org"]');
    expect(header.textContent).toContain("X-Org");
    const headerValue = header.querySelector<HTMLInputElement>("input")!;
    expect(headerValue.type).toBe("password");
    expect(headerValue.value).toBe("");
    const saved = await save();
    expect(saved.model.api_key).toEqual({ action: "keep" });
    expect(saved.model.extra_headers).toEqual({ "X-Org": { action: "keep" } });
  });

  it("sends a typed key as a new value and leaves a cleared one out", async () => {
    await mountWithStoredSecrets();
    input('[data-testid="model-api-key"]', "sk-new");
    q<HTMLButtonElement>('[data-testid="model-headers"] [data-name="X-Org"] button').click();
    let saved = await save();
    expect(saved.model.api_key).toEqual({ action: "set", value: "sk-new" });
    expect(saved.model.extra_headers).toEqual({});

    await mount();
    const clear = q<HTMLButtonElement>('[data-testid="model-api-key-clear"]');
    expect(clear.hidden).toBe(false);
    clear.click();
    expect(clear.hidden).toBe(true);
    expect(q<HTMLInputElement>('[data-testid="model-api-key"]').placeholder).toBe("未设置");
    saved = await save();
    expect(saved.model.api_key).toBeNull();
  });

  it("offers no clear button for a key that is not set", () => {
    expect(q<HTMLInputElement>('[data-testid="model-api-key"]').placeholder).toBe("未设置");
    expect(q<HTMLButtonElement>('[data-testid="model-api-key-clear"]').hidden).toBe(true);
  });

  it("lists a server's env names with write-only values and keeps them through a rename", async () => {
    const form = q('[data-testid="server-form"]');
    const token = form.querySelector<HTMLInputElement>('[data-name="TOKEN"] input')!;
    expect(token.type).toBe("password");
    expect(token.value).toBe("");
    const name = form.querySelector<HTMLInputElement>("input")!;
    name.value = "notes2";
    name.dispatchEvent(new Event("input"));
    const added = form.querySelector<HTMLTextAreaElement>('[data-testid="server-env-new"]')!;
    added.value = "REGION=cn";
    added.dispatchEvent(new Event("input"));
    const saved = await save();
    expect(saved.mcp_servers).toEqual({
      notes2: {
        command: "npx",
        args: ["notes-mcp"],
        env: { TOKEN: { action: "keep" }, REGION: { action: "set", value: "cn" } },
        trusted: false,
        disabled: false,
        timeout_secs: null,
        page_origins: [],
      },
    });
    expect(saved.renamed).toEqual({ notes2: "notes" });
  });
});

describe("secrets in a server's arguments and URL", () => {
  beforeEach(async () => {
    api.settings.mcp_servers = {
      notes: { command: "npx", args: ["notes-mcp", "--api-key", SECRET_MASK], env: {}, trusted: false, disabled: false, timeout_secs: null },
      remote: { url: `https://h.example/mcp?token=${SECRET_MASK}`, headers: {}, trusted: false, disabled: false, timeout_secs: null },
    };
    await mount();
  });

  const form = (name: string): Element => q(`[data-testid="server-form"][data-name="${name}"]`);

  it("shows each stored secret as the mask, says it is kept, and saves the mask back when left alone", async () => {
    const args = form("notes").querySelector<HTMLTextAreaElement>('[data-testid="server-args"]')!;
    expect(args.value).toBe(`notes-mcp\n--api-key\n${SECRET_MASK}`);
    expect(form("notes").querySelector(".field-help")!.textContent).toContain("系统钥匙串");
    expect(form("remote").querySelector<HTMLInputElement>('[data-testid="server-url"]')!.value).toBe(`https://h.example/mcp?token=${SECRET_MASK}`);
    const saved = await save();
    expect(saved.mcp_servers.notes).toMatchObject({ args: ["notes-mcp", "--api-key", SECRET_MASK] });
    expect(saved.mcp_servers.remote).toMatchObject({ url: `https://h.example/mcp?token=${SECRET_MASK}` });
  });

  it("sends a value typed over the mask as the new value", async () => {
    const args = form("notes").querySelector<HTMLTextAreaElement>('[data-testid="server-args"]')!;
    args.value = "notes-mcp\n--api-key\nsk-new";
    args.dispatchEvent(new Event("input"));
    const saved = await save();
    expect(saved.mcp_servers.notes).toMatchObject({ args: ["notes-mcp", "--api-key", "sk-new"] });
  });
});

/** Adds a server in the form, named and of the HTTP kind at `address`. */
function addHttpServer(serverName: string, address: string): Element {
  q<HTMLButtonElement>('[data-testid="add-server"]').click();
  const forms = root.querySelectorAll('[data-testid="server-form"]');
  const added = forms[forms.length - 1];
  const name = added.querySelector<HTMLInputElement>("input")!;
  name.value = serverName;
  name.dispatchEvent(new Event("input"));
  const kind = added.querySelector<HTMLSelectElement>("select")!;
  kind.value = "http";
  kind.dispatchEvent(new Event("change"));
  const url = added.querySelector<HTMLInputElement>('input[type="url"]')!;
  url.value = address;
  url.dispatchEvent(new Event("input"));
  return added;
}

describe("MCP servers", () => {
  it("lists the built-in shop read-only and keeps the user's servers in the mcpServers shape", async () => {
    expect([...root.querySelectorAll('[data-testid="builtin-server"]')].map((li) => li.textContent)).toEqual([
      "shop · 内置 · 受信任",
    ]);
    expect(root.querySelectorAll('[data-testid="server-form"]')).toHaveLength(1);
    const added = addHttpServer("remote", "http://127.0.0.1:8080/mcp");
    added.querySelector<HTMLInputElement>('input[type="checkbox"]')!.click();
    const saved = await save();
    expect(saved.mcp_servers).toEqual({
      notes: { command: "npx", args: ["notes-mcp"], env: { TOKEN: { action: "keep" } }, trusted: false, disabled: false, timeout_secs: null, page_origins: [] },
      remote: { url: "http://127.0.0.1:8080/mcp", headers: {}, trusted: true, disabled: false, timeout_secs: null, page_origins: [], oauth_client_id: null },
    });
    expect(saved.renamed).toEqual({});
  });

  it("saves a server disabled with its own call timeout, and refuses a timeout that is not a whole number", async () => {
    const form = q('[data-testid="server-form"]');
    form.querySelector<HTMLInputElement>('[data-testid="server-disabled"]')!.click();
    const timeout = form.querySelector<HTMLInputElement>('[data-testid="server-timeout"]')!;
    timeout.value = "1.5";
    timeout.dispatchEvent(new Event("input"));
    q<HTMLButtonElement>('[data-testid="save-settings"]').click();
    await settle();
    expect(api.of("save_settings")).toEqual([]);
    expect(q('[data-testid="save-error"]').textContent).toBe("“工具调用超时（秒，留空为默认 120）”必须是正整数。");
    timeout.value = "45";
    timeout.dispatchEvent(new Event("input"));
    const saved = await save();
    expect(saved.mcp_servers.notes).toMatchObject({ disabled: true, timeout_secs: 45 });
  });

  it("shows the origins a server may send the user to on its row and saves them one per line", async () => {
    api.settings.mcp_servers = {
      notes: { command: "npx", args: ["notes-mcp"], env: {}, trusted: false, disabled: false, timeout_secs: null, page_origins: ["https://pay.example.com"] },
    };
    await mount();
    const origins = q<HTMLTextAreaElement>('[data-testid="server-page-origins"]');
    expect(origins.value).toBe("https://pay.example.com");
    expect(q(`#${origins.id}-help`).textContent).toContain("钓鱼");
    expect((await save()).mcp_servers.notes).toMatchObject({ page_origins: ["https://pay.example.com"] });
    // The saved settings are shown again: the row is drawn anew.
    const again = q<HTMLTextAreaElement>('[data-testid="server-page-origins"]');
    expect(again.value).toBe("https://pay.example.com");
    again.value = " https://pay.example.com \n\nhttp://127.0.0.1:8080\n";
    again.dispatchEvent(new Event("input"));
    expect((await save()).mcp_servers.notes).toMatchObject({ page_origins: ["https://pay.example.com", "http://127.0.0.1:8080"] });
  });

  it("saves an HTTP server's sign-in client id, trimmed, and none when left blank", async () => {
    addHttpServer("remote", "https://remote.example/mcp");
    expect((await save()).mcp_servers.remote).toMatchObject({ oauth_client_id: null });
    const clientId = root.querySelectorAll<HTMLInputElement>('[data-testid="server-client-id"]');
    clientId[clientId.length - 1].value = "  operator-given ";
    clientId[clientId.length - 1].dispatchEvent(new Event("input"));
    expect((await save()).mcp_servers.remote).toMatchObject({ oauth_client_id: "operator-given" });
  });

  it("keeps a merchant's UCP origin through a save, and saves none for any other server", async () => {
    api.settings.mcp_servers = {
      merchant: { url: "https://shop.example/ucp/mcp", headers: {}, trusted: true, disabled: false, timeout_secs: null, ucp: { origin: "https://shop.example" } },
    };
    await mount();
    const origins = root.querySelectorAll<HTMLInputElement>('[data-testid="server-ucp-origin"]');
    expect(origins[0].value).toBe("https://shop.example");
    expect((await save()).mcp_servers.merchant).toMatchObject({ ucp: { origin: "https://shop.example" } });
    addHttpServer("remote", "https://remote.example/mcp");
    expect((await save()).mcp_servers.remote).not.toHaveProperty("ucp");
  });

  it("saves the platform profile's address, trimmed", async () => {
    const profile = q<HTMLInputElement>('[data-testid="platform-profile"]');
    expect(profile.value).toBe("https://bitselect.app/.well-known/ucp-platform.json");
    profile.value = " http://127.0.0.1:8080/platform.json ";
    profile.dispatchEvent(new Event("input"));
    expect((await save()).ucp_platform_profile).toBe("http://127.0.0.1:8080/platform.json");
  });

  it("marks a saved server over plain http to another computer as not encrypted", async () => {
    expect(root.querySelector('[data-testid="server-unencrypted"]')).toBeNull();
    api.settings.mcp_servers = {
      plain: { url: "http://notes.example/mcp", headers: {}, trusted: false, disabled: false, timeout_secs: null },
      tls: { url: "https://notes.example/mcp", headers: {}, trusted: false, disabled: false, timeout_secs: null },
    };
    api.settings.unencrypted = ["plain"];
    await mount();
    const marks = root.querySelectorAll('[data-testid="server-unencrypted"]');
    expect(marks).toHaveLength(1);
    expect(marks[0].closest('[data-testid="server-form"]')!.querySelector("legend")!.textContent).toBe("plain");
    expect(marks[0].textContent).toContain("未加密");
  });

  it("refuses a server without a name before saving", async () => {
    q<HTMLButtonElement>('[data-testid="add-server"]').click();
    q<HTMLButtonElement>('[data-testid="save-settings"]').click();
    await settle();
    expect(api.of("save_settings")).toEqual([]);
    expect(q('[data-testid="save-error"]').textContent).toBe("每个服务都需要名称。");
  });
});

describe("the shop and sign-ins", () => {
  const status = (name: string, sign_in: ServerStatus["sign_in"]): ServerStatus => ({
    name,
    trusted: name === "shop",
    connected: sign_in?.type === "signed_in",
    pid: null,
    restarts: 0,
    failed_starts: 0,
    stops_soon: 0,
    retry_in_secs: null,
    problem: null,
    honours_idempotency_keys: null,
    sign_in,
  });

  it("shows each server's process: running, waiting to be used, or failing and when it is tried again", async () => {
    api.settings.mcp_servers = {
      notes: { command: "notes-mcp", args: [], env: {}, trusted: false, disabled: false, timeout_secs: null },
      crashy: { command: "crashy-mcp", args: [], env: {}, trusted: false, disabled: false, timeout_secs: null },
      broken: { command: "missing-mcp", args: [], env: {}, trusted: false, disabled: false, timeout_secs: null },
    };
    api.servers = [
      { ...status("shop", null), connected: true, restarts: 2 },
      status("notes", null),
      { ...status("crashy", null), stops_soon: 3, retry_in_secs: 30, problem: "the server had stopped" },
      { ...status("broken", null), failed_starts: 2, retry_in_secs: 30, problem: "missing-mcp: No such file or directory" },
    ];
    await mount();
    await settle();
    const statusOf = (name: string): string =>
      q(`[data-testid="server-form"][data-name="${name}"] [data-testid="server-status"]`).textContent ?? "";
    expect(q('[data-testid="builtin-server"] [data-testid="server-status"]').textContent).toBe("运行中 · 已重新启动 2 次");
    expect(statusOf("notes")).toBe("未运行 · 用到时启动");
    expect(statusOf("crashy")).toBe("连续 3 次启动后很快停止，30 秒后再启动 · the server had stopped");
    expect(statusOf("broken")).toBe("连续 2 次启动失败，30 秒后再试 · missing-mcp: No such file or directory");
  });

  it("keeps the local shop unless the user picks the online one, whose address it needs", async () => {
    expect((await save()).shop).toEqual({ kind: "local" });
    const kind = q<HTMLSelectElement>('[data-testid="shop-kind"]');
    kind.value = "online";
    kind.dispatchEvent(new Event("change"));
    q<HTMLButtonElement>('[data-testid="save-settings"]').click();
    await settle();
    expect(q('[data-testid="save-error"]').textContent).toBe("请填写在线商店的地址。");
    input('[data-testid="shop-url"]', " https://shop.bitselect.example/mcp ");
    expect((await save()).shop).toEqual({ kind: "online", url: "https://shop.bitselect.example/mcp" });
  });

  it("shows who is signed in where, signs out, and signs in to a server that asks", async () => {
    api.servers = [
      status("shop", { type: "signed_in", identity: "alice" }),
      status("notes", { type: "required" }),
      status("local", null),
    ];
    await mount();
    await settle();
    const rows = () => [...root.querySelectorAll<HTMLElement>('[data-testid="sign-in-row"]')];
    expect(rows().map((row) => row.textContent)).toEqual([
      "shop · 已登录：alice 退出登录",
      "notes · 需要登录登录到 notes",
    ]);

    api.servers = [status("shop", null), status("notes", { type: "required" })];
    q<HTMLButtonElement>('[data-testid="sign-out"]').click();
    await settle();
    expect(api.of("sign_out")).toEqual([["shop"]]);
    expect(rows().map((row) => row.dataset.server)).toEqual(["notes"]);

    api.servers = [status("notes", { type: "signed_in", identity: "bob" })];
    q<HTMLButtonElement>('[data-testid="sign-in-start"]').click();
    await settle();
    expect(api.of("sign_in")).toEqual([["notes"]]);
    expect(rows().map((row) => row.textContent)).toEqual(["notes · 已登录：bob 退出登录"]);
  });
});

describe("per-tool policy", () => {
  it("offers auto-approve only for non-destructive write tools of trusted servers", () => {
    expect(policyOptions("shop__update_cart_item")).toEqual(["default", "ask", "deny", "auto_approve"]);
    expect(policyOptions("shop__cancel_order")).toEqual(["default", "ask", "deny"]);
    expect(policyOptions("shop__search_product")).toEqual(["default", "ask", "deny"]);
    expect(policyOptions("notes__write")).toEqual(["default", "ask", "deny"]);
  });

  it("never offers auto-approve for a tool that moves money, is destructive or reaches outside the shop", () => {
    expect(policyOptions("shop__pay_order")).toEqual(["default", "ask", "deny"]);
    expect(policyOptions("shop__submit_ticket")).toEqual(["default", "ask", "deny"]);
    expect(q('[data-tool="shop__pay_order"] .kind').textContent).toBe("涉及付款");
  });

  it("drops an auto-approve stored by an older version for a tool that moves money, and says so", async () => {
    api.settings.tool_overrides = { shop__pay_order: "auto_approve", shop__update_cart_item: "auto_approve" };
    await mount();
    expect(policyOptions("shop__pay_order")).toEqual(["default", "ask", "deny"]);
    const row = q('[data-tool="shop__pay_order"]');
    expect(row.querySelector<HTMLSelectElement>("select")!.value).toBe("default");
    expect(row.querySelector<HTMLElement>('[data-testid="auto-not-honoured"]')!.hidden).toBe(false);
    expect(q('[data-tool="shop__update_cart_item"] [data-testid="auto-not-honoured"]').hidden).toBe(true);
    const saved = await save();
    expect(saved.tool_overrides).toEqual({ shop__update_cart_item: "auto_approve" });
  });

  it("shows the core's refusal of an auto-approve and keeps the form as it was", async () => {
    api.failNext = {
      code: "auto_approve_not_allowed",
      message: "the settings cannot be saved: asking cannot be turned off for shop__pay_order: it places an order or moves money",
    };
    await save();
    const error = q('[data-testid="save-error"]');
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("这个工具每次都必须询问你，不能设为自动批准。");
    expect(error.title).toContain("shop__pay_order");
    expect(q('[data-testid="save-status"]').textContent).toBe("");
  });

  it("warns when auto-approve is chosen and saves the override", async () => {
    const row = q('[data-tool="shop__update_cart_item"]');
    const warning = row.querySelector<HTMLElement>(".field-warning")!;
    expect(warning.hidden).toBe(true);
    const control = row.querySelector<HTMLSelectElement>("select")!;
    control.value = "auto_approve";
    control.dispatchEvent(new Event("change"));
    expect(warning.hidden).toBe(false);
    const deny = q('[data-tool="shop__cancel_order"]').querySelector<HTMLSelectElement>("select")!;
    deny.value = "deny";
    deny.dispatchEvent(new Event("change"));
    const saved = await save();
    expect(saved.tool_overrides).toEqual({ shop__update_cart_item: "auto_approve", shop__cancel_order: "deny" });
  });
});

describe("limits", () => {
  it("saves the card expiry in seconds and refuses a non-number", async () => {
    input('[data-testid="card-expiry"]', "10");
    expect((await save()).card_expiry_secs).toBe(600);
    input('[data-testid="card-expiry"]', "ten");
    const before = api.of("save_settings").length;
    q<HTMLButtonElement>('[data-testid="save-settings"]').click();
    await settle();
    expect(api.of("save_settings")).toHaveLength(before);
    expect(q('[data-testid="save-error"]').textContent).toContain("确认卡片有效期");
  });
});

describe("a tool whose definition changed", () => {
  it("shows what changed old beside new, and accepting it calls the core and reloads the tools", async () => {
    api.tools = [...TOOLS, { ...tool("add_note", { definition_changed: true }), qualified_name: "notes__add_note", server: "notes" }];
    api.changes.set("notes__add_note", NOTES_CHANGE);
    await mount();
    await settle();
    const panel = q('[data-testid="definition-change"][data-tool="notes__add_note"]');
    expect(root.querySelectorAll('[data-testid="definition-change"]').length).toBe(1);
    const description = panel.querySelector('[data-field="description"]');
    expect(description?.querySelector('[data-testid="definition-old"]')?.textContent).toContain("Add a note to the notebook.");
    expect(description?.querySelector('[data-testid="definition-new"]')?.textContent).toContain("third party");
    const listed = api.of("list_tools").length;
    panel.querySelector<HTMLButtonElement>('[data-testid="accept-definition"]')?.click();
    await settle();
    expect(api.of("accept_tool_definition")).toEqual([["notes__add_note", NOTES_CHANGE.new_hash]]);
    expect(api.of("list_tools").length).toBe(listed + 1);
  });
});

describe("logs", () => {
  it("opens the logs folder through the shell when the button is clicked", async () => {
    expect(api.of("open_logs_folder")).toHaveLength(0);
    q<HTMLButtonElement>('[data-testid="open-logs"]').click();
    await settle();
    expect(api.of("open_logs_folder")).toHaveLength(1);
    expect(q('[data-testid="open-logs-error"]').hidden).toBe(true);
  });

  it("says why when the folder cannot be opened", async () => {
    api.failNext = { code: "internal", message: "xdg-open could not open /logs" };
    q<HTMLButtonElement>('[data-testid="open-logs"]').click();
    await settle();
    const error = q('[data-testid="open-logs-error"]');
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("无法打开日志文件夹：应用内部出错了。");
    expect(error.title).toContain("xdg-open could not open /logs");
  });
});

describe("sections", () => {
  it("shows one section at a time under a tab list, the model's first", async () => {
    const tabs = [...root.querySelectorAll('[role="tab"]')].map((tab) => tab.textContent);
    expect(tabs).toEqual(["模型", "服务器", "工具", "确认", "外观"]);
    const visible = () => [...root.querySelectorAll<HTMLElement>('[role="tabpanel"]')].filter((p) => !p.hidden).map((p) => p.dataset.testid);
    expect(visible()).toEqual(["settings-panel-model"]);
    q<HTMLButtonElement>('[data-testid="section-tools"]').click();
    expect(visible()).toEqual(["settings-panel-tools"]);
    expect(q('[data-testid="section-tools"]').getAttribute("aria-selected")).toBe("true");
    expect(q('[data-testid="settings-panel-servers"]').querySelector('[data-testid="open-logs"]')).not.toBeNull();
    expect(q('[data-testid="settings-panel-confirmations"]').querySelector('[data-testid="card-expiry"]')).not.toBeNull();
    expect(q('[data-testid="settings-panel-appearance"]').querySelector('[data-testid="theme"]')).not.toBeNull();
  });

  it("keeps the section shown when a save draws the form again", async () => {
    q<HTMLButtonElement>('[data-testid="section-confirmations"]').click();
    input('[data-testid="max-turns"]', "20");
    await save();
    await settle();
    expect(q('[data-testid="settings-panel-confirmations"]').hidden).toBe(false);
    expect(q<HTMLInputElement>('[data-testid="max-turns"]').value).toBe("20");
  });
});

describe("the save bar", () => {
  const bar = () => q('[data-testid="save-bar"]');

  it("says nothing is unsaved until something changes, stays in view while it is, and clears once saved", async () => {
    expect(bar().dataset.dirty).toBe("false");
    expect(q('[data-testid="save-unsaved"]').hidden).toBe(true);
    input('[data-testid="max-turns"]', "20");
    await settle();
    expect(bar().dataset.dirty).toBe("true");
    expect(q('[data-testid="save-unsaved"]').hidden).toBe(false);
    // Sticky while dirty: the bar sits below every section, outside the tab panels.
    expect(bar().closest('[role="tabpanel"]')).toBeNull();
    await save();
    await settle();
    expect(bar().dataset.dirty).toBe("false");
  });

  it("counts a change undone as nothing unsaved", async () => {
    input('[data-testid="max-turns"]', "20");
    await settle();
    expect(bar().dataset.dirty).toBe("true");
    input('[data-testid="max-turns"]', "12");
    await settle();
    expect(bar().dataset.dirty).toBe("false");
  });

  it("counts a typed key, a new server and a changed theme as unsaved", async () => {
    input('[data-testid="model-api-key"]', "sk-new");
    await settle();
    expect(bar().dataset.dirty).toBe("true");
    await mount();
    q<HTMLButtonElement>('[data-testid="add-server"]').click();
    await settle();
    expect(bar().dataset.dirty).toBe("true");
    await mount();
    const theme = q<HTMLSelectElement>('[data-testid="theme"]');
    theme.value = "dark";
    theme.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(bar().dataset.dirty).toBe("true");
  });
});

describe("tool groups", () => {
  it("groups the tools by what they can do, each under its title", () => {
    const groups = [...root.querySelectorAll<HTMLElement>('[data-testid="tool-group"]')].map((group) => ({
      group: group.dataset.group,
      heading: group.querySelector("h4")?.textContent,
      tools: [...group.querySelectorAll(".tool-title")].map((title) => title.textContent),
    }));
    expect(groups).toEqual([
      { group: "read", heading: "只读", tools: ["search_product"] },
      { group: "cart", heading: "修改购物车", tools: ["update_cart_item"] },
      { group: "money", heading: "涉及付款", tools: ["pay_order"] },
      { group: "other_write", heading: "其它写入", tools: ["cancel_order", "submit_ticket", "notes_write"] },
    ]);
  });

  it("names each tool's server and its own name, never the app's server__tool", () => {
    const row = root.querySelector<HTMLElement>('[data-tool="notes__write"]');
    expect(row?.querySelector(".tool-server")?.textContent).toBe("notes");
    expect(row?.querySelector(".tool-name code")?.textContent).toBe("notes_write");
    for (const each of root.querySelectorAll('[data-testid="tool-row"]')) expect(each.textContent).not.toContain("__");
  });
});

describe("appearance", () => {
  it("saves the language and theme with the other settings, the system's language until one is chosen", async () => {
    const language = q<HTMLSelectElement>('[data-testid="language"]');
    expect(language.value).toBe("system");
    language.value = "en";
    language.dispatchEvent(new Event("change"));
    const theme = q<HTMLSelectElement>('[data-testid="theme"]');
    theme.value = "light";
    theme.dispatchEvent(new Event("change"));
    expect((await save()).appearance).toEqual({ language: "en", theme: "light" });
    await mount();
    q<HTMLSelectElement>('[data-testid="language"]').value = "system";
    q('[data-testid="language"]').dispatchEvent(new Event("change"));
    expect((await save()).appearance).toEqual({ language: null, theme: "light" });
  });
});

describe("model list in the settings", () => {
  it("tests the provider being edited and fills the model from its list", async () => {
    api.models = ["deepseek-chat", "deepseek-reasoner"];
    q<HTMLInputElement>('[data-testid="provider-deepseek"]').click();
    input('[data-testid="model-api-key"]', "sk-ds");
    q<HTMLButtonElement>('[data-testid="test-models"]').click();
    await settle();
    expect(api.of("list_models")).toEqual([
      [{ base_url: "https://api.deepseek.com/v1", model: "deepseek-chat", api_key: { action: "set", value: "sk-ds" }, extra_headers: {} }],
    ]);
    expect(api.of("save_settings")).toEqual([]);
    const list = q<HTMLSelectElement>('[data-testid="model-list"]');
    expect([...list.options].map((o) => o.value)).toEqual(["deepseek-chat", "deepseek-reasoner"]);
    list.value = "deepseek-reasoner";
    list.dispatchEvent(new Event("change"));
    expect((await save()).model.model).toBe("deepseek-reasoner");
  });

  it("takes the history budget from the chosen model's context window, unless the user typed one", async () => {
    api.models = [
      { id: "deepseek-chat", context_tokens: 65536, history_budget: 49152 },
      { id: "deepseek-reasoner", context_tokens: null, history_budget: null },
    ];
    q<HTMLButtonElement>('[data-testid="test-models"]').click();
    await settle();
    expect(q('[data-testid="model-context"]').textContent).toContain("65,536");
    expect(q<HTMLInputElement>('[data-testid="history-budget"]').value).toBe("49152");
    // A model whose window is not told leaves the budget as it was.
    const list = q<HTMLSelectElement>('[data-testid="model-list"]');
    list.value = "deepseek-reasoner";
    list.dispatchEvent(new Event("change"));
    expect(q('[data-testid="model-context"]').hidden).toBe(true);
    expect((await save()).history_token_budget).toBe(49152);

    await mount();
    input('[data-testid="history-budget"]', "30000");
    q<HTMLButtonElement>('[data-testid="test-models"]').click();
    await settle();
    expect(q<HTMLInputElement>('[data-testid="history-budget"]').value).toBe("30000");
    expect((await save()).history_token_budget).toBe(30000);
  });
});

describe("adding a UCP merchant by its address", () => {
  it("adds it through the core and draws the servers again with it", async () => {
    api.merchantAdded = {
      ...api.settings,
      mcp_servers: {
        ...api.settings.mcp_servers,
        "shop-example": { url: "https://shop.example/ucp/mcp", headers: {}, trusted: false, disabled: false, timeout_secs: null, ucp: { origin: "https://shop.example" } },
      },
    };
    input('[data-testid="merchant-address"]', " https://shop.example/phones ");
    q<HTMLButtonElement>('[data-testid="merchant-add"]').click();
    await settle();
    expect(api.of("add_ucp_merchant")).toEqual([["https://shop.example/phones"]]);
    expect(q('[data-testid="merchant-added"]').textContent).toContain("已添加商家");
    const names = [...root.querySelectorAll('[data-testid="server-form"]')].map((form) => form.getAttribute("data-name"));
    expect(names).toContain("shop-example");
  });

  it("says why the core refused, and adds nothing while changes are unsaved", async () => {
    api.merchantAdded = Object.assign(new Error("the merchant cannot be added"), { code: "merchant_profile", message: "the merchant cannot be added" });
    input('[data-testid="merchant-address"]', "http://shop.example");
    q<HTMLButtonElement>('[data-testid="merchant-add"]').click();
    await settle();
    expect(q('[data-testid="merchant-error"]').textContent).toBe("无法添加这个商家：读不到它的 UCP 资料，或资料不可用。");

    input('[data-testid="card-expiry"]', "45");
    q<HTMLButtonElement>('[data-testid="merchant-add"]').click();
    await settle();
    expect(q('[data-testid="merchant-error"]').textContent).toBe("请先保存或放弃未保存的更改，再添加商家。");
    expect(api.of("add_ucp_merchant")).toHaveLength(1);
  });
});
