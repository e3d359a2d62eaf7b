// Saving settings: validate the form, save_settings, then check_model, and
// say what happened next to the button (errors are shown, never dropped).
// While anything is unsaved the bar says so and stays in view (sticky).

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { ModelStatus, SettingsEdit, SettingsView } from "../protocol";
import { PageMessage, errorDetail, failureText, showFailure } from "./error-text";

export interface SaveBar {
  el: HTMLElement;
  showCheck(check: ModelStatus): void;
  /** Whether the form holds anything not saved yet. */
  setDirty(dirty: boolean): void;
}

export function describeCheck(check: ModelStatus, i18n: I18n): string {
  switch (check.state) {
    case "ok":
      return i18n.t("settings.modelOk");
    case "not_configured":
      return check.message ?? i18n.t("settings.modelNotConfigured");
    case "unreachable":
      return i18n.t("settings.modelUnreachable", { message: check.message ?? "" });
  }
}

export function saveBar(
  api: Api,
  i18n: I18n,
  /** The settings to save, or a message saying why they cannot be. */
  collect: () => SettingsEdit | string,
  onSaved: (saved: SettingsView, check: ModelStatus) => void,
  label?: string,
): SaveBar {
  const { t } = i18n;
  const status = h("p", { class: "save-status", attrs: { role: "status", "data-testid": "save-status" } });
  const error = h("p", { class: "save-error", attrs: { role: "alert", "data-testid": "save-error", hidden: true } });
  // A string is the page's own words (a field that does not parse).
  const showError = (failure: unknown): void => showFailure(error, typeof failure === "string" ? new PageMessage(failure) : failure, i18n);
  const showCheck = (check: ModelStatus): void => {
    status.textContent = describeCheck(check, i18n);
    status.dataset.state = check.state;
  };

  const unsaved = h("p", { class: "save-unsaved", text: t("settings.unsaved"), attrs: { "data-testid": "save-unsaved", hidden: true } });
  const save = button(label ?? t("settings.save"), async () => {
    showError(null);
    const settings = collect();
    if (typeof settings === "string") {
      showError(settings);
      return;
    }
    save.disabled = true;
    status.textContent = t("settings.saving");
    delete status.dataset.state;
    try {
      const saved = await api.saveSettings(settings);
      status.textContent = t("settings.saved");
      const check = await api.checkModel();
      showCheck(check);
      onSaved(saved, check);
    } catch (failure) {
      status.textContent = "";
      showError(failure);
    } finally {
      save.disabled = false;
    }
  }, { class: "btn btn-suggested", testid: "save-settings" });

  const el = h("div", { class: "save-bar", attrs: { "data-testid": "save-bar", "data-dirty": "false" } }, save, unsaved, status, error);
  const setDirty = (dirty: boolean): void => {
    el.dataset.dirty = String(dirty);
    unsaved.hidden = !dirty;
  };
  return { el, showCheck, setDirty };
}

/** JSON with object keys sorted, so two equal edits compare equal as text. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Reads the settings; on failure says so inside `slot` and resolves to null. */
export async function loadSettings(api: Api, i18n: I18n, slot: HTMLElement): Promise<SettingsView | null> {
  try {
    return await api.getSettings();
  } catch (error) {
    const message = i18n.t("settings.loadFailed", { message: failureText(error, i18n) });
    replace(slot, h("p", { class: "save-error", attrs: { role: "alert", title: errorDetail(error, i18n) }, text: message }));
    return null;
  }
}

/**
 * An edit that changes nothing: the view as the core sent it, every secret
 * kept. The forms write into it what the user changes.
 */
export function editOf(view: SettingsView): SettingsEdit {
  const { unencrypted: _derived, ...settings } = structuredClone(view);
  return settings;
}
