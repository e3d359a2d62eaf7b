// The core's side of deciding a card, for tests: the events it emits for
// the decisions it records, before respond_confirmation answers
// (crates/ragent/src/agent/respond.rs, batch.rs `announce_moves`). A plain
// approval moves the call to `approved`; an edited one comes as the call's
// view, approved, with the arguments it will send
// (`tool_call_approved_edited`). A denial is final: its event is the
// call's view, denied, with the user's reason.

import type { AgentEvent, CallDecision, ConfirmationCard, ToolCallView } from "../protocol";
import { viewOf } from "../state";
import type { FakeApi } from "./fake-api";

/**
 * Makes `api` answer decisions as the core does, about the calls its events
 * showed and those of `shown` (cards the page read from a transcript).
 */
export function answerAsTheCore(api: FakeApi, ...shown: ConfirmationCard[]): void {
  const known = new Map<string, ToolCallView>();
  for (const card of shown) for (const call of card.calls) known.set(call.call_id, viewOf(call, card.reply_id));
  void api.onAgentEvent(({ event }) => {
    if (event.type === "confirmation_requested") {
      for (const call of event.card.calls) known.set(call.call_id, viewOf(call, event.card.reply_id));
    } else if (event.type === "tool_call_started" || event.type === "tool_call_finished") {
      known.set(event.call.call_id, event.call);
    }
  });
  api.onDecisions = (decisions) => decisions.map((decision) => recorded(decision, known.get(decision.call_id)));
}

/** The event for one decision the core recorded on `call`. */
export function recorded({ call_id, decision }: CallDecision, call: ToolCallView | undefined): AgentEvent {
  if (decision.type === "approve") return { type: "call_status_changed", call_id, status: "approved" };
  if (!call) throw new Error(`the core never showed call ${call_id}`);
  if (decision.type === "approve_edited") {
    const edited = { ...call, status: "approved" as const, arguments: decision.arguments, arguments_text: JSON.stringify(decision.arguments) };
    return { type: "tool_call_approved_edited", call: edited };
  }
  return { type: "tool_call_finished", call: { ...call, status: "denied", output: declined(decision.reason), deny_reason: decision.reason } };
}

/** What the core tells the model of a denied call, its output (crates/ragent/src/instructions.rs). */
export function declined(reason: string | null): string {
  const why = reason === null || reason.trim() === "" ? "" : `用户给出的理由：${reason.trim()}`;
  return `用户在确认卡片上拒绝了此操作，操作没有执行。${why}`;
}
