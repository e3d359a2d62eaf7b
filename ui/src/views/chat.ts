// The chat of the open session: messages, tool chips and confirmation cards
// in order, the composer below. It applies agent events for its session to
// a ChatLog and updates only the entries that changed.

import type { Api } from "../api";
import { h } from "../dom";
import type { I18n } from "../i18n";
import type { EventEnvelope } from "../protocol";
import { ChatLog, type Entry } from "../state";
import { cardEntryView } from "./card-entry";
import { inputCardView } from "./card-input";
import { toolChip } from "./chip";
import { composer, type Composer } from "./composer";
import { assistantMessage, noticeView, retryingView, userMessage } from "./messages";
import { signInNoticeView } from "./sign-in";
import { modelErrorView } from "./model-error";

export interface ChatDeps {
  api: Api;
  i18n: I18n;
  /** The open session's id, creating a session first when none is open. */
  ensureSession(): Promise<string>;
  /** A run of some session ended (its title may have changed). */
  onRunStopped?(sessionId: string): void;
  /** Shows the settings (a failed model turn's way out). */
  openSettings?(): void;
}

interface EntryView {
  el: HTMLElement;
  update(entry: Entry): void;
}

export class ChatView {
  readonly el: HTMLElement;
  private log: ChatLog | null = null;
  private readonly views = new Map<string, EntryView>();
  /** The entry whose regenerate button is shown, if any. */
  private regenerableKey: string | undefined;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly composer: Composer;
  private readonly deps: ChatDeps;

  constructor(deps: ChatDeps) {
    this.deps = deps;
    const { t } = deps.i18n;
    this.empty = h("p", { class: "chat-empty", text: t("chat.empty") });
    this.list = h("div", {
      class: "chat-log",
      attrs: { role: "log", "aria-label": t("chat.label"), "aria-live": "polite", tabindex: 0 },
    });
    this.composer = composer(deps.i18n, {
      send: (text) => this.send(text),
      stop: () => this.stop(),
    });
    this.el = h("section", { class: "chat", attrs: { "aria-label": t("chat.label") } }, this.empty, this.list, this.composer.el);
  }

  get sessionId(): string | null {
    return this.log?.sessionId ?? null;
  }

  /** Shows `log` (a reopened transcript, or a new empty session). */
  load(log: ChatLog | null): void {
    this.log = log;
    this.views.clear();
    this.regenerableKey = undefined;
    this.list.replaceChildren();
    for (const entry of log?.entries ?? []) this.render(entry);
    this.refresh();
    this.scrollToEnd(true);
  }

  /** An agent event; events of other sessions are ignored here. */
  handle(envelope: EventEnvelope): void {
    if (envelope.event.type === "run_stopped") this.deps.onRunStopped?.(envelope.session_id);
    if (!this.log || envelope.session_id !== this.log.sessionId) return;
    const nearEnd = this.isNearEnd();
    for (const entry of this.log.apply(envelope.event)) this.render(entry);
    this.refresh();
    this.scrollToEnd(nearEnd);
  }

  showError(failure: unknown): void {
    this.composer.showError(failure);
  }

  focusComposer(): void {
    this.composer.focus();
  }

  private async send(text: string): Promise<boolean> {
    let sessionId: string;
    try {
      sessionId = await this.deps.ensureSession();
    } catch (error) {
      this.composer.showError(error);
      return false;
    }
    const log = this.log;
    if (!log || log.sessionId !== sessionId) return false;
    const entry = log.addUser(text);
    this.render(entry);
    this.refresh();
    this.scrollToEnd(true);
    try {
      await this.deps.api.sendMessage(sessionId, text);
      return true;
    } catch (error) {
      log.remove(entry);
      this.views.get(entry.key)?.el.remove();
      this.views.delete(entry.key);
      this.refresh();
      this.composer.showError(error);
      return false;
    }
  }

  /** Asks for another final answer; the core withdraws the shown one. */
  private regenerate(): void {
    const sessionId = this.log?.sessionId;
    if (!sessionId) return;
    this.deps.api.regenerateAnswer(sessionId).catch((error: unknown) => this.composer.showError(error));
  }

  private stop(): void {
    const sessionId = this.log?.sessionId;
    if (!sessionId) return;
    this.deps.api.cancelRun(sessionId).catch((error: unknown) => this.composer.showError(error));
  }

  private render(entry: Entry): void {
    const existing = this.views.get(entry.key);
    if (!this.log?.entries.includes(entry)) {
      // Taken out of the log (a chip whose call moved onto its card).
      existing?.el.remove();
      this.views.delete(entry.key);
      return;
    }
    if (existing) {
      existing.update(entry);
      return;
    }
    const view = this.createView(entry);
    this.views.set(entry.key, view);
    this.list.appendChild(view.el);
  }

  private createView(entry: Entry): EntryView {
    const { i18n, api } = this.deps;
    switch (entry.kind) {
      case "user":
        return adapt(userMessage(entry.text, i18n), (e) => (e.kind === "user" ? e.text : null));
      case "assistant": {
        const message = assistantMessage(entry, i18n, { regenerate: () => this.regenerate() });
        // Shown by refresh() on the one answer that can be written again.
        message.el.querySelector('[data-testid="regenerate"]')?.setAttribute("hidden", "");
        return adapt(message, (e) => (e.kind === "assistant" ? e : null));
      }
      case "notice": {
        const { notice } = entry;
        const sessionId = this.log?.sessionId;
        if (notice.type === "error" && notice.error.model_failure && sessionId) {
          const view = modelErrorView(notice.error.model_failure, {
            api,
            i18n,
            sessionId,
            openSettings: () => this.deps.openSettings?.(),
          });
          return adapt(view, (e) => (e.kind === "notice" && e.notice.type === "error" ? e.notice.error : null));
        }
        if (notice.type === "sign_in_required") {
          const view = signInNoticeView(notice, { api, i18n });
          return adapt(view, (e) => (e.kind === "notice" && e.notice.type === "sign_in_required" ? e.notice : null));
        }
        const view = notice.type === "retrying" ? retryingView(notice, i18n) : noticeView(notice, i18n);
        return adapt(view, (e) => (e.kind === "notice" ? e.notice : null));
      }
      case "call":
        return adapt(toolChip(entry.call, i18n), (e) => (e.kind === "call" ? e.call : null));
      case "input": {
        const view = inputCardView(entry.card, { api, i18n });
        if (entry.replies) view.showReplies(entry.replies);
        if (entry.outcome !== null) view.close(entry.outcome);
        return {
          el: view.el,
          update: (e) => {
            if (e.kind === "input" && e.outcome !== null) view.close(e.outcome);
          },
        };
      }
      case "card": {
        const card = cardEntryView(entry, {
          api,
          i18n,
          focusComposer: () => this.composer.focus(),
        });
        // `el` is read through the view: a decided card replaces the live one.
        return {
          get el() {
            return card.el;
          },
          update: (e) => {
            if (e.kind === "card") card.update(e);
          },
        };
      }
    }
  }

  private refresh(): void {
    const log = this.log;
    this.empty.hidden = (log?.entries.length ?? 0) > 0;
    this.composer.setRunning(log?.running ?? false);
    this.composer.setHint(log?.pendingCard() != null || log?.pendingInput() != null);
    // Only the final answer that ends the chat can be written again; the
    // buttons change only when that answer does (refresh runs per event).
    const regenerable = log?.regenerable()?.key;
    if (regenerable !== this.regenerableKey) {
      this.regenerateButton(this.regenerableKey)?.setAttribute("hidden", "");
      this.regenerateButton(regenerable)?.removeAttribute("hidden");
      this.regenerableKey = regenerable;
    }
  }

  private regenerateButton(key: string | undefined): HTMLElement | null {
    const view = key === undefined ? undefined : this.views.get(key);
    return view?.el.querySelector<HTMLElement>(':scope > .message-actions > [data-testid="regenerate"]') ?? null;
  }

  private isNearEnd(): boolean {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
  }

  private scrollToEnd(force: boolean): void {
    if (force) this.list.scrollTop = this.list.scrollHeight;
  }
}

/** Wraps a view of one entry kind so it takes any entry (others are ignored). */
function adapt<T>(view: { el: HTMLElement; update(value: T): void }, pick: (entry: Entry) => T | null): EntryView {
  return {
    el: view.el,
    update: (entry) => {
      const value = pick(entry);
      if (value !== null) view.update(value);
    },
  };
}
