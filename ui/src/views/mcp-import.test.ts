import { beforeEach, describe, expect, it } from "vitest";

import { createI18n, type Lang } from "../i18n";
import { SECRET_MASK, type ImportPlan, type ServerEdit } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { settingsView } from "./settings";

let api: FakeApi;
let root: HTMLElement;

const PASTED = '{"mcpServers": {"remote notes": {"url": "https://notes.example.com/mcp"}, "bitselect": {"command": "bitselect-mcp"}}}';

const PLAN: ImportPlan = {
  format: "mcp_servers",
  fingerprint: "f-1",
  notes: [{ kind: "ignored_key", server: "weather", key: "autoApprove" }],
  servers: [
    {
      name: "bitselect-2",
      original_name: "bitselect",
      rename: "builtin",
      server: { command: "bitselect-mcp", args: ["--data-dir", "/srv/my shop"], env: { TOKEN: { action: "keep" }, PLAIN: { action: "keep" } }, trusted: false, disabled: true, timeout_secs: 30 },
      was_disabled: false,
      values: [
        { name: "TOKEN", from_variables: ["SHOP_TOKEN"], has_written_text: false },
        { name: "PLAIN", from_variables: [], has_written_text: true },
      ],
      variables: [{ name: "SHOP_TOKEN", set: false }],
    },
    {
      name: "remote-notes",
      original_name: "remote notes",
      rename: "invalid_name",
      server: { url: "https://notes.example.com/mcp", headers: { Authorization: { action: "keep" } }, trusted: false, disabled: true, timeout_secs: null },
      was_disabled: true,
      values: [{ name: "Authorization", from_variables: ["NOTES_TOKEN"], has_written_text: true }],
      variables: [],
    },
  ],
};

async function mount(lang: Lang = "zh-CN"): Promise<void> {
  const view = settingsView({ api, i18n: createI18n(lang) });
  root = view.el;
  document.body.replaceChildren(root);
  await view.load();
  q<HTMLButtonElement>('[data-testid="section-servers"]').click();
}

const q = <T extends HTMLElement>(sel: string): T => {
  const found = root.querySelector<T>(sel);
  if (!found) throw new Error(`no ${sel}`);
  return found;
};
const all = (sel: string): string[] => [...root.querySelectorAll(sel)].map((el) => el.textContent ?? "");

async function paste(text: string): Promise<void> {
  q<HTMLButtonElement>('[data-testid="import-servers"]').click();
  const area = q<HTMLTextAreaElement>('[data-testid="import-text"]');
  area.value = text;
  area.dispatchEvent(new Event("input"));
  q<HTMLButtonElement>('[data-testid="import-preview"]').click();
  await settle();
}

beforeEach(() => {
  api = new FakeApi();
});

describe("importing MCP servers", () => {
  it("opens a paste box and shows the plan: names, renames, each argument, URLs, env and headers by variable, trust and start off", async () => {
    await mount();
    expect(q('[data-testid="import-dialog"]').hidden).toBe(true);
    api.importPreview = { outcome: "plan", plan: PLAN };
    await paste(PASTED);
    expect(q('[data-testid="import-dialog"]').hidden).toBe(false);
    expect(api.of("preview_mcp_import")).toEqual([[PASTED]]);
    expect(api.of("save_settings")).toEqual([]);
    const servers = [...root.querySelectorAll<HTMLElement>('[data-testid="import-server"]')];
    expect(servers.map((s) => s.dataset.name)).toEqual(["bitselect-2", "remote-notes"]);
    const inside = (server: HTMLElement, testid: string) => [...server.querySelectorAll(`[data-testid="${testid}"]`)].map((el) => el.textContent);
    expect(inside(servers[0], "import-command")).toEqual(["bitselect-mcp"]);
    // Each argument on its own: the space inside "/srv/my shop" is not a split.
    expect(inside(servers[0], "import-arg")).toEqual(["--data-dir", "/srv/my shop"]);
    expect(servers[0].textContent).toContain("参数（2 个，逐个传给程序）");
    expect(servers[0].textContent).toContain("不受信任");
    expect(servers[0].textContent).toContain("添加后为停用");
    expect(servers[0].textContent).toContain("工具调用超时 30 秒");
    // Values name their variable; one written in the text is never shown.
    expect(inside(servers[0], "import-value")).toEqual(["TOKEN · 取自环境变量 SHOP_TOKEN", "PLAIN · 配置中写明的值（不显示）"]);
    expect(inside(servers[1], "import-url")).toEqual(["https://notes.example.com/mcp"]);
    expect(inside(servers[1], "import-value")).toEqual(["Authorization · 取自环境变量 NOTES_TOKEN，另有配置中写明的文字（不显示）"]);
    expect(servers[1].textContent).toContain("原配置中也是停用的");
    expect(servers[0].textContent).not.toContain("原配置中也是停用的");
    expect(all('[data-testid="import-rename"]')).toEqual([
      "“bitselect”是内置服务的名称，改名为“bitselect-2”",
      "原名“remote notes”含有不能使用的字符，改名为“remote-notes”",
    ]);
    expect(all('[data-testid="import-unset"]')).toEqual(["环境变量 SHOP_TOKEN 现在没有设置：设置之前这个服务无法启动。"]);
    expect(all('[data-testid="import-note"]')).toEqual(["服务“weather”：“autoApprove”不会导入（由本应用自己决定哪些调用需要确认）。"]);
    expect(q('[data-testid="import-apply"]').textContent).toBe("添加 2 个服务");
  });

  it("adds the previewed servers with the plan's fingerprint and draws the servers again from the core", async () => {
    await mount();
    api.importPreview = { outcome: "plan", plan: PLAN };
    const added: ServerEdit = { url: "https://notes.example.com/mcp", headers: {}, trusted: false, disabled: true, timeout_secs: null };
    api.imported = { "remote-notes": added };
    await paste(PASTED);
    q<HTMLButtonElement>('[data-testid="import-apply"]').click();
    await settle();
    expect(api.of("apply_mcp_import")).toEqual([[PASTED, "f-1"]]);
    expect(q('[data-testid="import-added"]').textContent).toContain("都是停用的");
    const forms = [...root.querySelectorAll('[data-testid="server-form"]')];
    expect(forms).toHaveLength(1);
    expect(forms[0].querySelector("legend")?.textContent).toBe("remote-notes");
    expect(forms[0].querySelector<HTMLInputElement>('[data-testid="server-disabled"]')?.checked).toBe(true);
  });

  it("reads a chosen .json file in the page and previews it", async () => {
    await mount();
    api.importPreview = { outcome: "plan", plan: PLAN };
    q<HTMLButtonElement>('[data-testid="import-servers"]').click();
    const file = q<HTMLInputElement>('[data-testid="import-file"]');
    const chosen = new File([PASTED], "claude_desktop_config.json", { type: "application/json" });
    Object.defineProperty(file, "files", { value: [chosen] });
    file.dispatchEvent(new Event("change"));
    await settle();
    expect(q<HTMLTextAreaElement>('[data-testid="import-text"]').value).toBe(PASTED);
    expect(api.of("preview_mcp_import")).toEqual([[PASTED]]);
    expect(root.querySelectorAll('[data-testid="import-server"]')).toHaveLength(2);
  });

  it("lists every problem in the user's language and offers nothing to add", async () => {
    api.importPreview = {
      outcome: "refused",
      problems: [
        { kind: "unknown_key", server: "notes", key: "cwd" },
        { kind: "json", line: 5, column: 5, message: "trailing comma" },
        { kind: "sse", server: "old" },
        { kind: "wrong_value", server: "a", key: "timeout", expected: "seconds" },
      ],
    };
    await mount();
    await paste("{");
    expect(all('[data-testid="import-problem"]')).toEqual([
      "服务“notes”：不认识的键“cwd”。",
      "第 5 行第 5 列不是有效的 JSON：trailing comma",
      "服务“old”使用旧的 SSE 传输方式，本应用不支持；请向它的提供者索取 streamable HTTP 地址。",
      "服务“a”：“timeout”应当是1 到 86400 之间的整数秒。",
    ]);
    expect(root.querySelector('[data-testid="import-apply"]')).toBeNull();

    await mount("en");
    await paste("{");
    expect(all('[data-testid="import-problem"]')[0]).toBe("Server “notes”: unknown key “cwd”.");
  });

  it("says so in the user's language when the plan changed since the preview, and adds nothing", async () => {
    await mount("en");
    api.importPreview = { outcome: "plan", plan: PLAN };
    api.imported = { code: "import_changed", message: "changed" };
    await paste(PASTED);
    q<HTMLButtonElement>('[data-testid="import-apply"]').click();
    await settle();
    const error = q('[data-testid="import-error"]');
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("The servers changed since the preview. Preview again before adding them.");
    expect(api.settings.mcp_servers).toEqual({});
  });

  it("does not import over unsaved changes", async () => {
    await mount();
    api.importPreview = { outcome: "plan", plan: PLAN };
    const base = q<HTMLInputElement>('[data-testid="model-base-url"]');
    base.value = "https://api.deepseek.com/v1";
    base.dispatchEvent(new Event("input"));
    await paste(PASTED);
    q<HTMLButtonElement>('[data-testid="import-apply"]').click();
    await settle();
    expect(api.of("apply_mcp_import")).toEqual([]);
    expect(q('[data-testid="import-error"]').textContent).toBe("请先保存或撤销未保存的修改，再导入。");
  });
});

describe("exporting MCP servers", () => {
  it("shows the core's mcpServers text to copy and names the secrets left empty", async () => {
    api.exported = {
      text: '{\n  "mcpServers": {\n    "gh": {\n      "command": "gh-mcp",\n      "args": [],\n      "env": {\n        "TOKEN": ""\n      }\n    }\n  }\n}',
      withheld: [{ server: "gh", kind: "env", name: "TOKEN", variable: null }],
    };
    await mount();
    q<HTMLButtonElement>('[data-testid="export-servers"]').click();
    await settle();
    expect(q<HTMLTextAreaElement>('[data-testid="export-text"]').value).toBe(api.exported.text);
    expect(q('[data-testid="export-withheld"]').textContent).toContain("gh · TOKEN");
    expect(root.querySelector('[data-testid="export-copy"]')).not.toBeNull();
    expect(root.querySelector('[data-testid="export-variables"]')).toBeNull();
  });

  it("names the variable to set for each secret of arguments and URLs, in the user's language", async () => {
    api.exported = {
      text: '{"mcpServers": {"notes": {"command": "npx", "args": ["--api-key", "${env:NOTES_API_KEY}"]}}}',
      withheld: [
        { server: "notes", kind: "arg", name: "api-key", variable: "NOTES_API_KEY" },
        { server: "remote", kind: "url_password", name: "password", variable: "REMOTE_PASSWORD" },
      ],
    };
    await mount();
    q<HTMLButtonElement>('[data-testid="export-servers"]').click();
    await settle();
    expect(q('[data-testid="export-variables"]').textContent).toBe(
      "参数和地址中的密钥以环境变量导出，请在目标应用的环境中设置这些变量：NOTES_API_KEY（notes · api-key）、REMOTE_PASSWORD（remote · 地址中的密码）",
    );
    expect(root.querySelector('[data-testid="export-withheld"]')).toBeNull();

    await mount("en");
    q<HTMLButtonElement>('[data-testid="export-servers"]').click();
    await settle();
    expect(q('[data-testid="export-variables"]').textContent).toBe(
      "Secrets in arguments and URLs are exported as environment variables; set these variables where you paste this: NOTES_API_KEY (notes · api-key), REMOTE_PASSWORD (remote · the URL's password)",
    );
  });
});

describe("a server's secret arguments in the import preview", () => {
  it("are shown as the mask the core sends in their place", async () => {
    const [first] = PLAN.servers;
    const server = { ...first.server, args: ["--api-key", SECRET_MASK] } as ServerEdit;
    api.importPreview = { outcome: "plan", plan: { ...PLAN, servers: [{ ...first, server }] } };
    await mount();
    await paste(PASTED);
    expect(all('[data-testid="import-arg"]')).toEqual(["--api-key", SECRET_MASK]);
  });
});
