// The audit log: every decision on a tool call, newest first, with what
// the call would have done as its preview said when it was decided.

import type { Api } from "../api";
import { button, formatTime, h, replace } from "../dom";
import type { I18n } from "../i18n";
import { formatFen } from "../money";
import { readPreview } from "../preview-content";
import type { AuditEntry, CallPreview, SessionInfo } from "../protocol";
import { errorDetail, failureText } from "./error-text";

export const AUDIT_LIMIT = 500;

export interface AuditDeps {
  api: Api;
  i18n: I18n;
  /** Session titles to show instead of ids, where known. */
  sessions(): readonly SessionInfo[];
}

export function auditView(deps: AuditDeps): { el: HTMLElement; load(): Promise<void> } {
  const { t } = deps.i18n;
  const body = h("div", { class: "audit-body", attrs: { "aria-live": "polite" } });
  const load = async (): Promise<void> => {
    try {
      const entries = await deps.api.listAudit(AUDIT_LIMIT);
      replace(body, entries.length === 0 ? h("p", { class: "empty", text: t("audit.empty") }) : table(entries));
    } catch (error) {
      const detail = errorDetail(error, deps.i18n);
      replace(body, h("p", { class: "save-error", attrs: { role: "alert", title: detail }, text: failureText(error, deps.i18n) }));
    }
  };

  const table = (entries: AuditEntry[]): HTMLElement => {
    const titles = new Map(deps.sessions().map((s) => [s.id, s.title]));
    const columns = (["audit.time", "audit.session", "audit.tool", "audit.decision", "audit.preview", "audit.reason", "audit.hash"] as const).map(
      (key) => h("th", { text: t(key), attrs: { scope: "col" } }),
    );
    const rows = [...entries]
      .sort((a, b) => b.at - a.at)
      .map((entry) =>
        h(
          "tr",
          { attrs: { "data-testid": "audit-row", "data-decision": entry.decision, "data-call-id": entry.call_id } },
          h("td", { text: formatTime(entry.at, deps.i18n.lang) }),
          h("td", { text: titles.get(entry.session_id) || entry.session_id.slice(0, 8), attrs: { title: entry.session_id } }),
          h("td", { text: `${entry.server} · ${entry.tool}` }),
          h("td", {}, h("span", { class: `decision decision-${entry.decision}`, text: deps.i18n.auditDecision(entry.decision) })),
          h("td", { class: "audit-preview" }, previewCell(entry.preview)),
          h("td", { text: entry.reason ?? "" }),
          h("td", {}, hashCell(entry)),
        ),
      );
    return h("table", { class: "audit-table" }, h("thead", {}, h("tr", {}, ...columns)), h("tbody", {}, ...rows));
  };

  const previewCell = (preview: CallPreview | null): HTMLElement | null => {
    if (preview === null) return null;
    const { outcome } = preview;
    if (outcome.type !== "computed") {
      const key = outcome.type === "refused" ? "preview.refused" : "preview.unavailable";
      return h("span", { class: `audit-preview-${outcome.type}`, text: t(key, { message: outcome.message }) });
    }
    const content = readPreview(outcome.content);
    const pay = content.totals.find((total) => total.kind === "pay")?.amountFen ?? null;
    return h(
      "span",
      {},
      content.summary ?? "",
      pay !== null && h("span", { class: "audit-pay", text: t("audit.toPay", { amount: formatFen(pay) }) }),
    );
  };

  // An accepted definition has no arguments: its row shows the pinned hash before and after.
  const hashCell = (entry: AuditEntry): HTMLElement => {
    const { old_definition_hash: before, new_definition_hash: after } = entry;
    if (after === null) return h("code", { text: entry.arguments_hash.slice(0, 12), attrs: { title: entry.arguments_hash } });
    const full = `${before ?? ""} → ${after}`;
    return h("code", { text: `${(before ?? "").slice(0, 12)} → ${after.slice(0, 12)}`, attrs: { title: full } });
  };

  const el = h(
    "section",
    { class: "page audit", attrs: { "data-testid": "audit-view", "aria-labelledby": "audit-heading" } },
    h(
      "div",
      { class: "page-head" },
      h("h2", { text: t("audit.heading"), attrs: { id: "audit-heading" } }),
      button(t("audit.refresh"), () => void load(), { class: "btn", testid: "audit-refresh" }),
    ),
    h("p", { class: "section-help", text: t("audit.help") }),
    body,
  );
  return { el, load };
}
