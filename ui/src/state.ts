// The chat of one session as data: what the view shows, rebuilt from a
// transcript and moved on by agent events. No DOM here. `apply` returns
// the entries it added, changed or removed (no longer in `entries`) so the
// view can update just those.
//
// Each call appears once: a call that was on a card lives in that card's
// entry (its `calls`, in the model's order), every other call is a chip.
// A card's entry is the same whether it was built live or from a reopened
// transcript (calls grouped by reply_id); only a card still waiting for
// decisions also holds the card itself.

import type {
  AgentEvent,
  CallProgress,
  CallStatus,
  CardCall,
  ConfirmationCard,
  ErrorInfo,
  InputCard,
  InputCardOutcome,
  KeyedReply,
  ModelFailureKind,
  StopReason,
  ToolCallView,
  Transcript,
} from "./protocol";

/**
 * A call as the page shows it: what the core says of it and, while it
 * runs, how far its server says it has come (news that is never stored,
 * so it goes with the next word of the call).
 */
export type LiveCall = ToolCallView & { progress?: CallProgress };

export type Entry =
  | { kind: "user"; key: string; text: string }
  /** `messageId` is the stored message's, once the core has stored it. */
  | { kind: "assistant"; key: string; text: string; streaming: boolean; messageId: number | null }
  | { kind: "call"; key: string; call: LiveCall }
  | { kind: "card"; key: string; replyId: string; card: ConfirmationCard | null; calls: LiveCall[] }
  /**
   * A server's request for the user's input; `outcome` once the core closed
   * it; `replies`, what the user sent, for one read back from the history.
   */
  | { kind: "input"; key: string; card: InputCard; outcome: InputCardOutcome | null; replies?: KeyedReply[] }
  | { kind: "notice"; key: string; notice: Notice };

/** Something to tell the user that is not a chat message. */
export type Notice =
  | { type: "text"; text: string }
  | { type: "stopped"; reason: StopReason }
  | { type: "error"; error: ErrorInfo }
  | { type: "server_restarted"; server: string; reason: string }
  /** A server keeps failing: its tools are left out until `retryInSecs` have passed. */
  | { type: "server_paused"; server: string; failures: number; retryInSecs: number; problem: string }
  /**
   * A server's tools wait for the user to sign in. While `runWaits`, the run
   * waits for the sign-in or for the user to go on without it; `ended` says
   * how that wait ended (`identity` null: went on without the server).
   */
  | { type: "sign_in_required"; server: string; runWaits: boolean; ended: { identity: string | null } | null }
  /** The model's request failed and is sent again at `until` (ms since the epoch). */
  | { type: "retrying"; attempt: number; retries: number; until: number; kind: ModelFailureKind };

export class ChatLog {
  readonly sessionId: string;
  readonly entries: Entry[] = [];
  running = false;
  private counter = 0;

  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  static fromTranscript(transcript: Transcript): ChatLog {
    const log = new ChatLog(transcript.session.id);
    for (const item of transcript.items) {
      switch (item.type) {
        case "user":
          log.push({ kind: "user", key: `user-${item.id}`, text: item.text });
          break;
        case "assistant":
          log.push({ kind: "assistant", key: `assistant-${item.id}`, text: item.text, streaming: false, messageId: item.id });
          break;
        case "tool_call":
          log.upsertCall(item.call);
          break;
        case "notice":
          log.push({ kind: "notice", key: `notice-${item.id}`, notice: { type: "text", text: item.text } });
          break;
        case "input":
          log.push({ kind: "input", key: `input-${item.card.request_id}`, card: item.card, outcome: item.outcome, replies: item.replies });
          break;
      }
    }
    if (transcript.pending) log.addCard(transcript.pending);
    if (transcript.pending_input) log.addInput(transcript.pending_input);
    // The last run failed: shown with its way out, as when it happened.
    if (transcript.failure) log.notice({ type: "error", error: transcript.failure });
    log.running = transcript.running;
    return log;
  }

  /** The card still waiting for decisions, if any. */
  pendingCard(): ConfirmationCard | null {
    for (let i = this.entries.length - 1; i >= 0; i -= 1) {
      const entry = this.entries[i];
      if (entry.kind === "card" && isPending(entry)) return entry.card;
    }
    return null;
  }

  /** The server's request for input still waiting for the user, if any. */
  pendingInput(): InputCard | null {
    for (let i = this.entries.length - 1; i >= 0; i -= 1) {
      const entry = this.entries[i];
      if (entry.kind === "input" && entry.outcome === null) return entry.card;
    }
    return null;
  }

  /**
   * The answer the user may ask the model to write again: the final answer
   * that ends the chat (only notices after it), when nothing runs or waits.
   * The core decides; this only says where the button is shown.
   */
  regenerable(): Entry | null {
    if (this.running || this.pendingCard() || this.pendingInput()) return null;
    for (let i = this.entries.length - 1; i >= 0; i -= 1) {
      const entry = this.entries[i];
      if (entry.kind === "notice") continue;
      return entry.kind === "assistant" && !entry.streaming && entry.messageId !== null ? entry : null;
    }
    return null;
  }

  /** A message the user sent; shown at once, before the run starts. */
  addUser(text: string): Entry {
    return this.push({ kind: "user", key: this.nextKey("user"), text });
  }

  /** Takes back a message whose sending failed. */
  remove(entry: Entry): void {
    const index = this.entries.indexOf(entry);
    if (index >= 0) this.entries.splice(index, 1);
  }

  apply(event: AgentEvent): Entry[] {
    // A retry notice lasts until the next news of the run.
    const retried = event.type === "model_retrying" ? [] : this.dropRetrying();
    return [...retried, ...this.applyEvent(event)];
  }

  private applyEvent(event: AgentEvent): Entry[] {
    switch (event.type) {
      case "model_retrying":
        return [this.showRetrying({ type: "retrying", attempt: event.attempt, retries: event.retries, until: Date.now() + event.delay_ms, kind: event.kind })];
      case "run_started":
        this.running = true;
        return this.dropAnsweredFailure();
      case "text_delta":
        return [this.appendDelta(event.text)];
      case "answer_withdrawn":
        return this.withdraw(event.message_id);
      case "assistant_message":
        return [this.finishAssistant(event.message_id, event.text)];
      case "tool_call_started":
      case "tool_call_finished":
        return this.upsertCall(event.call);
      case "tool_call_progress":
        return this.setProgress(event.call_id, event.progress);
      case "confirmation_requested":
        return this.addCard(this.keepDecided(event.card));
      case "call_status_changed":
        return this.setStatus(event.call_id, event.status);
      case "tool_call_approved_edited":
        return this.upsertCall(event.call);
      case "input_requested":
        return this.addInput(event.card);
      case "input_closed":
        return this.closeInput(event.request_id, event.outcome);
      case "server_restarted":
        return [this.notice({ type: "server_restarted", server: event.server, reason: event.reason })];
      case "server_paused":
        return [
          this.notice({
            type: "server_paused",
            server: event.server,
            failures: event.failures,
            retryInSecs: event.retry_in_secs,
            problem: event.problem,
          }),
        ];
      case "sign_in_required":
        return [this.notice({ type: "sign_in_required", server: event.server, runWaits: event.run_waits, ended: null })];
      case "sign_in_ended":
        return this.endSignIn(event.server, event.identity);
      case "run_stopped":
        this.running = false;
        return [...this.endStreaming(), ...this.stopNotice(event.reason)];
      case "error":
        return [this.notice({ type: "error", error: event.error })];
    }
  }

  /** The retry notice: it goes at the run's next news, so it is always the last entry. */
  private shownRetrying(): Extract<Entry, { kind: "notice" }> | undefined {
    const last = this.entries[this.entries.length - 1];
    return last?.kind === "notice" && last.notice.type === "retrying" ? last : undefined;
  }

  private showRetrying(notice: Notice): Entry {
    const shown = this.shownRetrying();
    if (!shown) return this.notice(notice);
    shown.notice = notice;
    return shown;
  }

  private dropRetrying(): Entry[] {
    return this.shownRetrying() ? this.entries.splice(-1, 1) : [];
  }

  /** An answer the core took out of the conversation (it is written again). */
  private withdraw(messageId: number): Entry[] {
    const index = this.entries.findIndex((entry) => entry.kind === "assistant" && entry.messageId === messageId);
    return index < 0 ? [] : this.entries.splice(index, 1);
  }

  private appendDelta(text: string): Entry {
    const last = this.entries[this.entries.length - 1];
    if (last && last.kind === "assistant" && last.streaming) {
      last.text += text;
      return last;
    }
    return this.push({ kind: "assistant", key: this.nextKey("assistant"), text, streaming: true, messageId: null });
  }

  private finishAssistant(messageId: number, text: string): Entry {
    const streaming = [...this.entries]
      .reverse()
      .find((entry): entry is Extract<Entry, { kind: "assistant" }> => entry.kind === "assistant" && entry.streaming);
    if (streaming) {
      streaming.text = text;
      streaming.streaming = false;
      streaming.messageId = messageId;
      return streaming;
    }
    return this.push({ kind: "assistant", key: `assistant-${messageId}`, text, streaming: false, messageId });
  }

  /** A stopped run leaves no half-streamed message marked as streaming. */
  private endStreaming(): Entry[] {
    const changed: Entry[] = [];
    for (const entry of this.entries) {
      if (entry.kind === "assistant" && entry.streaming) {
        entry.streaming = false;
        changed.push(entry);
      }
    }
    return changed;
  }

  /**
   * A new run answers what the last one failed to: its error, the chat's
   * last entry, goes (a reopened session no longer shows it either).
   */
  private dropAnsweredFailure(): Entry[] {
    const last = this.entries[this.entries.length - 1];
    if (last?.kind !== "notice" || last.notice.type !== "error") return [];
    this.entries.pop();
    return [last];
  }

  private stopNotice(reason: StopReason): Entry[] {
    if (reason.type === "completed" || reason.type === "awaiting_confirmation" || reason.type === "awaiting_input") return [];
    // The error event just before says what stopped the run.
    const last = this.entries[this.entries.length - 1];
    if (reason.type === "failed" && last?.kind === "notice" && last.notice.type === "error") return [];
    return [this.notice({ type: "stopped", reason })];
  }

  /**
   * A card sent again (same reply_id: its preview changed) keeps the
   * decisions the core's events already reported: a call they moved on is
   * not asked again because the resent card still says "asking".
   */
  private keepDecided(incoming: ConfirmationCard): ConfirmationCard {
    const card = structuredClone(incoming);
    for (const call of card.calls) {
      const known = this.cardCall(call.call_id)?.status;
      if (call.status === "asking" && known !== undefined && known !== "asking") call.status = known;
    }
    return card;
  }

  /**
   * The card (sent first, or again with the same reply_id). Its calls move
   * into its entry; a chip already shown for one of them (a call refused
   * before the card went out) is removed, so each call appears once.
   */
  private addCard(incoming: ConfirmationCard): Entry[] {
    // The log owns its copy: statuses change in place as events arrive.
    const card = structuredClone(incoming);
    const entry = this.cardEntry(card.reply_id) ?? this.pushCard(card.reply_id);
    entry.card = card;
    const removed: Entry[] = [];
    entry.calls = card.calls.map((call) => {
      const chip = this.callEntry(call.call_id);
      if (chip) {
        this.remove(chip);
        removed.push(chip);
      }
      const known = chip?.call ?? entry.calls.find((c) => c.call_id === call.call_id);
      return { ...viewOf(call, card.reply_id), ...pickKnown(known), status: call.status };
    });
    return [...removed, entry];
  }

  /** A request for input, after the call it belongs to (sent again: the same entry). */
  private addInput(card: InputCard): Entry[] {
    const key = `input-${card.request_id}`;
    const known = this.entries.find((entry): entry is InputEntry => entry.kind === "input" && entry.key === key);
    if (known) {
      known.card = card;
      return [known];
    }
    return [this.push({ kind: "input", key, card, outcome: null })];
  }

  private closeInput(requestId: string, outcome: InputCardOutcome): Entry[] {
    const entry = this.entries.find((e): e is InputEntry => e.kind === "input" && e.card.request_id === requestId);
    if (!entry || entry.outcome !== null) return [];
    entry.outcome = outcome;
    return [entry];
  }

  /**
   * The core's view of a call (started, finished): on a card it replaces
   * what the card's entry knew, so a denial's reason and the arguments a
   * call went with come from here.
   */
  private upsertCall(call: ToolCallView): Entry[] {
    const onCard = this.cardOf(call.call_id) ?? (call.reply_id === null ? undefined : this.cardEntry(call.reply_id) ?? this.pushCard(call.reply_id));
    if (onCard) {
      const index = onCard.calls.findIndex((c) => c.call_id === call.call_id);
      // The card's reply_id stays: an event's view names a card only while the call was asked.
      if (index >= 0) onCard.calls[index] = { ...onCard.calls[index], ...call, reply_id: onCard.replyId, progress: undefined };
      else onCard.calls.push(call);
      setCardCallStatus(onCard, call.call_id, call.status);
      return [onCard];
    }
    const existing = this.callEntry(call.call_id);
    if (existing) {
      existing.call = { ...existing.call, ...call, progress: undefined };
      return [existing];
    }
    return [this.push({ kind: "call", key: `call-${call.call_id}`, call })];
  }

  /** A running call's news; a call that is not running any more keeps none. */
  private setProgress(callId: string, progress: CallProgress): Entry[] {
    const entry = this.cardOf(callId) ?? this.callEntry(callId);
    if (!entry) return [];
    const told = (call: LiveCall): LiveCall => (call.status === "running" ? { ...call, progress } : call);
    if (entry.kind === "call") entry.call = told(entry.call);
    else entry.calls = entry.calls.map((c) => (c.call_id === callId ? told(c) : c));
    return [entry];
  }

  private setStatus(callId: string, status: CallStatus): Entry[] {
    const entry = this.cardOf(callId) ?? this.callEntry(callId);
    if (!entry) return [];
    if (entry.kind === "call") {
      entry.call = { ...entry.call, status };
      return [entry];
    }
    entry.calls = entry.calls.map((c) => (c.call_id === callId ? { ...c, status } : c));
    setCardCallStatus(entry, callId, status);
    return [entry];
  }

  private cardCall(callId: string): CardCall | undefined {
    return this.cardOf(callId)?.card?.calls.find((c) => c.call_id === callId);
  }

  private cardOf(callId: string): CardEntry | undefined {
    return this.entries.find(
      (entry): entry is CardEntry => entry.kind === "card" && entry.calls.some((c) => c.call_id === callId),
    );
  }

  private cardEntry(replyId: string): CardEntry | undefined {
    return this.entries.find((entry): entry is CardEntry => entry.kind === "card" && entry.replyId === replyId);
  }

  private pushCard(replyId: string): CardEntry {
    const entry: CardEntry = { kind: "card", key: `card-${replyId}`, replyId, card: null, calls: [] };
    this.push(entry);
    return entry;
  }

  private callEntry(callId: string): Extract<Entry, { kind: "call" }> | undefined {
    return this.entries.find(
      (entry): entry is Extract<Entry, { kind: "call" }> => entry.kind === "call" && entry.call.call_id === callId,
    );
  }

  /** The run's wait for `server`'s sign-in ended: its notice says how. */
  private endSignIn(server: string, identity: string | null): Entry[] {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i];
      if (entry.kind === "notice" && entry.notice.type === "sign_in_required" && entry.notice.server === server) {
        entry.notice = { ...entry.notice, ended: { identity } };
        return [entry];
      }
    }
    return [];
  }

  private notice(notice: Notice): Entry {
    return this.push({ kind: "notice", key: this.nextKey("notice"), notice });
  }

  private push(entry: Entry): Entry {
    this.entries.push(entry);
    return entry;
  }

  private nextKey(prefix: string): string {
    this.counter += 1;
    return `${prefix}-local-${this.counter}`;
  }
}

export type CardEntry = Extract<Entry, { kind: "card" }>;
export type InputEntry = Extract<Entry, { kind: "input" }>;

/** A card entry whose card still waits for a decision. */
export function isPending(entry: CardEntry): entry is CardEntry & { card: ConfirmationCard } {
  return entry.card !== null && entry.card.calls.some((call) => call.status === "asking");
}

function setCardCallStatus(entry: CardEntry, callId: string, status: CallStatus): void {
  const call = entry.card?.calls.find((c) => c.call_id === callId);
  if (call) call.status = status;
}

/** What the core already told about a call that a card does not carry. */
function pickKnown(view: ToolCallView | undefined): Partial<ToolCallView> {
  if (!view) return {};
  const { output, is_error, structured_output, rejection, deny_reason } = view;
  return { output, is_error, structured_output, rejection, deny_reason };
}

/** A card call as the page shows it, before the core tells more. */
export function viewOf(call: CardCall, replyId: string): ToolCallView {
  return {
    call_id: call.call_id,
    qualified_name: call.qualified_name,
    server: call.server,
    tool: call.tool,
    title: call.title,
    arguments: call.arguments,
    status: call.status,
    output: null,
    is_error: false,
    destructive: call.destructive,
    reply_id: replyId,
    structured_output: null,
    rejection: null,
    deny_reason: null,
    preview: call.preview,
    // The card has the whole schema: its titles label the arguments.
    labels_schema: call.input_schema,
  };
}
