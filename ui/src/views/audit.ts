// The audit log, for a person: every decision on a tool call, newest first,
// as "when, what (the tool's title and its key arguments in words), who
// decided what, and what came of it", with a link to the chat it was in.
// Hashes and ids are behind "details". Filters by decision and by date.

import type { Api } from "../api";
import { button, disclosure, formatTime, h, replace } from "../dom";
import type { I18n } from "../i18n";
import { formatFen } from "../money";
import { readPreview } from "../preview-content";
import type { AuditEntry, JsonValue, SessionInfo, ToolCallView, ToolPolicyView } from "../protocol";
import { fieldLabel } from "../result-fields";
import { describeArguments, isObject, type ArgJson } from "../schema";
import { auditFilterBar, filterEntries, NO_FILTER, type AuditFilter } from "./audit-filter";
import { callsById, outcomeOf, type Outcome } from "./audit-outcome";
import { errorDetail, failureText } from "./error-text";
import { mandatesSection } from "./audit-mandates";
import { notPayableText } from "./card-preview";
import { valueText } from "./result-view";

export const AUDIT_LIMIT = 500;

export interface AuditDeps {
  api: Api;
  i18n: I18n;
  /** Session titles to show instead of ids, where known. */
  sessions(): readonly SessionInfo[];
  /** Opens a session's chat; without it a row names its chat without a link. */
  openSession?(sessionId: string): void;
}

interface Loaded {
  entries: AuditEntry[];
  titles: Map<string, string>;
  calls: Map<string, ToolCallView>;
}

const toolKey = (server: string, tool: string): string => `${server}\u0000${tool}`;

export function auditView(deps: AuditDeps): { el: HTMLElement; load(): Promise<void> } {
  const { i18n } = deps;
  const { t } = i18n;
  const body = h("div", { class: "audit-body", attrs: { "aria-live": "polite" } });
  let loaded: Loaded | null = null;
  const mandates = mandatesSection(i18n);
  let filter: AuditFilter = NO_FILTER;

  const load = async (): Promise<void> => {
    try {
      const [entries, tools, signed] = await Promise.all([
        deps.api.listAudit(AUDIT_LIMIT),
        deps.api.listTools().catch((): ToolPolicyView[] => []),
        deps.api.listMandates(),
      ]);
      mandates.show(signed);
      // Each row carries its call as it is now; a deleted chat's calls stay "not known".
      loaded = {
        entries: [...entries].sort((a, b) => b.at - a.at),
        titles: new Map(tools.filter((tool) => tool.title).map((tool) => [toolKey(tool.server, tool.tool), tool.title ?? tool.tool])),
        calls: callsById(entries),
      };
      show();
    } catch (error) {
      const detail = errorDetail(error, i18n);
      replace(body, h("p", { class: "save-error", attrs: { role: "alert", title: detail }, text: failureText(error, i18n) }));
    }
  };

  const show = (): void => {
    if (!loaded) return;
    if (loaded.entries.length === 0) return replace(body, h("p", { class: "empty", text: t("audit.empty") }));
    const shown = filterEntries(loaded.entries, filter);
    if (shown.length === 0) return replace(body, h("p", { class: "empty", text: t("audit.noMatch") }));
    replace(body, table(shown, loaded));
  };

  const table = (entries: AuditEntry[], { titles, calls }: Loaded): HTMLElement => {
    const sessions = new Map(deps.sessions().map((s) => [s.id, s]));
    const columns = (["audit.time", "audit.action", "audit.decision", "audit.outcome", "audit.session", "audit.details"] as const).map(
      (key) => h("th", { text: t(key), attrs: { scope: "col" } }),
    );
    const rows = entries.map((entry) => {
      const call = calls.get(entry.call_id);
      const title = titles.get(toolKey(entry.server, entry.tool)) ?? call?.title ?? entry.tool;
      return h(
        "tr",
        { attrs: { "data-testid": "audit-row", "data-decision": entry.decision, "data-call-id": entry.call_id } },
        h("td", { class: "audit-time", text: formatTime(entry.at, i18n.lang) }),
        h("td", {}, h("span", { class: "audit-title", text: title }), h("span", { class: "audit-preview" }, words(entry, call))),
        h(
          "td",
          {},
          h("span", { class: `decision decision-${entry.decision}`, text: i18n.auditDecision(entry.decision) }),
          entry.reason && h("span", { class: "audit-reason", text: entry.reason }),
        ),
        h("td", {}, outcomeCell(outcomeOf(entry, call))),
        h("td", {}, chatCell(entry.session_id, sessions.get(entry.session_id))),
        h("td", {}, detailsCell(entry)),
      );
    });
    return h("table", { class: "audit-table" }, h("thead", {}, h("tr", {}, ...columns)), h("tbody", {}, ...rows));
  };

  /** What the call was about, in words: its preview's summary and amount, else its arguments. */
  const words = (entry: AuditEntry, call: ToolCallView | undefined): Node | string | null => {
    const preview = entry.preview;
    if (preview !== null) {
      const { outcome } = preview;
      if (outcome.type === "not_payable") {
        return h("span", { class: "audit-preview-not_payable", text: notPayableText(outcome.problem, i18n) });
      }
      if (outcome.type !== "computed") {
        const key = outcome.type === "refused" ? "preview.refused" : "preview.unavailable";
        return h("span", { class: `audit-preview-${outcome.type}`, text: t(key, { message: outcome.message }) });
      }
      const content = readPreview(outcome.content);
      const fen = content.totals.find((total) => total.kind === "pay")?.amountFen ?? null;
      const pay = fen === null ? null : formatFen(fen);
      return h(
        "span",
        {},
        content.summary ?? "",
        pay !== null && !(content.summary ?? "").includes(pay) && h("span", { class: "audit-pay", text: t("audit.toPay", { amount: pay }) }),
      );
    }
    return call ? argumentWords(call.arguments, call.labels_schema ?? null) : null;
  };

  const argumentWords = (args: JsonValue, schema: JsonValue): string | null => {
    if (!isObject(args)) return null;
    // The tool's own titles where it gives them; else a known field's name.
    const titles = new Map(describeArguments(args as ArgJson, schema).map((row) => [row.name, row.label]));
    const parts = Object.entries(args).flatMap(([key, value]) => {
      const text = valueText(key, value, i18n);
      const title = titles.get(key);
      const label = title !== undefined && title !== key ? title : fieldLabel(key, i18n.lang);
      return text === null ? [] : [`${label} ${text}`];
    });
    return parts.length === 0 ? null : parts.join(" · ");
  };

  const outcomeCell = (outcome: Outcome): HTMLElement => {
    const text =
      outcome.kind === "failed" && outcome.reason !== null
        ? t("audit.outcome.failedBecause", { reason: outcome.reason })
        : t(`audit.outcome.${outcome.kind}`);
    return h("span", { class: `audit-outcome audit-outcome-${outcome.kind}`, text, attrs: { "data-testid": "audit-outcome", "data-outcome": outcome.kind } });
  };

  const chatCell = (sessionId: string, session: SessionInfo | undefined): HTMLElement => {
    const name = session ? session.title || t("sessions.untitled") : null;
    const open = deps.openSession;
    if (name === null) return h("span", { class: "audit-chat-gone", text: t("audit.sessionGone"), attrs: { title: sessionId } });
    if (!open) return h("span", { text: name });
    return button(name, () => open(sessionId), { class: "link-button", testid: "audit-open-session", title: t("audit.openChat", { title: name }) });
  };

  // An accepted definition has no arguments: its details show the pinned hash before and after.
  const detailsCell = (entry: AuditEntry): HTMLElement => {
    const { old_definition_hash: before, new_definition_hash: after } = entry;
    const facts: Array<[string, string]> = [
      [t("audit.tool"), `${entry.server} · ${entry.tool}`],
      [t("audit.callId"), entry.call_id],
      after === null ? [t("audit.hash"), entry.arguments_hash] : [t("audit.definitionHash"), `${before ?? "—"} → ${after}`],
    ];
    return disclosure(
      h("span", { text: t("audit.details") }),
      [h("dl", { class: "audit-facts" }, ...facts.flatMap(([label, value]) => [h("dt", { text: label }), h("dd", {}, h("code", { text: value }))]))],
      { class: "audit-details", attrs: { "data-testid": "audit-details" } },
    );
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
    mandates.el,
    auditFilterBar(i18n, (next) => {
      filter = next;
      show();
    }),
    body,
  );
  return { el, load };
}
