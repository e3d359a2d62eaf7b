import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { Settings, ToolPolicyView } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
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
    ...facts,
  };
}

const TOOLS: ToolPolicyView[] = [
  tool("search_product", { read_only: true, verdict: "allow" }),
  tool("update_cart_item", { auto_approve_allowed: true }),
  tool("cancel_order", { destructive: true }),
  tool("pay_order", { destructive: true, moves_money: true }),
  tool("submit_ticket", {}),
  { ...tool("notes_write", {}), qualified_name: "notes__write", server: "notes", trusted: false },
];

async function mount(): Promise<void> {
  const view = settingsView({ api, i18n, onLanguage: () => undefined, theme: "system", onTheme: () => undefined });
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

async function save(): Promise<Settings> {
  q<HTMLButtonElement>('[data-testid="save-settings"]').click();
  await settle();
  const all = api.of("save_settings");
  const saved = all[all.length - 1];
  if (!saved) throw new Error("nothing saved");
  return saved[0] as Settings;
}

beforeEach(async () => {
  api = new FakeApi();
  api.tools = TOOLS;
  api.settings.mcp_servers = { notes: { command: "npx", args: ["notes-mcp"], env: { TOKEN: "t" }, trusted: false } };
  await mount();
});

describe("model provider settings", () => {
  it("saves base URL, model, key and extra headers, then checks the model", async () => {
    input('[data-testid="model-base-url"]', "https://api.deepseek.com/v1");
    input('[data-testid="model-name"]', "deepseek-chat");
    input('[data-testid="model-api-key"]', "sk-secret");
    expect(q<HTMLInputElement>('[data-testid="model-api-key"]').type).toBe("password");
    const headers = [...root.querySelectorAll("textarea")][0];
    headers.value = "X-Org: bit";
    headers.dispatchEvent(new Event("input"));
    const saved = await save();
    expect(saved.model).toEqual({
      base_url: "https://api.deepseek.com/v1",
      model: "deepseek-chat",
      api_key: "sk-secret",
      extra_headers: { "X-Org": "bit" },
    });
    expect(api.of("check_model")).toHaveLength(1);
    expect(q('[data-testid="save-status"]').textContent).toBe("模型可以连接。");
  });

  it("shows a refused save's message", async () => {
    api.failNext = { code: "invalid_settings", message: "the model base URL \"ftp://x\" is not an http(s) URL" };
    await save();
    const error = q('[data-testid="save-error"]');
    expect(error.hidden).toBe(false);
    expect(error.textContent).toContain("ftp://x");
  });
});

describe("MCP servers", () => {
  it("lists the built-in shop read-only and keeps the user's servers in the mcpServers shape", async () => {
    expect([...root.querySelectorAll('[data-testid="builtin-server"]')].map((li) => li.textContent)).toEqual([
      "shop · 内置 · 受信任",
    ]);
    expect(root.querySelectorAll('[data-testid="server-form"]')).toHaveLength(1);
    q<HTMLButtonElement>('[data-testid="add-server"]').click();
    const forms = root.querySelectorAll('[data-testid="server-form"]');
    const added = forms[1];
    const name = added.querySelector<HTMLInputElement>("input")!;
    name.value = "remote";
    name.dispatchEvent(new Event("input"));
    const kind = added.querySelector<HTMLSelectElement>("select")!;
    kind.value = "http";
    kind.dispatchEvent(new Event("change"));
    const url = added.querySelector<HTMLInputElement>('input[type="url"]')!;
    url.value = "http://127.0.0.1:8080/mcp";
    url.dispatchEvent(new Event("input"));
    added.querySelector<HTMLInputElement>('input[type="checkbox"]')!.click();
    const saved = await save();
    expect(saved.mcp_servers).toEqual({
      notes: { command: "npx", args: ["notes-mcp"], env: { TOKEN: "t" }, trusted: false },
      remote: { url: "http://127.0.0.1:8080/mcp", headers: {}, trusted: true },
    });
  });

  it("refuses a server without a name before saving", async () => {
    q<HTMLButtonElement>('[data-testid="add-server"]').click();
    q<HTMLButtonElement>('[data-testid="save-settings"]').click();
    await settle();
    expect(api.of("save_settings")).toEqual([]);
    expect(q('[data-testid="save-error"]').textContent).toBe("每个服务都需要名称。");
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
    expect(error.textContent).toContain("shop__pay_order");
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
