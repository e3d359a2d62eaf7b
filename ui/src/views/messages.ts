// Chat messages and notices. User text is shown as typed (plain text);
// assistant text goes through the safe Markdown renderer.

import { h } from "../dom";
import type { I18n, MessageKey } from "../i18n";
import type { ModelFailureKind } from "../protocol";
import { MarkdownStream } from "../markdown-stream";
import type { Notice } from "../state";
import { addCodeCopyButtons, copyButton } from "./copy-button";
import { errorDetail } from "./error-text";

export interface MessageView<T> {
  el: HTMLElement;
  update(value: T): void;
}

/**
 * What a message's action row can do besides copying: `regenerate` asks
 * for another answer; no button is shown unless it is given.
 */
export interface MessageActions {
  regenerate?(): void;
}

/** The row under a message: copy its source, and the actions given. */
function actionRow(source: () => string, i18n: I18n, actions: MessageActions = {}): HTMLElement {
  const { t } = i18n;
  const regenerate = actions.regenerate;
  return h(
    "div",
    { class: "message-actions" },
    copyButton(source, i18n, { aria: t("copy.message"), testid: "copy-message" }),
    regenerate &&
      h("button", {
        class: "action-button",
        attrs: { type: "button", "data-testid": "regenerate", "data-label": t("message.regenerate"), "aria-label": t("message.regenerate") },
        on: { click: () => regenerate() },
      }),
  );
}

export function userMessage(text: string, i18n: I18n): MessageView<string> {
  const body = h("div", { class: "message-body message-plain" });
  let source = text;
  const el = h(
    "article",
    { class: "message message-user", attrs: { "data-testid": "message-user", "aria-label": i18n.t("chat.you") } },
    body,
    actionRow(() => source, i18n),
  );
  const update = (next: string): void => {
    source = next;
    body.textContent = next;
  };
  update(text);
  return { el, update };
}

export function assistantMessage(
  message: { text: string; streaming: boolean },
  i18n: I18n,
  actions: MessageActions = {},
): MessageView<{ text: string; streaming: boolean }> {
  const body = h("div", { class: "message-body markdown" });
  let source = message.text;
  const el = h(
    "article",
    { class: "message message-assistant", attrs: { "data-testid": "message-assistant", "aria-label": i18n.t("chat.assistant") } },
    body,
    actionRow(() => source, i18n, actions),
  );
  const markdown = new MarkdownStream(body);
  const update = (next: { text: string; streaming: boolean }): void => {
    // While streaming, the log only appends to the text (ChatLog.appendDelta),
    // so the new part is what lies past the length already shown.
    if (next.streaming && next.text.length >= markdown.length) markdown.append(next.text.slice(markdown.length));
    else markdown.show(next.text);
    source = next.text;
    addCodeCopyButtons(body, i18n);
    el.dataset.streaming = String(next.streaming);
    el.setAttribute("aria-busy", String(next.streaming));
  };
  update(message);
  return { el, update };
}

export function noticeView(notice: Notice, i18n: I18n): MessageView<Notice> {
  const isError = notice.type === "error";
  const el = h("p", {
    class: isError ? "notice notice-error" : "notice",
    attrs: { role: isError ? "alert" : "status", "data-testid": "notice" },
  });
  const update = (next: Notice): void => {
    el.textContent = noticeText(next, i18n);
    // The core's own (English) words stay available as detail.
    if (next.type === "error") el.title = errorDetail(next.error, i18n);
    if (next.type === "server_paused") el.title = next.problem;
  };
  update(notice);
  return { el, update };
}

function noticeText(notice: Notice, i18n: I18n): string {
  const { t } = i18n;
  switch (notice.type) {
    case "text":
      return notice.text;
    case "error":
      return i18n.error(notice.error);
    case "server_restarted":
      return t("chat.serverRestarted", { server: notice.server, reason: notice.reason });
    case "server_paused":
      return t("chat.serverPaused", { server: notice.server, failures: notice.failures, seconds: notice.retryInSecs });
    case "sign_in_required":
      return t("chat.signInRequired", { server: notice.server });
    case "retrying":
      return retryingText(notice, i18n, Date.now());
    case "stopped":
      switch (notice.reason.type) {
        case "max_turns":
          return t("chat.stopped.max_turns", { limit: notice.reason.limit });
        case "cancelled":
          return t("chat.stopped.cancelled");
        default:
          return t("chat.stopped.failed");
      }
  }
}

const RETRY_REASONS: Partial<Record<ModelFailureKind["type"], MessageKey>> = {
  rate_limited: "retrying.rate_limited",
  server_error: "retrying.server_error",
  unreachable: "retrying.unreachable",
  timeout: "retrying.timeout",
};

type Retrying = Extract<Notice, { type: "retrying" }>;

/** "…; retrying in 3 s (attempt 1 of 3)…", as of `now`. */
export function retryingText(notice: Retrying, i18n: I18n, now: number): string {
  const { t } = i18n;
  const reason = t(RETRY_REASONS[notice.kind.type] ?? "retrying.other");
  const seconds = Math.ceil((notice.until - now) / 1000);
  const facts = { reason, attempt: notice.attempt, retries: notice.retries };
  return seconds > 0 ? t("retrying.in", { ...facts, seconds }) : t("retrying.now", facts);
}

/** A retry notice that counts down each second until the request goes again. */
export function retryingView(notice: Retrying, i18n: I18n): MessageView<Notice> {
  const el = h("p", { class: "notice notice-retrying", attrs: { role: "status", "data-testid": "model-retrying" } });
  let shown = notice;
  const draw = (): void => {
    el.textContent = retryingText(shown, i18n, Date.now());
  };
  const timer = setInterval(() => {
    // Gone from the chat (the run moved on): stop counting.
    if (el.isConnected) draw();
    else clearInterval(timer);
  }, 1000);
  draw();
  return {
    el,
    update(next) {
      if (next.type !== "retrying") return;
      shown = next;
      draw();
    },
  };
}
