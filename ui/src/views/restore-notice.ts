// The notice a start shows when the core found a database damaged: for
// each (the assistant's, the local shop's), what was restored and from
// when, or that it started afresh, and where the damaged file was kept.
// It stays until the shopper closes it.

import { button, formatTime, h } from "../dom";
import type { I18n } from "../i18n";
import type { DatabaseRestored } from "../protocol";

export function restoreNotice(i18n: I18n, restored: DatabaseRestored[], onClose: () => void): HTMLElement {
  const { t } = i18n;
  const lines = restored.flatMap((one) => {
    const which = t(one.database === "shop" ? "restored.shop" : "restored.assistant");
    const what =
      one.restoredFrom === null
        ? t("restored.none", { which })
        : t("restored.from", { which, time: formatTime(one.restoredFrom, i18n.lang) });
    return [
      h("p", { text: what }),
      h("p", { class: "restore-notice-detail", text: t("restored.kept", { path: one.damagedKeptAt }) }),
    ];
  });
  return h(
    "section",
    {
      class: "restore-notice",
      attrs: { role: "alert", "aria-label": t("restored.label"), "data-testid": "restore-notice" },
    },
    ...lines,
    button(t("restored.close"), onClose, { testid: "restore-notice-close" }),
  );
}
