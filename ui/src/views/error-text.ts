// A core error as the page shows it: the sentence in the user's language,
// the core's own (English) message only as detail in the tooltip.

import { toErrorInfo } from "../api";
import type { I18n } from "../i18n";

/** Fills `el` with what went wrong; `failure === null` clears and hides it. */
export function showFailure(el: HTMLElement, failure: unknown, i18n: I18n): void {
  if (failure === null) {
    el.textContent = "";
    el.removeAttribute("title");
    delete el.dataset.code;
    el.hidden = true;
    return;
  }
  const info = toErrorInfo(failure);
  el.textContent = i18n.error(info);
  el.title = `${i18n.t("error.details")}: ${info.message}`;
  el.dataset.code = info.code;
  el.hidden = false;
}
