// Chat messages and notices. User text is shown as typed (plain text);
// assistant text goes through the safe Markdown renderer.

import { h } from "../dom";
import type { I18n } from "../i18n";
import { MarkdownStream } from "../markdown-stream";
import type { Notice } from "../state";
import { errorDetail } from "./error-text";

export interface MessageView<T> {
  el: HTMLElement;
  update(value: T): void;
}

export function userMessage(text: string, i18n: I18n): MessageView<string> {
  const body = h("div", { class: "message-body message-plain" });
  const el = h(
    "article",
    { class: "message message-user", attrs: { "data-testid": "message-user", "aria-label": i18n.t("chat.you") } },
    body,
  );
  const update = (next: string): void => {
    body.textContent = next;
  };
  update(text);
  return { el, update };
}

export function assistantMessage(
  message: { text: string; streaming: boolean },
  i18n: I18n,
): MessageView<{ text: string; streaming: boolean }> {
  const body = h("div", { class: "message-body markdown" });
  const el = h(
    "article",
    { class: "message message-assistant", attrs: { "data-testid": "message-assistant", "aria-label": i18n.t("chat.assistant") } },
    body,
  );
  const markdown = new MarkdownStream(body);
  const update = (next: { text: string; streaming: boolean }): void => {
    // While streaming, the log only appends to the text (ChatLog.appendDelta),
    // so the new part is what lies past the length already shown.
    if (next.streaming && next.text.length >= markdown.length) markdown.append(next.text.slice(markdown.length));
    else markdown.show(next.text);
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
