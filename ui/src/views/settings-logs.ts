// Where the app's logs are, and a button that opens that folder in the
// OS's file manager (the shell does the opening).

import type { Api } from "../api";
import { button, h } from "../dom";
import type { I18n } from "../i18n";
import { showFailure } from "./error-text";

export function logsSection(api: Api, i18n: I18n): HTMLElement {
  const { t } = i18n;
  const error = h("p", { class: "save-error", attrs: { role: "alert", "data-testid": "open-logs-error", hidden: true } });
  const open = button(
    t("settings.openLogs"),
    async () => {
      error.hidden = true;
      open.disabled = true;
      try {
        await api.openLogsFolder();
      } catch (failure) {
        showFailure(error, failure, i18n);
        error.textContent = t("settings.openLogsFailed", { message: error.textContent });
      } finally {
        open.disabled = false;
      }
    },
    { testid: "open-logs" },
  );
  return h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.logs") } },
    h("h3", { text: t("settings.logs") }),
    h("p", { class: "section-help", text: t("settings.logsHelp") }),
    open,
    error,
  );
}
