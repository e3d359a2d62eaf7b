// The audit log's filters: by decision and by a range of local dates.

import { h } from "../dom";
import type { I18n } from "../i18n";
import type { AuditDecision, AuditEntry } from "../protocol";
import { dateField } from "./date-field";

export interface AuditFilter {
  decision: AuditDecision | null;
  /** Local dates, "YYYY-MM-DD", both days included; null for no bound. */
  from: string | null;
  to: string | null;
}

export const NO_FILTER: AuditFilter = { decision: null, from: null, to: null };

/** Local midnight of a "YYYY-MM-DD" date, in epoch milliseconds; null if it is not one. */
function localDay(date: string | null, dayOffset = 0): number | null {
  const m = date === null ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + dayOffset).getTime();
}

export function filterEntries(entries: readonly AuditEntry[], filter: AuditFilter): AuditEntry[] {
  const from = localDay(filter.from);
  const until = localDay(filter.to, 1);
  return entries.filter(
    (entry) =>
      (filter.decision === null || entry.decision === filter.decision) &&
      (from === null || entry.at >= from) &&
      (until === null || entry.at < until),
  );
}

const DECISIONS: readonly AuditDecision[] = [
  "user_approved",
  "user_approved_edited",
  "user_denied",
  "policy_allowed",
  "auto_approved_by_user_setting",
  "policy_denied",
  "expired",
  "superseded",
  "preview_changed",
  "user_accepted_definition",
];

/** The filter bar; `onChange` gets the whole filter after every change. */
export function auditFilterBar(i18n: I18n, onChange: (filter: AuditFilter) => void): HTMLElement {
  const { t } = i18n;
  const decision = h(
    "select",
    { attrs: { "data-testid": "audit-filter-decision" } },
    h("option", { text: t("audit.filter.all"), attrs: { value: "" } }),
    ...DECISIONS.map((d) => h("option", { text: i18n.auditDecision(d), attrs: { value: d } })),
  );
  const changed = (): void =>
    onChange({
      decision: DECISIONS.find((d) => d === decision.value) ?? null,
      from: from.value(),
      to: to.value(),
    });
  const from = dateField(i18n, t("audit.filter.from"), "audit-filter-from", changed);
  const to = dateField(i18n, t("audit.filter.to"), "audit-filter-to", changed);
  decision.addEventListener("change", changed);
  const label = (text: string, control: HTMLElement) => h("label", { class: "audit-filter" }, h("span", { text }), control);
  return h(
    "div",
    { class: "audit-filters", attrs: { role: "group", "aria-label": t("audit.filter.label") } },
    label(t("audit.decision"), decision),
    from.el,
    to.el,
  );
}
