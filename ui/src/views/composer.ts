// The message box: Enter sends, Shift+Enter starts a new line (and Enter
// while an input method is composing Chinese text does neither).

import { button, h } from "../dom";
import type { I18n } from "../i18n";
import { showFailure } from "./error-text";

export interface ComposerHooks {
  /** Sends `text`; resolves to false when it was not sent (the text stays). */
  send(text: string): Promise<boolean>;
  stop(): void;
}

export interface Composer {
  el: HTMLElement;
  setRunning(running: boolean): void;
  setHint(pendingCard: boolean): void;
  /** What went wrong, in the user's language; null clears it. */
  showError(failure: unknown): void;
  focus(): void;
}

export function composer(i18n: I18n, hooks: ComposerHooks): Composer {
  const { t } = i18n;
  let sending = false;
  let running = false;
  const input = h("textarea", {
    class: "composer-input",
    attrs: {
      rows: 2,
      placeholder: t("chat.placeholder"),
      "aria-label": t("chat.input"),
      "data-testid": "composer-input",
    },
    on: {
      keydown: (event) => {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
          event.preventDefault();
          void submit();
        }
      },
    },
  });
  const send = button(t("chat.send"), () => void submit(), { class: "btn btn-suggested", testid: "send" });
  const stop = button(t("chat.stop"), () => hooks.stop(), { class: "btn", testid: "stop" });
  const status = h("p", { class: "composer-status", attrs: { role: "status" } });
  const hint = h("p", { class: "composer-hint", text: t("chat.supersedeHint"), attrs: { hidden: true } });
  const error = h("p", { class: "composer-error", attrs: { role: "alert", hidden: true } });

  const refresh = (): void => {
    send.disabled = sending || running;
    stop.hidden = !running;
    status.textContent = running ? t("chat.running") : "";
  };

  async function submit(): Promise<void> {
    const text = input.value.trim();
    if (text === "" || sending || running) return;
    sending = true;
    refresh();
    showError(null);
    input.value = "";
    try {
      if (!(await hooks.send(text)) && input.value === "") input.value = text;
    } finally {
      sending = false;
      refresh();
    }
  }

  function showError(failure: unknown): void {
    showFailure(error, failure, i18n);
  }

  refresh();
  return {
    el: h(
      "div",
      { class: "composer" },
      hint,
      error,
      h("div", { class: "composer-row" }, input, h("div", { class: "composer-buttons" }, stop, send)),
      status,
    ),
    setRunning(next) {
      running = next;
      refresh();
    },
    setHint(pending) {
      hint.hidden = !pending;
    },
    showError,
    focus: () => input.focus(),
  };
}
