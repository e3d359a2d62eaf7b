// The card's badge: what a call risks, in the shopper's words. The core
// decides the risk from the tool's facts (one table, `ToolFacts::risk`);
// this only words it, naming the amount a money call would move when its
// server's preview says so and nothing blocks it.

import type { I18n } from "../i18n";
import { formatFen } from "../money";
import { readPreview } from "../preview-content";
import type { CardCall } from "../protocol";

export interface RiskBadge {
  /** The badge's look: "danger" for money and what cannot be undone. */
  tone: "danger" | "caution" | "calm";
  text: string;
  /** A longer explanation, for the tooltip and screen readers. */
  help: string;
}

/** The amount a money call would charge or pay back, if its preview is
 * computed, names one, and nothing blocks the call. */
function movedAmount(call: CardCall): { kind: "pay" | "refund"; fen: bigint } | null {
  if (call.preview?.outcome.type !== "computed") return null;
  const content = readPreview(call.preview.outcome.content);
  if (content.warnings.some((w) => w.blocking)) return null;
  for (const kind of ["pay", "refund"] as const) {
    const fen = content.totals.find((t) => t.kind === kind)?.amountFen;
    if (fen !== undefined && fen !== null) return { kind, fen };
  }
  return null;
}

/** The badge for `call`; null for a call that only adds or reads. An
 * untrusted server's read-only claim is shown by its own note instead. */
export function riskBadge(call: CardCall, i18n: I18n): RiskBadge | null {
  const { t } = i18n;
  switch (call.risk) {
    case "moves_money": {
      const moved = movedAmount(call);
      const text =
        moved === null
          ? t("risk.money")
          : t(moved.kind === "pay" ? "risk.pays" : "risk.refunds", { amount: formatFen(moved.fen) });
      return { tone: "danger", text, help: t("risk.moneyHelp") };
    }
    case "reaches_out":
      return { tone: "caution", text: t("risk.reachesOut"), help: t("risk.reachesOutHelp") };
    case "irreversible":
      if (!call.trusted && call.declares_read_only) return null;
      return { tone: "danger", text: t("risk.irreversible"), help: t("risk.irreversibleHelp") };
    case "undoable":
      return { tone: "calm", text: t("risk.undoable"), help: t("risk.undoableHelp") };
    case "adds":
    case "reads":
      return null;
  }
}
