// Shown when check_model() is not "ok": what the assistant does and that it
// always asks first, then the provider form (choose a provider, enter the
// key, "Test" fills the model list, base URL and headers under "Advanced").
// "Done" saves and checks the model; once it answers, the chat opens.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { ModelStatus } from "../protocol";
import { describeCheck, editOf, loadSettings, saveBar } from "./save-bar";
import { modelSection } from "./settings-model";

export interface FirstRunDeps {
  api: Api;
  i18n: I18n;
  check: ModelStatus;
  /** Leave for the chat (after the model answers, or when the user chooses to). */
  onDone(): void;
}

export function firstRunView(deps: FirstRunDeps): { el: HTMLElement; load(): Promise<void> } {
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
    const settings = await loadSettings(api, i18n, form);
    if (!settings) return;
    const draft = editOf(settings);
    const model = modelSection(settings.model, draft.model, i18n, api, {
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
    replace(form, model.el, bar.el);
  };
  return { el, load };
}
