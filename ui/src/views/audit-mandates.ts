// The checkout mandates the shopper signed, in the audit view: for each, the
// merchant, the checkout, the amount approved, when, the order it became, and
// whether the signatures still hold when checked again (the device's over the
// checkout, the merchant's on it, and on its receipt). Text from a merchant
// goes in through textContent only.

import { formatTime, h, replace } from "../dom";
import type { I18n } from "../i18n";
import { formatFen } from "../money";
import type { Check, KeptMandate } from "../protocol";

function checkText(check: Check, i18n: I18n): string {
  return check.outcome === "holds" ? i18n.t("mandates.holds") : i18n.t("mandates.fails", { reason: check.reason });
}

function row(mandate: KeptMandate, i18n: I18n): HTMLElement {
  const { t } = i18n;
  const amount = mandate.total === null ? "—" : mandate.currency === "CNY" ? formatFen(BigInt(mandate.total)) : `${mandate.total} ${mandate.currency ?? ""}`;
  const { evidence } = mandate;
  const checks: Array<[string, Check]> = [
    [t("mandates.mandate"), evidence.mandate],
    [t("mandates.merchantSignature"), evidence.merchant_signature],
    ...(evidence.receipt === null ? [] : [[t("mandates.receipt"), evidence.receipt] as [string, Check]]),
  ];
  const holds = checks.every(([, check]) => check.outcome === "holds");
  return h(
    "tr",
    { attrs: { "data-testid": "mandate-row", "data-holds": String(holds) } },
    h("td", { text: formatTime(mandate.signed_at, i18n.lang) }),
    h("td", {}, h("span", { text: mandate.merchant }), h("br"), h("code", { text: mandate.checkout_id })),
    h("td", { class: "num", text: amount }),
    h("td", { text: mandate.order === null ? t("mandates.notCompleted") : t("mandates.order", { order: mandate.order }) }),
    h(
      "td",
      {},
      h("ul", { class: holds ? "mandate-checks" : "mandate-checks mandate-checks-failed" }, ...checks.map(([label, check]) => h("li", { text: t("mandates.check", { label, verdict: checkText(check, i18n) }) }))),
    ),
  );
}

/** The section, and how to fill it with the mandates the core keeps. */
export function mandatesSection(i18n: I18n): { el: HTMLElement; show(mandates: readonly KeptMandate[]): void } {
  const { t } = i18n;
  const body = h("div", {});
  const el = h(
    "section",
    { class: "audit-mandates", attrs: { "data-testid": "mandates", "aria-labelledby": "mandates-heading" } },
    h("h3", { text: t("mandates.heading"), attrs: { id: "mandates-heading" } }),
    h("p", { class: "section-help", text: t("mandates.help") }),
    body,
  );
  const show = (mandates: readonly KeptMandate[]): void => {
    el.hidden = mandates.length === 0;
    const columns = (["mandates.signedAt", "mandates.checkout", "mandates.amount", "mandates.outcome", "mandates.checks"] as const).map((key) => h("th", { text: t(key) }));
    replace(body, h("table", { class: "audit-table" }, h("thead", {}, h("tr", {}, ...columns)), h("tbody", {}, ...mandates.map((m) => row(m, i18n)))));
  };
  el.hidden = true;
  return { el, show };
}
