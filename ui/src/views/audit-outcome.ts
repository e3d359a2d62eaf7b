// What became of an audited call: the audit row keeps the decision, and
// carries the call as stored now (its status, output, arguments).
// A status the page cannot know (no transcript, call still on its way) is
// shown as such, never guessed.

import type { AuditEntry, CallStatus, ToolCallView } from "../protocol";

export type Outcome =
  | { kind: "succeeded" }
  | { kind: "failed"; reason: string | null }
  | { kind: "interrupted" }
  /** Not run: denied, expired, superseded or refused by policy. */
  | { kind: "not_run" }
  /** Decided, not finished yet (approved, running, waiting on the card). */
  | { kind: "pending" }
  /** No transcript holds the call (its chat was deleted). */
  | { kind: "unknown" }
  /** The row is not about a call's run (an accepted tool definition). */
  | { kind: "none" };

const NOT_RUN: readonly CallStatus[] = ["denied", "expired", "superseded", "rejected"];

export function outcomeOf(entry: AuditEntry, call: ToolCallView | undefined): Outcome {
  if (entry.decision === "user_accepted_definition") return { kind: "none" };
  if (call === undefined) return { kind: "unknown" };
  if (call.status === "succeeded") return { kind: "succeeded" };
  if (call.status === "failed") return { kind: "failed", reason: call.output?.trim() || call.deny_reason || null };
  if (call.status === "interrupted") return { kind: "interrupted" };
  if (NOT_RUN.includes(call.status)) return { kind: "not_run" };
  return { kind: "pending" };
}

/** The calls the audit rows carry, by call id. */
export function callsById(entries: ReadonlyArray<AuditEntry>): Map<string, ToolCallView> {
  const calls = new Map<string, ToolCallView>();
  for (const entry of entries) {
    if (entry.call) calls.set(entry.call.call_id, entry.call);
  }
  return calls;
}
