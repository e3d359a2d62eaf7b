// What became of a call, in the user's words: one home for the mark, the
// status word and the reason that the card, its one-line summary and a
// chip all show, so they can never disagree. Pure; no DOM.

import type { I18n } from "./i18n";
import type { CallStatus, JsonValue, Rejection, ToolCallView } from "./protocol";

export type Tone = "ok" | "bad" | "wait" | "unknown";

export interface Outcome {
  tone: Tone;
  /** ✓, ✗, … or ?: the shape says it where colour cannot. */
  mark: string;
  /** The status in words ("已完成", "失败", ...). */
  label: string;
  /** Why, in plain words, when there is a why: the shop's refusal, the user's reason, the rule. */
  reason: string | null;
}

/** The parts of a call its outcome depends on. */
export type CallFacts = Pick<ToolCallView, "status" | "output" | "structured_output" | "rejection" | "deny_reason">;

const TONES: Record<CallStatus, Tone> = {
  proposed: "wait",
  asking: "wait",
  allowed: "wait",
  approved: "ok",
  running: "wait",
  succeeded: "ok",
  failed: "bad",
  rejected: "bad",
  denied: "bad",
  expired: "bad",
  superseded: "bad",
  interrupted: "unknown",
  awaiting_input: "wait",
};

const MARKS: Record<Tone, string> = { ok: "✓", bad: "✗", wait: "…", unknown: "?" };

/**
 * The call's outcome. `remaining`: calls still asking on its card; an
 * approval then waits for them, since a batch runs only once all are decided.
 */
export function outcomeOf(call: CallFacts, i18n: I18n, remaining = 0): Outcome {
  const tone = TONES[call.status];
  const label =
    call.status === "approved" && remaining > 0
      ? i18n.t("outcome.approvedWaiting", { count: remaining })
      : i18n.t(`outcome.${call.status}`);
  return { tone, mark: MARKS[tone], label, reason: reasonOf(call, i18n) };
}

function reasonOf(call: CallFacts, i18n: I18n): string | null {
  switch (call.status) {
    case "failed":
      return shopMessage(call.structured_output) ?? nonEmpty(call.output);
    case "denied":
      return call.deny_reason === null || call.deny_reason.trim() === ""
        ? null
        : i18n.t("outcome.denyReason", { reason: call.deny_reason });
    case "rejected":
      return call.rejection === null ? nonEmpty(call.output) : rejectionText(call.rejection, i18n);
    default:
      return null;
  }
}

/** Why code refused a call, in the user's language (the validator's words only as detail). */
export function rejectionText(rejection: Rejection, i18n: I18n): string {
  switch (rejection.type) {
    case "unknown_tool":
      return i18n.t("outcome.unknownTool");
    case "policy_denied":
      return i18n.t("outcome.policyDenied");
    case "invalid_arguments":
      return i18n.t("outcome.invalidArguments", { details: rejection.details.join("；") });
  }
}

/** The shop's own sentence for a refusal (`{error: {message}}`), when it gave one. */
function shopMessage(structured: JsonValue | null): string | null {
  if (structured === null || typeof structured !== "object" || Array.isArray(structured)) return null;
  const error = structured.error;
  if (error === null || typeof error !== "object" || Array.isArray(error)) return null;
  const message = error.message;
  return typeof message === "string" ? nonEmpty(message) : null;
}

function nonEmpty(text: string | null | undefined): string | null {
  const trimmed = text?.trim() ?? "";
  return trimmed === "" ? null : trimmed;
}
