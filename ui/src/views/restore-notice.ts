// The notice a start shows when the core found its database damaged: what
// was restored and from when (or that it started afresh), and where the
// damaged file was kept. It stays until the shopper closes it.

import { button, formatTime, h } from "../dom";
import type { I18n } from "../i18n";
import type { DatabaseRestored } from "../protocol";

export function restoreNotice(i18n: I18n, restored: DatabaseRestored, onClose: () => void): HTMLElement {
  const { t } = i18n;
  const what =
    restored.restoredFrom === null
      ? t("restored.none")
      : t("restored.from", { time: formatTime(restored.restoredFrom, i18n.lang) });
  return h(
    "section",
    {
      class: "restore-notice",
      attrs: { role: "alert", "aria-label": t("restored.label"), "data-testid": "restore-notice" },
    },
    h("p", { text: what }),
    h("p", { class: "restore-notice-detail", text: t("restored.kept", { path: restored.damagedKeptAt }) }),
    button(t("restored.close"), onClose, { testid: "restore-notice-close" }),
  );
}
