// The settings screen in sections (model, servers, tools, confirmations,
// appearance), one shown at a time under a tab list. It edits the settings
// as the core shows them (no secret values) and saves them, the language
// and theme included, in one save_settings call, each secret as kept, set
// or cleared. The save bar below the sections stays in view while anything
// is unsaved.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import { LANGS, type I18n } from "../i18n";
import type { ModelStatus, SettingsEdit, SettingsView, ToolPolicyView } from "../protocol";
import { THEMES } from "../theme";
import { field, positiveInt, select, textInput } from "./form";
import { editOf, loadSettings, saveBar, stableJson } from "./save-bar";
import { mcpImportSection } from "./mcp-import";
import { merchantSection } from "./settings-merchant";
import { logsSection } from "./settings-logs";
import { modelSection, type Section } from "./settings-model";
import { serversSection } from "./settings-servers";
import { shopSection, signInsSection } from "./settings-shop";
import { toolsSection } from "./settings-tools";

export interface SettingsDeps {
  api: Api;
  i18n: I18n;
  /** The settings were saved (the app applies their language and theme). */
  onSaved?(saved: SettingsView, check: ModelStatus): void;
}

export interface SettingsScreen {
  el: HTMLElement;
  load(): Promise<void>;
}

export const SECTIONS = ["model", "servers", "tools", "confirmations", "appearance"] as const;
export type SectionId = (typeof SECTIONS)[number];

export function settingsView(deps: SettingsDeps): SettingsScreen {
  const { api, i18n } = deps;
  const { t } = i18n;
  const body = h("div", { class: "settings-body" });
  let current: SectionId = "model";
  const tabs = new Map<SectionId, HTMLButtonElement>();
  const panels = new Map<SectionId, HTMLElement>();
  const showSection = (id: SectionId): void => {
    current = id;
    for (const [other, tab] of tabs) {
      tab.setAttribute("aria-selected", String(other === id));
      tab.tabIndex = other === id ? 0 : -1;
    }
    for (const [other, panel] of panels) panel.hidden = other !== id;
  };
  const tabList = h(
    "div",
    { class: "settings-tabs", attrs: { role: "tablist", "aria-label": t("sections.label") } },
    ...SECTIONS.map((id) => {
      const tab = button(t(`sections.${id}`), () => showSection(id), { class: "settings-tab", testid: `section-${id}` });
      tab.id = `settings-tab-${id}`;
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", `settings-panel-${id}`);
      tabs.set(id, tab);
      return tab;
    }),
  );
  const el = h(
    "section",
    { class: "page settings", attrs: { "data-testid": "settings-view", "aria-labelledby": "settings-heading" } },
    h("h2", { text: t("settings.heading"), attrs: { id: "settings-heading" } }),
    tabList,
    body,
  );

  const load = async (): Promise<void> => {
    const settings = await loadSettings(api, i18n, body);
    if (!settings) return;
    // A missing tool list (servers not up) still leaves the rest editable.
    const tools: ToolPolicyView[] = await api.listTools().catch(() => []);
    render(settings, tools);
  };

  // Whether the form drawn now holds unsaved changes (set by each render).
  let unsaved = (): boolean => false;
  // The tools listed last, for a screen drawn again when listing fails.
  let listed: ToolPolicyView[] = [];
  // One import section for the page's life: what it said ("added, turned
  // off") stays when the screen is drawn again from what the core holds.
  // Servers the core added and saved (an import, a merchant): the screen
  // is drawn again from what it now holds.
  const redraw = (saved: SettingsView): void =>
    void api.listTools().then(
      (fresh) => render(saved, fresh),
      () => render(saved, listed),
    );
  const importSection = mcpImportSection({ api, i18n, unsaved: () => unsaved(), onImported: redraw });

  const merchant = merchantSection({ api, i18n, unsaved: () => unsaved(), onAdded: redraw });

  const render = (settings: SettingsView, tools: ToolPolicyView[], check?: ModelStatus): void => {
    listed = tools;
    const draft: SettingsEdit = editOf(settings);
    const builtin = [...new Set(tools.map((tool) => tool.server))].filter((name) => !(name in draft.mcp_servers));
    const limits = limitsSection(draft, i18n);
    const model = modelSection(draft.model, i18n, api, {
      advancedOpen: true,
      onModelChosen: (info) => limits.suggestHistoryBudget(info.history_budget),
    });
    const servers = serversSection(
      draft.mcp_servers,
      settings.unencrypted,
      builtin,
      i18n,
      (value, renamed) => {
        draft.mcp_servers = value;
        draft.renamed = renamed;
      },
      () => api.serverStatus(),
    );
    const shop = shopSection(draft, i18n);
    const sections: Section[] = [model, servers, limits, appearanceSection(draft, i18n), shop];
    const collect = (): SettingsEdit | string => {
      for (const section of sections) {
        const problem = section.validate();
        if (problem) return problem;
      }
      return structuredClone(draft);
    };
    const bar = saveBar(api, i18n, collect, (saved, check) => {
      deps.onSaved?.(saved, check);
      // Shown again from what the core now holds: typed secrets become "set".
      void api.listTools().then(
        (fresh) => render(saved, fresh, check),
        () => render(saved, tools, check),
      );
    });
    // Accepting a changed definition changes what the policy makes of the tool.
    const definitions = { api, onAccepted: () => refreshTools() };
    const refreshTools = (): void =>
      void api.listTools().then(
        (fresh) => replace(toolsSlot, toolsSection(draft.tool_overrides, fresh, i18n, definitions)),
        () => undefined,
      );
    const toolsSlot = h("div", {}, toolsSection(draft.tool_overrides, tools, i18n, definitions));
    const content: Record<SectionId, HTMLElement[]> = {
      model: [h("section", { class: "settings-section", attrs: { "aria-label": t("settings.model") } }, h("h3", { text: t("settings.model") }), model.el)],
      servers: [shop.el, signInsSection(api, i18n), servers.el, merchant, importSection, logsSection(api, i18n)],
      tools: [toolsSlot],
      confirmations: [sections[2].el],
      appearance: [sections[3].el],
    };
    panels.clear();
    const panelEls = SECTIONS.map((id) => {
      const panel = h(
        "div",
        { class: "settings-panel", attrs: { role: "tabpanel", id: `settings-panel-${id}`, "aria-labelledby": `settings-tab-${id}`, "data-testid": `settings-panel-${id}` } },
        ...content[id],
      );
      panels.set(id, panel);
      return panel;
    });
    // A fresh element per render, so no listener outlives its form.
    const form = h("div", { class: "settings-form" }, ...panelEls, bar.el);
    replace(body, form);
    showSection(current);
    if (check) bar.showCheck(check);

    // Unsaved is "differs from what was loaded", so undoing a change clears it.
    const baseline = stableJson(collect());
    unsaved = () => stableJson(collect()) !== baseline;
    const update = (): void => {
      const now = collect();
      bar.setDirty(typeof now === "string" || stableJson(now) !== baseline);
    };
    // Captured, so a field's event is seen before any handler stops it, and
    // checked in a later task: a browser runs microtasks between listeners of
    // a user's event, before the field's own handler has written the draft.
    for (const type of ["input", "change", "click"]) {
      form.addEventListener(
        type,
        (event) => {
          if (!bar.el.contains(event.target as Node)) setTimeout(update, 0);
        },
        true,
      );
    }
  };

  return { el, load };
}

/** Card expiry and run limits, as whole numbers. */
function limitsSection(draft: SettingsEdit, i18n: I18n): Section & { suggestHistoryBudget(budget: number | null): void } {
  const { t } = i18n;
  const fields = [
    { key: "settings.cardExpiry" as const, text: String(Math.round(draft.card_expiry_secs / 60)), set: (n: number) => (draft.card_expiry_secs = n * 60), testid: "card-expiry" },
    { key: "settings.maxTurns" as const, text: String(draft.max_turns_per_run), set: (n: number) => (draft.max_turns_per_run = n), testid: "max-turns" },
    { key: "settings.historyBudget" as const, text: String(draft.history_token_budget), set: (n: number) => (draft.history_token_budget = n), testid: "history-budget" },
  ];
  const budget = fields[2];
  // A budget the user typed is theirs: a model chosen later does not change it.
  let budgetTyped = false;
  const inputs = fields.map((f) =>
    textInput(
      f.text,
      (v) => {
        f.text = v;
        if (f === budget) budgetTyped = true;
      },
      { inputmode: "numeric", "data-testid": f.testid },
    ),
  );
  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.limits") } },
    h("h3", { text: t("settings.limits") }),
    ...fields.map((f, i) => field(t(f.key), inputs[i])),
  );
  return {
    el,
    suggestHistoryBudget(suggested) {
      if (suggested === null || budgetTyped) return;
      budget.text = inputs[2].value = String(suggested);
      draft.history_token_budget = suggested;
    },
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

/** Language (the system's until one is chosen) and theme, saved with the rest. */
function appearanceSection(draft: SettingsEdit, i18n: I18n): Section {
  const { t } = i18n;
  type LangChoice = "system" | (typeof LANGS)[number];
  const language = select<LangChoice>(
    [{ value: "system", label: t("lang.system") }, ...LANGS.map((lang) => ({ value: lang, label: t(`lang.${lang}`) }))],
    draft.appearance.language ?? "system",
    (choice) => (draft.appearance.language = choice === "system" ? null : choice),
    { "data-testid": "language" },
  );
  const theme = select(
    THEMES.map((value) => ({ value, label: t(`theme.${value}`) })),
    draft.appearance.theme,
    (value) => (draft.appearance.theme = value),
    { "data-testid": "theme" },
  );
  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("sections.appearance") } },
    h("h3", { text: t("sections.appearance") }),
    field(t("settings.language"), language),
    field(t("settings.theme"), theme),
  );
  return { el, validate: () => null };
}
