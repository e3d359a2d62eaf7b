// The model provider form, shared by the first-run screen and the settings'
// Model section: a provider (presets fill the base URL), the API key, "Test"
// (the core lists the provider's models with the settings as edited, nothing
// saved) and the model chosen from that list; the base URL, a model name
// typed by hand and extra headers under "Advanced". It edits `draft` in
// place; `validate` reports what cannot be saved. The key and the headers'
// values are write-only: the page is told only which are set.

import type { Api } from "../api";
import { button, h } from "../dom";
import type { I18n } from "../i18n";
import type { ModelEdit, ModelInfo } from "../protocol";
import { PageMessage, showFailure } from "./error-text";
import { checkbox, field, select, textInput } from "./form";
import { secretField, secretMap } from "./secret-fields";

export interface Section {
  el: HTMLElement;
  /** Writes the form into the draft; returns a message when it cannot. */
  validate(): string | null;
}

export type ProviderId = "openai" | "deepseek" | "qwen" | "ollama" | "custom";

export const PROVIDERS: ReadonlyArray<{ id: Exclude<ProviderId, "custom">; baseUrl: string; model: string }> = [
  { id: "openai", baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini" },
  { id: "deepseek", baseUrl: "https://api.deepseek.com/v1", model: "deepseek-chat" },
  { id: "qwen", baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1", model: "qwen-plus" },
  { id: "ollama", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" },
];

/** The preset whose base URL this is, else "custom". */
export function providerOf(baseUrl: string): ProviderId {
  const url = baseUrl.trim().replace(/\/+$/, "");
  return PROVIDERS.find((p) => p.baseUrl === url)?.id ?? "custom";
}

export interface ModelSectionOptions {
  /** Open "Advanced" from the start (the settings screen shows everything). */
  advancedOpen: boolean;
  /** A model was chosen from the provider's list (its context window, when told). */
  onModelChosen?(model: ModelInfo): void;
}

export function modelSection(draft: ModelEdit, i18n: I18n, api: Api, options: ModelSectionOptions): Section {
  const { t } = i18n;

  const baseUrl = textInput(draft.base_url, (v) => {
    draft.base_url = v.trim();
    showProvider(providerOf(draft.base_url));
  }, { type: "url", "data-testid": "model-base-url", placeholder: "https://api.deepseek.com/v1" });
  const model = textInput(draft.model, (v) => (draft.model = v.trim()), {
    "data-testid": "model-name",
    placeholder: "deepseek-chat",
  });
  const key = secretField(draft.api_key !== null, i18n, t("settings.apiKey"), "model-api-key");
  const headers = secretMap(Object.keys(draft.extra_headers), ": ", i18n, "X-Header: value", "model-headers");

  const radios = new Map<ProviderId, HTMLInputElement>();
  const choose = (id: ProviderId): void => {
    const preset = PROVIDERS.find((p) => p.id === id);
    if (preset) {
      baseUrl.value = draft.base_url = preset.baseUrl;
      if (model.value.trim() === "") model.value = draft.model = preset.model;
    }
    showProvider(id);
    if (id === "custom") advanced.open = true;
  };
  const providers = h(
    "fieldset",
    { class: "providers", attrs: { "data-testid": "providers" } },
    h("legend", { text: t("provider.label") }),
    ...(["openai", "deepseek", "qwen", "ollama", "custom"] as const).map((id) => {
      const radio = h("input", {
        attrs: { type: "radio", name: "provider", value: id, "data-testid": `provider-${id}` },
        on: { change: () => radio.checked && choose(id) },
      });
      radios.set(id, radio);
      return h("label", { class: "provider" }, radio, h("span", { text: t(`provider.${id}`) }));
    }),
  );

  const keyField = field(
    t("settings.apiKey"),
    key.el,
    checkbox(t("settings.showKey"), false, (show) => (key.input.type = show ? "text" : "password")),
  );
  const noKey = h("p", { class: "section-help", text: t("provider.noKey"), attrs: { "data-testid": "no-key" } });
  const showProvider = (id: ProviderId): void => {
    for (const [other, radio] of radios) radio.checked = other === id;
    // A local Ollama takes no key; a stored one stays as it is.
    keyField.hidden = id === "ollama";
    noKey.hidden = id !== "ollama";
  };

  const testStatus = h("p", { class: "test-status", attrs: { role: "status", "data-testid": "test-status" } });
  const testError = h("p", { class: "save-error", attrs: { role: "alert", "data-testid": "test-error", hidden: true } });
  let listed: readonly ModelInfo[] = [];
  const contextNote = h("p", { class: "section-help", attrs: { "data-testid": "model-context", hidden: true } });
  const chooseListed = (id: string): void => {
    model.value = draft.model = id;
    const info = listed.find((m) => m.id === id);
    contextNote.hidden = info?.context_tokens == null;
    if (info?.context_tokens != null) {
      contextNote.textContent = t("provider.context", { tokens: info.context_tokens.toLocaleString("en-US") });
    }
    if (info) options.onModelChosen?.(info);
  };
  const list = select<string>([], "", chooseListed, {
    "data-testid": "model-list",
    "aria-label": t("provider.models"),
  });
  const listField = field(t("provider.models"), list, contextNote);
  listField.hidden = true;
  const showModels = (models: readonly ModelInfo[]): void => {
    listed = models;
    const ids = models.map((m) => m.id);
    list.replaceChildren(...ids.map((id) => h("option", { text: id, attrs: { value: id } })));
    listField.hidden = ids.length === 0;
    if (ids.length === 0) {
      advanced.open = true;
      testStatus.textContent = t("provider.empty");
      return;
    }
    // Keep the model already chosen when the provider lists it.
    const chosen = ids.includes(draft.model) ? draft.model : ids[0];
    list.value = chosen;
    chooseListed(chosen);
    testStatus.textContent = t("provider.found", { count: ids.length });
  };
  const test = button(t("provider.test"), async () => {
    showFailure(testError, null, i18n);
    const problem = validate();
    if (problem) {
      showFailure(testError, new PageMessage(problem), i18n);
      return;
    }
    test.disabled = true;
    testStatus.textContent = t("provider.testing");
    try {
      showModels(await api.listModels(structuredClone(draft)));
    } catch (failure) {
      testStatus.textContent = "";
      showFailure(testError, failure, i18n);
    } finally {
      test.disabled = false;
    }
  }, { class: "btn", testid: "test-models" });

  const advanced = h(
    "details",
    { class: "advanced", attrs: { "data-testid": "advanced" } },
    h("summary", { text: t("provider.advanced") }),
    field(t("settings.baseUrl"), baseUrl),
    field(t("settings.modelName"), model),
    field(t("settings.extraHeaders"), headers.el),
  );
  advanced.open = options.advancedOpen;

  const validate = (): string | null => {
    const parsed = headers.collect();
    if (!parsed.ok) return t("settings.invalidLine", { line: parsed.line });
    draft.extra_headers = parsed.value;
    draft.api_key = key.intent();
    return null;
  };

  showProvider(providerOf(draft.base_url));
  const el = h(
    "div",
    { class: "model-form" },
    h("p", { class: "section-help", text: t("settings.modelHelp") }),
    providers,
    keyField,
    noKey,
    h("div", { class: "test-row" }, test, testStatus),
    testError,
    listField,
    advanced,
  );
  return { el, validate };
}
