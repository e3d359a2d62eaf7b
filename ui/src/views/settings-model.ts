// The model provider form: base URL, model, API key, extra headers, with
// presets for the common OpenAI-compatible services. It edits `draft` in
// place; `validate` reports what cannot be saved. The key and the headers'
// values are write-only: the page is told only which are set.

import { button, h } from "../dom";
import type { I18n } from "../i18n";
import type { ModelEdit, ModelView } from "../protocol";
import { checkbox, field, textInput } from "./form";
import { secretField, secretMap } from "./secret-fields";

export interface Section {
  el: HTMLElement;
  /** Writes the form into the draft; returns a message when it cannot. */
  validate(): string | null;
}

export const PRESETS: ReadonlyArray<{ name: string; baseUrl: string; model: string }> = [
  { name: "OpenAI", baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini" },
  { name: "DeepSeek", baseUrl: "https://api.deepseek.com/v1", model: "deepseek-chat" },
  { name: "Qwen (DashScope)", baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1", model: "qwen-plus" },
  { name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" },
];

export function modelSection(view: ModelView, draft: ModelEdit, i18n: I18n): Section {
  const { t } = i18n;

  const baseUrl = textInput(draft.base_url, (v) => (draft.base_url = v.trim()), {
    type: "url",
    "data-testid": "model-base-url",
    placeholder: "https://api.deepseek.com/v1",
  });
  const model = textInput(draft.model, (v) => (draft.model = v.trim()), {
    "data-testid": "model-name",
    placeholder: "deepseek-chat",
  });
  const key = secretField(view.api_key_set, i18n, t("settings.apiKey"), "model-api-key");
  const headers = secretMap(view.extra_headers, ": ", i18n, "X-Header: value", "model-headers");

  const presets = h(
    "div",
    { class: "presets", attrs: { role: "group", "aria-label": t("settings.presets") } },
    ...PRESETS.map((preset) =>
      button(preset.name, () => {
        baseUrl.value = draft.base_url = preset.baseUrl;
        if (model.value.trim() === "") model.value = draft.model = preset.model;
      }, { class: "btn btn-small" }),
    ),
  );

  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.model") } },
    h("h3", { text: t("settings.model") }),
    h("p", { class: "section-help", text: t("settings.modelHelp") }),
    h("div", { class: "field" }, h("span", { class: "field-label", text: t("settings.presets") }), presets),
    field(t("settings.baseUrl"), baseUrl),
    field(t("settings.modelName"), model),
    field(
      t("settings.apiKey"),
      key.el,
      checkbox(t("settings.showKey"), false, (show) => (key.input.type = show ? "text" : "password")),
    ),
    field(t("settings.extraHeaders"), headers.el),
  );

  return {
    el,
    validate() {
      const parsed = headers.collect();
      if (!parsed.ok) return t("settings.invalidLine", { line: parsed.line });
      draft.extra_headers = parsed.value;
      draft.api_key = key.intent();
      return null;
    },
  };
}
