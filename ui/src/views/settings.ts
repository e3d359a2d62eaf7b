// The settings screen: language, model provider, MCP servers, per-tool
// policy, card expiry and run limits. It edits the settings as the core
// shows them (no secret values) and saves them in one save_settings call,
// each secret as kept, set or cleared.

import type { Api } from "../api";
import { h, replace } from "../dom";
import { LANGS, type I18n, type Lang } from "../i18n";
import type { ModelStatus, SettingsEdit, SettingsView, ToolPolicyView } from "../protocol";
import { THEMES, type Theme } from "../theme";
import { field, positiveInt, select, textInput } from "./form";
import { editOf, loadSettings, saveBar } from "./save-bar";
import { logsSection } from "./settings-logs";
import { modelSection, type Section } from "./settings-model";
import { serversSection } from "./settings-servers";
import { toolsSection } from "./settings-tools";

export interface SettingsDeps {
  api: Api;
  i18n: I18n;
  onLanguage(lang: Lang): void;
  theme: Theme;
  onTheme(theme: Theme): void;
  onSaved?(check: ModelStatus): void;
}

export interface SettingsScreen {
  el: HTMLElement;
  load(): Promise<void>;
}

export function settingsView(deps: SettingsDeps): SettingsScreen {
  const { api, i18n } = deps;
  const { t } = i18n;
  const body = h("div", { class: "settings-body" });
  const language = select(
    LANGS.map((lang) => ({ value: lang, label: t(`lang.${lang}`) })),
    i18n.lang,
    (lang) => deps.onLanguage(lang),
    { "data-testid": "language" },
  );
  const theme = select(
    THEMES.map((value) => ({ value, label: t(`theme.${value}`) })),
    deps.theme,
    (value) => deps.onTheme(value),
    { "data-testid": "theme" },
  );
  const el = h(
    "section",
    { class: "page settings", attrs: { "data-testid": "settings-view", "aria-labelledby": "settings-heading" } },
    h("h2", { text: t("settings.heading"), attrs: { id: "settings-heading" } }),
    h("section", { class: "settings-section settings-inline" }, field(t("settings.language"), language), field(t("settings.theme"), theme)),
    body,
    logsSection(api, i18n),
  );

  const load = async (): Promise<void> => {
    const settings = await loadSettings(api, i18n, body);
    if (!settings) return;
    // A missing tool list (servers not up) still leaves the rest editable.
    const tools: ToolPolicyView[] = await api.listTools().catch(() => []);
    replace(body, ...form(settings, tools));
  };

  const form = (settings: SettingsView, tools: ToolPolicyView[]): HTMLElement[] => {
    const draft: SettingsEdit = editOf(settings);
    const builtin = [...new Set(tools.map((tool) => tool.server))].filter((name) => !(name in draft.mcp_servers));
    const sections: Section[] = [
      modelSection(settings.model, draft.model, i18n),
      serversSection(settings.mcp_servers, builtin, i18n, (servers) => (draft.mcp_servers = servers)),
      limitsSection(draft, i18n),
    ];
    const bar = saveBar(
      api,
      i18n,
      () => {
        for (const section of sections) {
          const problem = section.validate();
          if (problem) return problem;
        }
        return structuredClone(draft);
      },
      (_saved, check) => {
        deps.onSaved?.(check);
        refreshTools();
      },
    );
    // Accepting a changed definition changes what the policy makes of the tool.
    const definitions = { api, onAccepted: () => refreshTools() };
    const refreshTools = (): void =>
      void api.listTools().then(
        (fresh) => replace(toolsSlot, toolsSection(draft.tool_overrides, fresh, i18n, definitions)),
        () => undefined,
      );
    const toolsSlot = h("div", {}, toolsSection(draft.tool_overrides, tools, i18n, definitions));
    return [sections[0].el, sections[1].el, toolsSlot, sections[2].el, bar.el];
  };

  return { el, load };
}

/** Card expiry and run limits, as whole numbers. */
function limitsSection(draft: SettingsEdit, i18n: I18n): Section {
  const { t } = i18n;
  const fields = [
    { key: "settings.cardExpiry" as const, text: String(Math.round(draft.card_expiry_secs / 60)), set: (n: number) => (draft.card_expiry_secs = n * 60), testid: "card-expiry" },
    { key: "settings.maxTurns" as const, text: String(draft.max_turns_per_run), set: (n: number) => (draft.max_turns_per_run = n), testid: "max-turns" },
    { key: "settings.historyBudget" as const, text: String(draft.history_token_budget), set: (n: number) => (draft.history_token_budget = n), testid: "history-budget" },
  ];
  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.limits") } },
    h("h3", { text: t("settings.limits") }),
    ...fields.map((f) =>
      field(t(f.key), textInput(f.text, (v) => (f.text = v), { inputmode: "numeric", "data-testid": f.testid })),
    ),
  );
  return {
    el,
    validate() {
      for (const f of fields) {
        const n = positiveInt(f.text);
        if (n === null) return t("settings.invalidNumber", { field: t(f.key) });
        f.set(n);
      }
      return null;
    },
  };
}
