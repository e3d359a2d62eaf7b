// The confirmation card: the calls of one model turn that wait for the user.
//
// Decisions are sent per click: approving or denying one call sends one
// respond_confirmation with that call's decision at once; approve-all /
// deny-all send every asking call's decision in one request. The core keeps
// the card pending until every asking call is decided. While a request is in
// flight the whole card is disabled, so a double click sends once. What
// became of a call is shown as the core's events say, never inferred from
// the command's answer: the core reports each decision it records
// (`call_status_changed`; for an edited approval `tool_call_approved_edited`
// with the arguments it will send; for a denial `tool_call_finished` with
// the reason) before it answers, and may already have run the calls and asked
// one again by then. A refused decision says why on the card, in the
// user's language. When what a call would do changed (`preview_changed`),
// or the user edited its arguments and is to see what the edit would do
// (`edit_previewed`), the core sends the card again with the same reply_id
// before refusing: `update` shows the new preview in place and the buttons
// come back for a fresh decision.
// Each decided call says what became of it (`call-outcome.ts`): an approval
// waiting for the rest of the batch says so, a denial shows its reason, a
// call refused by a rule says why.

import type { Api } from "../api";
import { button, formatTime, h } from "../dom";
import { outcomeOf, type CallFacts } from "../call-outcome";
import { sequenceOf } from "../card-sequence";
import type { I18n } from "../i18n";
import type { CallDecision, ConfirmationCard, ToolCallView } from "../protocol";
import { CardCallView } from "./card-call";
import { CardKeys } from "./card-keys";
import { definitionChangePanel } from "./definition-change";
import { unencryptedMark } from "./unencrypted-mark";
import { showFailure } from "./error-text";

export interface CardDeps {
  api: Api;
  i18n: I18n;
}

export interface CardView {
  el: HTMLElement;
  update(card: ConfirmationCard): void;
  /** What the core told about the calls (results, refusals, reasons). */
  showCalls(calls: ToolCallView[]): void;
}

export function confirmationCard(initial: ConfirmationCard, deps: CardDeps): CardView {
  const { t } = deps.i18n;
  let card = initial;
  let busy = false;
  const headingId = `card-${initial.reply_id}-heading`;

  const error = h("p", {
    class: "card-error",
    attrs: { role: "alert", "data-testid": "card-error", hidden: true },
  });
  const progress = h("p", { class: "card-progress", text: t("card.sending"), attrs: { hidden: true } });

  const decide = async (decisions: CallDecision[]): Promise<void> => {
    if (busy || decisions.length === 0) return;
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const hadFocus = focused !== null && el.contains(focused);
    const deciding = focused ? calls.find((c) => c.el.contains(focused)) : undefined;
    setBusy(true);
    showFailure(error, null, deps.i18n);
    let accepted = false;
    try {
      await deps.api.respondConfirmation(card.session_id, card.reply_id, decisions);
      accepted = true;
    } catch (failure) {
      showFailure(error, failure, deps.i18n);
    } finally {
      setBusy(false);
    }
    if (!accepted) {
      // Disabling took focus away from the control that was used: give it
      // back, or, when a resent card already replaced it (the editor), to
      // the approve button of what the call now proposes. A resent card
      // arriving after this moves focus there itself (card-call.ts).
      if (hadFocus) {
        if (focused?.isConnected) focused.focus();
        else if (deciding?.asking) deciding.approveButton().focus();
        else if (!keys.focusNext()) el.focus();
      }
      return;
    }
    // Keep keyboard focus on the card while it is on the page (once no call
    // asks, the chat puts a decided card in its place). The core emitted
    // its events before answering, but they come by another channel and may
    // reach the page after the answer: then `update` moves focus on again
    // when they arrive.
    if (hadFocus && el.isConnected && !keys.focusNext()) el.focus();
  };
  // The servers the settings mark as plain http elsewhere, asked once per card.
  let servers: Promise<ReadonlySet<string>> | null = null;
  const unencrypted = (): Promise<ReadonlySet<string>> =>
    (servers ??= deps.api
      .getSettings()
      .then((settings) => new Set(settings.unencrypted))
      .catch(() => new Set<string>()));
  const host = {
    i18n: deps.i18n,
    decide: (decisions: CallDecision[]) => void decide(decisions),
    // Accepting a definition decides no call: the call still asks.
    definitionChange: (name: string) => definitionChangePanel(name, { api: deps.api, i18n: deps.i18n, onCard: true }),
    serverMark: (server: string) => unencryptedMark(server, unencrypted(), deps.i18n),
  };
  const calls = card.calls.map((call) => new CardCallView(call, host));
  const facts = new Map<string, CallFacts>();
  const asking = (): CardCallView[] => calls.filter((c) => c.asking);
  const keys = new CardKeys(() => calls, deps.i18n, host.decide);

  const approveAll = button("", () => host.decide(asking().map((c) => c.approveDecision())), {
    class: "btn btn-suggested",
    testid: "approve-all",
  });
  const denyAll = button("", () => host.decide(asking().map((c) => c.denyDecision())), {
    class: "btn btn-destructive-outline",
    testid: "deny-all",
  });
  const bulk = h("div", { class: "card-bulk" }, denyAll, approveAll);
  const expires = h("p", { class: "card-expires" });

  const el = h(
    "section",
    {
      class: "card",
      attrs: {
        role: "region",
        "aria-labelledby": headingId,
        "aria-live": "polite",
        "data-testid": "confirmation-card",
        "data-reply-id": card.reply_id,
        tabindex: -1,
      },
      on: {
        keydown: (event) => {
          if (keys.keydown(event)) return;
          // Escape closes an editor; it never approves or sends anything.
          if (event.key !== "Escape") return;
          event.preventDefault();
          calls.some((c) => c.el.contains(event.target as Node) && c.escape());
        },
      },
    },
    h(
      "header",
      { class: "card-head" },
      h("h2", { text: t("card.heading"), attrs: { id: headingId } }),
      h("p", { class: "card-intro", text: t("card.intro") }),
      expires,
      keys.hint,
      keys.live,
    ),
    h("ol", { class: "card-calls" }, ...calls.map((c) => c.el)),
    bulk,
    progress,
    error,
  );

  function setBusy(next: boolean): void {
    busy = next;
    el.setAttribute("aria-busy", String(next));
    progress.hidden = !next;
    for (const c of calls) c.setBusy(next);
    approveAll.disabled = next;
    denyAll.disabled = next;
  }

  function render(): void {
    const open = asking().length;
    el.dataset.pending = String(open > 0);
    // A call the shop says cannot run is approved on its own, twice.
    bulk.hidden = open < 2;
    approveAll.hidden = asking().some((c) => c.blocked);
    approveAll.textContent = t("card.approveAll", { count: open });
    denyAll.textContent = t("card.denyAll", { count: open });
    expires.textContent = t("card.expires", { time: formatTime(card.expires_at, deps.i18n.lang) });
    expires.hidden = open === 0;
    const current = calls.map((c) => c.current);
    calls.forEach((c, i) => {
      c.setSequence(sequenceOf(current, i));
      c.showOutcome(outcomeOf({ ...noFacts, ...facts.get(c.callId), status: c.currentStatus }, deps.i18n, open));
    });
    keys.render(open);
  }

  const update = (next: ConfirmationCard): void => {
    const focused = document.activeElement;
    const leaving = calls.find((c) => c.asking && c.el.contains(focused));
    card = next;
    for (const call of next.calls) calls.find((c) => c.callId === call.call_id)?.update(call);
    render();
    // Focus was on a call that no longer asks (its buttons are gone): it
    // moves on to the next that does. While a decision is in flight the
    // buttons are disabled and `decide` moves it once the core answers.
    if (leaving && !leaving.asking && !busy && el.isConnected && !keys.focusNext()) el.focus();
  };
  const showCalls = (views: ToolCallView[]): void => {
    for (const view of views) {
      facts.set(view.call_id, view);
      calls.find((c) => c.callId === view.call_id)?.showSent(view);
    }
    render();
  };
  render();
  // Once on the page, the card takes keyboard focus on its first asking call.
  queueMicrotask(() => {
    if (el.isConnected) keys.focusNext();
  });
  return { el, update, showCalls };
}

const noFacts: CallFacts = { status: "asking", output: null, structured_output: null, rejection: null, deny_reason: null };
