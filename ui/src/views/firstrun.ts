// Shown when check_model() is not "ok": what the assistant does and that it
// always asks first, the language to use (saved at once: the page is drawn
// again in it), then the provider form (choose a provider, enter the key,
// "Test" fills the model list, base URL and headers under "Advanced").
// "Done" saves and checks the model; once it answers, the chat opens.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import { LANGS, type I18n, type Lang } from "../i18n";
import type { Appearance, ModelStatus, SettingsView } from "../protocol";
import { showFailure } from "./error-text";
import { field, select } from "./form";
import { describeCheck, editOf, loadSettings, saveBar } from "./save-bar";
import { modelSection } from "./settings-model";

export interface FirstRunDeps {
  api: Api;
  i18n: I18n;
  check: ModelStatus;
  /** The settings as the shell handed them at start: the form is then made at once, not after asking. */
  settings?: SettingsView;
  /** Leave for the chat (after the model answers, or when the user chooses to). */
  onDone(): void;
  /** A language was chosen and saved: the window is drawn again in it. */
  onLanguage(appearance: Appearance): void;
}

export interface FirstRunView {
  el: HTMLElement;
  load(): Promise<void>;
  /** Puts keyboard focus on the language choice (once loaded). */
  focusLanguage(): void;
}

export function firstRunView(deps: FirstRunDeps): FirstRunView {
  const { api, i18n } = deps;
  const { t } = i18n;
  const form = h("div", { class: "first-run-form" });
  const el = h(
    "section",
    { class: "page first-run", attrs: { "data-testid": "first-run", "aria-labelledby": "first-run-heading" } },
    h("h2", { text: t("firstRun.heading"), attrs: { id: "first-run-heading" } }),
    h("p", { class: "first-run-about", text: t("firstRun.about"), attrs: { "data-testid": "first-run-about" } }),
    h("p", { class: "first-run-status", attrs: { role: "status" }, text: t("firstRun.status", { message: describeCheck(deps.check, i18n) }) }),
    h("p", { text: t("firstRun.steps") }),
    form,
    button(t("firstRun.continue"), () => deps.onDone(), { class: "btn btn-flat", testid: "first-run-skip" }),
  );

  const load = async (): Promise<void> => {
    const settings = deps.settings ?? (await loadSettings(api, i18n, form));
    if (!settings) return;
    const draft = editOf(settings);
    const language = languageChoice(api, i18n, settings, deps.onLanguage);
    const model = modelSection(draft.model, i18n, api, {
      advancedOpen: false,
      // A first setup takes the history budget from the model's window.
      onModelChosen: (info) => {
        if (info.history_budget !== null) draft.history_token_budget = info.history_budget;
      },
    });
    const bar = saveBar(
      api,
      i18n,
      () => model.validate() ?? structuredClone(draft),
      (_saved, check) => {
        if (check.state === "ok") deps.onDone();
      },
      t("firstRun.done"),
    );
    replace(form, language, model.el, bar.el);
  };
  const focusLanguage = (): void => form.querySelector<HTMLSelectElement>('[data-testid="first-run-language"]')?.focus();
  return { el, load, focusLanguage };
}

/** The language the window speaks, this page's one first: saved when chosen. */
function languageChoice(api: Api, i18n: I18n, settings: SettingsView, onLanguage: (appearance: Appearance) => void): HTMLElement {
  const { t } = i18n;
  const error = h("p", { class: "save-error", attrs: { role: "alert", hidden: true } });
  const choice = select<Lang>(
    LANGS.map((lang) => ({ value: lang, label: t(`lang.${lang}`) })),
    i18n.lang,
    async (lang) => {
      showFailure(error, null, i18n);
      const edit = editOf(settings);
      edit.appearance.language = lang;
      try {
        const saved = await api.saveSettings(edit);
        onLanguage(saved.appearance);
      } catch (failure) {
        showFailure(error, failure, i18n);
      }
    },
    { "data-testid": "first-run-language" },
  );
  return h("div", { class: "first-run-language" }, field(t("settings.language"), choice), error);
}
