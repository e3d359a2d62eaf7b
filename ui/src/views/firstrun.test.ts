import { beforeEach, describe, expect, it } from "vitest";

import { createI18n, type Lang } from "../i18n";
import type { Appearance } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { firstRunView } from "./firstrun";

let api: FakeApi;
let root: HTMLElement;
let done: number;
let languages: Appearance[];

async function mount(lang: Lang = "zh-CN"): Promise<void> {
  const view = firstRunView({
    api,
    i18n: createI18n(lang),
    check: { state: "not_configured", message: null },
    onDone: () => (done += 1),
    onLanguage: (appearance) => languages.push(appearance),
  });
  root = view.el;
  document.body.replaceChildren(root);
  await view.load();
}

const q = <T extends HTMLElement = HTMLElement>(testid: string): T => {
  const found = root.querySelector<T>(`[data-testid="${testid}"]`);
  if (!found) throw new Error(`no ${testid}`);
  return found;
};
const type = (testid: string, value: string): void => {
  const el = q<HTMLInputElement>(testid);
  el.value = value;
  el.dispatchEvent(new Event("input"));
};

beforeEach(async () => {
  api = new FakeApi();
  api.check = { state: "not_configured", message: null };
  done = 0;
  languages = [];
  await mount();
});

describe("the first run", () => {
  it("offers the window's languages first and saves the one chosen at once", async () => {
    const choice = q<HTMLSelectElement>("first-run-language");
    expect([...choice.options].map((o) => o.textContent)).toEqual(["中文", "English"]);
    expect(choice.value).toBe("zh-CN");
    choice.value = "en";
    choice.dispatchEvent(new Event("change"));
    await settle();
    expect(api.settings.appearance.language).toBe("en");
    expect(languages.map((a) => a.language)).toEqual(["en"]);
    expect(done).toBe(0);
  });

  it("says what the assistant can do and that it always asks first, in both languages", async () => {
    expect(q("first-run-about").textContent).toContain("总是先把要做的事给你看");
    await mount("en");
    expect(q("first-run-about").textContent).toContain("always shows you exactly what it is about to do");
  });

  it("fills the base URL from the chosen provider, and keeps base URL and headers under Advanced", () => {
    const advanced = q<HTMLDetailsElement>("advanced");
    expect(advanced.open).toBe(false);
    expect(advanced.contains(q("model-base-url"))).toBe(true);
    expect(advanced.contains(q("model-headers"))).toBe(true);
    const cases: Array<[string, string]> = [
      ["openai", "https://api.openai.com/v1"],
      ["deepseek", "https://api.deepseek.com/v1"],
      ["qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1"],
      ["ollama", "http://127.0.0.1:11434/v1"],
    ];
    for (const [provider, url] of cases) {
      q<HTMLInputElement>(`provider-${provider}`).click();
      expect(q<HTMLInputElement>("model-base-url").value).toBe(url);
    }
  });

  it("asks no key of a local Ollama, and opens Advanced for a custom provider", () => {
    q<HTMLInputElement>("provider-ollama").click();
    expect(q("model-api-key").closest<HTMLElement>(".field")?.hidden).toBe(true);
    expect(q("no-key").hidden).toBe(false);
    q<HTMLInputElement>("provider-qwen").click();
    expect(q("model-api-key").closest<HTMLElement>(".field")?.hidden).toBe(false);
    q<HTMLInputElement>("provider-custom").click();
    expect(q<HTMLDetailsElement>("advanced").open).toBe(true);
  });

  it("starts on the provider whose base URL is stored", async () => {
    api.settings.model.base_url = "https://api.deepseek.com/v1";
    await mount();
    expect(q<HTMLInputElement>("provider-deepseek").checked).toBe(true);
    api.settings.model.base_url = "https://llm.example.com/v1";
    await mount();
    expect(q<HTMLInputElement>("provider-custom").checked).toBe(true);
  });

  it("sets the history budget from the model's context window when the provider tells it", async () => {
    api.models = [{ id: "qwen-plus", context_tokens: 131072, history_budget: 98304 }];
    q<HTMLInputElement>("provider-qwen").click();
    type("model-api-key", "sk-dash");
    q("test-models").click();
    await settle();
    expect(q("model-context").textContent).toBe("上下文窗口 131,072 tokens；对话历史的预算按它设定（可在“确认”中修改）。");
    q("save-settings").click();
    await settle();
    expect(api.settings.history_token_budget).toBe(98304);
  });

  it("fills the model list from the provider with the key typed, then Done saves and opens the chat", async () => {
    api.models = ["qwen-max", "qwen-plus", "qwen-turbo"];
    q<HTMLInputElement>("provider-qwen").click();
    type("model-api-key", "sk-dash");
    q("test-models").click();
    await settle();
    expect(api.of("list_models")).toEqual([
      [{ base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1", model: "qwen-plus", api_key: { action: "set", value: "sk-dash" }, extra_headers: {} }],
    ]);
    const list = q<HTMLSelectElement>("model-list");
    expect([...list.options].map((o) => o.value)).toEqual(["qwen-max", "qwen-plus", "qwen-turbo"]);
    expect(list.value).toBe("qwen-plus");
    expect(q("test-status").textContent).toBe("服务可用，列出了 3 个模型。");
    list.value = "qwen-max";
    list.dispatchEvent(new Event("change"));
    api.check = { state: "ok", message: null };
    q("save-settings").click();
    await settle();
    expect(q("save-settings").textContent).toBe("完成");
    expect(api.settings.model).toMatchObject({ base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1", model: "qwen-max", api_key: { action: "keep" } });
    expect(done).toBe(1);
  });

  it("says in the user's language why the models could not be listed", async () => {
    const cases: Array<[string, string, string]> = [
      ["model_unauthorized", "API 密钥被拒绝，请检查密钥。", "The provider refused the API key. Check the key."],
      ["model_unreachable", "连接不到这个地址，请检查接口地址和网络。", "Nothing answers at this address. Check the base URL and the network."],
      ["model_list_malformed", "这个地址回答的不是模型列表，请检查接口地址（通常以 /v1 结尾）。", "This address did not answer with a model list. Check the base URL (it usually ends in /v1)."],
      ["model_timeout", "模型服务没有及时回应，请稍后再试。", "The model provider did not answer in time. Try again later."],
    ];
    for (const [code, zh, en] of cases) {
      for (const [lang, sentence] of [["zh-CN", zh], ["en", en]] as const) {
        api.models = { code: code as never, message: `HTTP detail for ${code}` };
        await mount(lang);
        q("test-models").click();
        await settle();
        const error = q("test-error");
        expect(error.hidden).toBe(false);
        expect(error.textContent).toBe(sentence);
        expect(error.title).toContain(`HTTP detail for ${code}`);
        expect(q<HTMLElement>("model-list").closest<HTMLElement>(".field")?.hidden).toBe(true);
      }
    }
  });

  it("opens Advanced for a model name when the provider lists none", async () => {
    api.models = [];
    q("test-models").click();
    await settle();
    expect(q<HTMLDetailsElement>("advanced").open).toBe(true);
    expect(q("test-status").textContent).toBe("服务没有列出模型，请在“高级”里填写模型名称。");
  });
});
