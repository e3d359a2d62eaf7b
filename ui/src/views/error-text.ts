// A core error as the page shows it: the sentence in the user's language,
// the core's own (English) message only as detail in the tooltip.

import { toErrorInfo } from "../api";
import type { I18n } from "../i18n";

/** A failure the page itself words, already in the user's language. */
export class PageMessage extends Error {}

/** Fills `el` with what went wrong; `failure === null` clears and hides it. */
export function showFailure(el: HTMLElement, failure: unknown, i18n: I18n): void {
  if (failure === null) {
    el.textContent = "";
    el.removeAttribute("title");
    delete el.dataset.code;
    el.hidden = true;
    return;
  }
  el.hidden = false;
  if (failure instanceof PageMessage) {
    el.textContent = failure.message;
    el.removeAttribute("title");
    return;
  }
  const info = toErrorInfo(failure);
  el.textContent = i18n.error(info);
  el.title = errorDetail(info, i18n);
  el.dataset.code = info.code;
}

/** The core's own words about `failure`, as a tooltip's detail. */
export function errorDetail(failure: unknown, i18n: I18n): string {
  return `${i18n.t("error.details")}: ${toErrorInfo(failure).message}`;
}

/** The sentence for `failure` in the user's language. */
export function failureText(failure: unknown, i18n: I18n): string {
  return failure instanceof PageMessage ? failure.message : i18n.error(toErrorInfo(failure));
}
