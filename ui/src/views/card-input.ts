// A server's request for the user's input during a call (MCP elicitation),
// as a card: a form generated from each requested schema, or for a page to
// visit its origin shown plainly with "open in browser" and "done".
// Submit (accept), decline and cancel send `answer_input`; the core checks
// the answer against the form before the server sees it, and a refusal is
// shown on the card. The server's message is its own untrusted text, set
// as text only; a request from an untrusted server is marked. Escape never
// submits. Once the core closes the request the card shows its outcome.

import type { Api } from "../api";
import { button, formatTime, h } from "../dom";
import { parseExact, stringifyExact, type ExactObject } from "../exact-json";
import type { I18n } from "../i18n";
import type { InputAsk, InputCard, InputCardOutcome, JsonValue, KeyedReply } from "../protocol";
import { schemaFields } from "../schema";
import { showFailure } from "./error-text";
import { SchemaForm } from "./schema-form";

export interface InputCardDeps {
  api: Api;
  i18n: I18n;
}

export interface InputCardView {
  el: HTMLElement;
  /** The core closed the request (answered, expired, superseded). */
  close(outcome: InputCardOutcome): void;
  /** Fills the forms with what the user sent (a card read back from the history). */
  showReplies(replies: KeyedReply[]): void;
}

interface AskView {
  el: HTMLElement;
  /** This ask's accepted answer, or the form's errors. */
  accept(): { ok: true; reply: KeyedReply } | { ok: false; errors: string[] };
  inputs(): HTMLElement[];
  /** Shows what was sent for this ask. */
  show(reply: KeyedReply["reply"]): void;
}

export function inputCardView(card: InputCard, deps: InputCardDeps): InputCardView {
  const { t } = deps.i18n;
  let busy = false;
  const headingId = `input-${card.request_id}-heading`;
  const error = h("p", { class: "card-error", attrs: { role: "alert", "data-testid": "input-error", hidden: true } });
  const progress = h("p", { class: "card-progress", text: t("input.sending"), attrs: { hidden: true } });
  const outcomeLine = h("p", { class: "input-outcome", attrs: { "data-testid": "input-outcome", hidden: true } });

  const send = async (replies: KeyedReply[]): Promise<void> => {
    if (busy) return;
    busy = true;
    setBusy(true);
    showFailure(error, null, deps.i18n);
    try {
      await deps.api.answerInput(card.session_id, card.request_id, replies);
    } catch (failure) {
      showFailure(error, failure, deps.i18n);
      busy = false;
      setBusy(false);
      return;
    }
    // Stays disabled: the core's input_closed event says what became of it.
  };

  const asks = card.asks.map((ask) => askView(ask, card, deps, send));
  const every = (reply: KeyedReply["reply"]): KeyedReply[] => card.asks.map((ask) => ({ key: ask.key, reply }));
  const submit = button(t("input.submit"), () => {
    const answers = asks.map((a) => a.accept());
    const errors = answers.flatMap((a) => (a.ok ? [] : a.errors));
    if (errors.length > 0) {
      error.textContent = errors.join("\n");
      error.hidden = false;
      return;
    }
    void send(answers.flatMap((a) => (a.ok ? [a.reply] : [])));
  }, { class: "btn btn-primary", testid: "input-submit" });
  const decline = button(t("input.decline"), () => void send(every({ type: "decline" })), { class: "btn", testid: "input-decline" });
  const cancel = button(t("input.cancel"), () => void send(every({ type: "cancel" })), { class: "btn btn-flat", testid: "input-cancel" });
  // A page to visit is accepted with its own "done"; a form with submit.
  const hasForm = card.asks.some((ask) => ask.kind.type === "form");
  const actions = h("div", { class: "card-actions" }, hasForm && submit, decline, cancel);

  const title = card.title ?? card.tool;
  const heading = h("h3", {
    attrs: { id: headingId },
    text: t(card.trusted ? "input.heading" : "input.headingUntrusted", { server: card.server }),
  });
  const el = h(
    "section",
    {
      class: `card input-card${card.trusted ? "" : " untrusted"}`,
      attrs: { "aria-labelledby": headingId, "data-testid": "input-card", "data-request-id": card.request_id, tabindex: -1 },
    },
    heading,
    !card.trusted &&
      h("p", { class: "badge badge-unverified", attrs: { "data-testid": "input-untrusted", title: t("input.untrustedHelp") }, text: t("input.untrusted") }),
    h("p", { class: "card-meta", text: t("input.forCall", { title }) }),
    card.round > 1 && h("p", { class: "card-meta", text: t("input.round", { round: card.round, max: card.max_rounds }) }),
    !card.durable && h("p", { class: "card-note", attrs: { "data-testid": "input-not-durable" }, text: t("input.notDurable") }),
    ...asks.map((a) => a.el),
    h("p", { class: "card-meta", text: t("input.expires", { time: formatTime(card.expires_at, deps.i18n.lang) }) }),
    error,
    progress,
    actions,
    outcomeLine,
  );
  // Escape never answers: it only leaves whatever field it was in.
  el.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
    }
  });

  function setBusy(on: boolean): void {
    progress.hidden = !on;
    for (const control of [submit, decline, cancel, ...asks.flatMap((a) => a.inputs())]) {
      if ("disabled" in control) (control as HTMLButtonElement).disabled = on;
    }
  }

  return {
    el,
    showReplies(replies) {
      for (const reply of replies) asks[card.asks.findIndex((ask) => ask.key === reply.key)]?.show(reply.reply);
    },
    close(outcome) {
      busy = true;
      setBusy(true);
      progress.hidden = true;
      actions.hidden = true;
      outcomeLine.textContent = t(`input.outcome.${outcome}`);
      outcomeLine.hidden = false;
      el.dataset.outcome = outcome;
    },
  };
}

function askView(ask: InputAsk, card: InputCard, deps: InputCardDeps, send: (replies: KeyedReply[]) => Promise<void>): AskView {
  const { t } = deps.i18n;
  // The server's words: text only, marked as the server's.
  const message = h("blockquote", { class: "input-message", attrs: { "data-testid": "input-message", "aria-label": t("input.message") }, text: ask.message });
  if (ask.kind.type === "url") {
    const { origin, url } = ask.kind;
    const full = h("details", {}, h("summary", { text: t("input.urlFull") }), h("code", { class: "input-full-url", text: url }));
    // No browser could take the page: say so, and show the link to copy.
    const notOpened = h("p", { class: "input-warning", attrs: { role: "alert", "data-testid": "input-not-opened", hidden: true }, text: t("input.notOpened") });
    const open = button(t("input.openInBrowser"), () => {
      notOpened.hidden = true;
      deps.api.openInputUrl(card.session_id, card.request_id, ask.key).catch(() => {
        notOpened.hidden = false;
        full.open = true;
      });
    }, { class: "btn", testid: "input-open-url" });
    const done = button(t("input.done"), () => void send([{ key: ask.key, reply: { type: "accept", content: null } }]), {
      class: "btn btn-primary",
      testid: "input-url-done",
    });
    const el = h(
      "div",
      { class: "input-ask input-url", attrs: { "data-key": ask.key } },
      message,
      h("p", { class: "input-origin", attrs: { "data-testid": "input-origin" }, text: t("input.urlOrigin", { origin }) }),
      full,
      notOpened,
      h("div", { class: "card-actions" }, open, done),
    );
    return {
      el,
      accept: () => ({ ok: true, reply: { key: ask.key, reply: { type: "accept", content: null } } }),
      inputs: () => [open, done],
      show: () => undefined,
    };
  }
  const form = new SchemaForm(schemaFields(ask.kind.schema), deps.i18n, () => undefined);
  form.set(Object.create(null));
  const el = h("div", { class: "input-ask input-form", attrs: { "data-key": ask.key } }, message, form.el);
  return {
    el,
    accept: () => {
      const result = form.result();
      if (!result.ok) return { ok: false, errors: result.errors };
      const content = JSON.parse(stringifyExact(result.value)) as JsonValue;
      return { ok: true, reply: { key: ask.key, reply: { type: "accept", content } } };
    },
    inputs: () => [...form.el.querySelectorAll<HTMLElement>("input, select, button")],
    show: (reply) => {
      const content = reply.type === "accept" ? reply.content : null;
      if (content === null || typeof content !== "object" || Array.isArray(content)) return;
      // The form reads exact JSON: numbers go in as their text.
      const exact = parseExact(JSON.stringify(content));
      if (exact !== null && typeof exact === "object" && !Array.isArray(exact)) form.set(exact as ExactObject);
    },
  };
}
