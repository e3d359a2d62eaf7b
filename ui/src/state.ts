// The chat of one session as data: what the view shows, rebuilt from a
// transcript and moved on by agent events. No DOM here. `apply` returns
// the entries it added or changed so the view can update just those.

import type {
  AgentEvent,
  CallStatus,
  CardCall,
  ConfirmationCard,
  ErrorInfo,
  StopReason,
  ToolCallView,
  Transcript,
} from "./protocol";

export type Entry =
  | { kind: "user"; key: string; text: string }
  | { kind: "assistant"; key: string; text: string; streaming: boolean }
  | { kind: "call"; key: string; call: ToolCallView }
  | { kind: "card"; key: string; card: ConfirmationCard }
  | { kind: "notice"; key: string; notice: Notice };

/** Something to tell the user that is not a chat message. */
export type Notice =
  | { type: "text"; text: string }
  | { type: "stopped"; reason: StopReason }
  | { type: "error"; error: ErrorInfo }
  | { type: "server_restarted"; server: string; reason: string };

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
          log.push({ kind: "assistant", key: `assistant-${item.id}`, text: item.text, streaming: false });
          break;
        case "tool_call":
          log.upsertCall(item.call);
          break;
        case "notice":
          log.push({ kind: "notice", key: `notice-${item.id}`, notice: { type: "text", text: item.text } });
          break;
      }
    }
    if (transcript.pending) log.addCard(transcript.pending);
    log.running = transcript.running;
    return log;
  }

  /** The card still waiting for decisions, if any. */
  pendingCard(): ConfirmationCard | null {
    for (let i = this.entries.length - 1; i >= 0; i -= 1) {
      const entry = this.entries[i];
      if (entry.kind === "card" && entry.card.calls.some((call) => call.status === "asking")) return entry.card;
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
    switch (event.type) {
      case "run_started":
        this.running = true;
        return [];
      case "text_delta":
        return [this.appendDelta(event.text)];
      case "assistant_message":
        return [this.finishAssistant(event.message_id, event.text)];
      case "tool_call_started":
      case "tool_call_finished":
        return this.upsertCall(event.call);
      case "confirmation_requested": {
        const card = this.keepDecided(event.card);
        // Chips first ("awaiting you"), then the card with the details.
        const chips = card.calls.flatMap((call) => this.upsertCall(viewOf(call, card.reply_id)));
        return [...chips, this.addCard(card)];
      }
      case "call_status_changed":
        return this.setStatus(event.call_id, event.status);
      case "server_restarted":
        return [this.notice({ type: "server_restarted", server: event.server, reason: event.reason })];
      case "run_stopped":
        this.running = false;
        return [...this.endStreaming(), ...this.stopNotice(event.reason)];
      case "error":
        return [this.notice({ type: "error", error: event.error })];
    }
  }

  private appendDelta(text: string): Entry {
    const last = this.entries[this.entries.length - 1];
    if (last && last.kind === "assistant" && last.streaming) {
      last.text += text;
      return last;
    }
    return this.push({ kind: "assistant", key: this.nextKey("assistant"), text, streaming: true });
  }

  private finishAssistant(messageId: number, text: string): Entry {
    const streaming = [...this.entries]
      .reverse()
      .find((entry): entry is Extract<Entry, { kind: "assistant" }> => entry.kind === "assistant" && entry.streaming);
    if (streaming) {
      streaming.text = text;
      streaming.streaming = false;
      return streaming;
    }
    return this.push({ kind: "assistant", key: `assistant-${messageId}`, text, streaming: false });
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

  private stopNotice(reason: StopReason): Entry[] {
    if (reason.type === "completed" || reason.type === "awaiting_confirmation") return [];
    return [this.notice({ type: "stopped", reason })];
  }

  /**
   * A card sent again (same reply_id: its preview changed) keeps the
   * decisions the core already accepted: a call decided here is not asked
   * again because the resent card still says "asking".
   */
  private keepDecided(incoming: ConfirmationCard): ConfirmationCard {
    const card = structuredClone(incoming);
    for (const call of card.calls) {
      const known = this.cardCall(call.call_id)?.status;
      if (call.status === "asking" && known !== undefined && known !== "asking") call.status = known;
    }
    return card;
  }

  private addCard(incoming: ConfirmationCard): Entry {
    // The log owns its copy: statuses change in place as events arrive.
    const card = structuredClone(incoming);
    const existing = this.entries.find((entry) => entry.kind === "card" && entry.card.reply_id === card.reply_id);
    if (existing && existing.kind === "card") {
      existing.card = card;
      return existing;
    }
    return this.push({ kind: "card", key: `card-${card.reply_id}`, card });
  }

  private upsertCall(call: ToolCallView): Entry[] {
    const existing = this.callEntry(call.call_id);
    const changed: Entry[] = [];
    if (existing) {
      existing.call = { ...existing.call, ...call };
      changed.push(existing);
    } else {
      changed.push(this.push({ kind: "call", key: `call-${call.call_id}`, call }));
    }
    changed.push(...this.setCardStatus(call.call_id, call.status));
    return changed;
  }

  private setStatus(callId: string, status: CallStatus): Entry[] {
    const changed: Entry[] = [];
    const chip = this.callEntry(callId);
    if (chip) {
      chip.call = { ...chip.call, status };
      changed.push(chip);
    }
    changed.push(...this.setCardStatus(callId, status));
    return changed;
  }

  /** Records a status the backend accepted (a decision's result). */
  markDecided(callIds: string[], status: CallStatus): Entry[] {
    return callIds.flatMap((callId) =>
      this.cardCall(callId)?.status === "asking" ? this.setStatus(callId, status) : [],
    );
  }

  private setCardStatus(callId: string, status: CallStatus): Entry[] {
    for (const entry of this.entries) {
      if (entry.kind !== "card") continue;
      const call = entry.card.calls.find((c) => c.call_id === callId);
      if (call) {
        call.status = status;
        return [entry];
      }
    }
    return [];
  }

  private cardCall(callId: string): CardCall | undefined {
    for (const entry of this.entries) {
      if (entry.kind !== "card") continue;
      const call = entry.card.calls.find((c) => c.call_id === callId);
      if (call) return call;
    }
    return undefined;
  }

  private callEntry(callId: string): Extract<Entry, { kind: "call" }> | undefined {
    return this.entries.find(
      (entry): entry is Extract<Entry, { kind: "call" }> => entry.kind === "call" && entry.call.call_id === callId,
    );
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

/** A card call as an activity chip shows it. */
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
  };
}
