// Copy buttons: a message's Markdown source, a code block's text. The
// clipboard API where the page may use it, else a selected off-screen
// textarea and execCommand("copy"); the button says "copied" for a moment.
// Button labels are drawn from `data-label` by the stylesheet, so they are
// not part of a message's text (selecting or reading the message as text
// does not pick up "复制").

import { h } from "../dom";
import type { I18n } from "../i18n";

/** How long a button says "copied" (or that copying failed). */
export const COPIED_MS = 1500;

/** Puts `text` on the clipboard; false when neither way worked. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, page not focused): the older way may still work.
  }
  return copyBySelection(text);
}

function copyBySelection(text: string): boolean {
  const buffer = h("textarea", { class: "copy-buffer", attrs: { readonly: true, "aria-hidden": "true", tabindex: -1 } });
  buffer.value = text;
  document.body.appendChild(buffer);
  const focused = document.activeElement;
  buffer.select();
  try {
    return typeof document.execCommand === "function" && document.execCommand("copy");
  } catch {
    return false;
  } finally {
    buffer.remove();
    if (focused instanceof HTMLElement) focused.focus();
  }
}

export interface CopyButtonOptions {
  /** The button's accessible name (its visible text is just "copy"). */
  aria: string;
  testid: string;
  class?: string;
}

/** A button that copies what `source()` gives at the time of the click. */
export function copyButton(source: () => string, i18n: I18n, opts: CopyButtonOptions): HTMLButtonElement {
  const { t } = i18n;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const show = (state: "idle" | "copied" | "failed"): void => {
    const said = state === "copied" ? t("copy.done") : state === "failed" ? t("copy.failed") : null;
    el.dataset.state = state;
    el.dataset.label = said ?? t("copy.label");
    el.setAttribute("aria-label", said ?? opts.aria);
  };
  const el = h("button", {
    class: opts.class ?? "action-button",
    attrs: { type: "button", "data-testid": opts.testid, title: opts.aria, "aria-live": "polite" },
    on: {
      click: () => {
        void copyText(source()).then((ok) => {
          show(ok ? "copied" : "failed");
          clearTimeout(timer);
          timer = setTimeout(() => show("idle"), COPIED_MS);
        });
      },
    },
  });
  show("idle");
  return el;
}

/**
 * Gives every rendered code block under `root` that has none a button
 * copying its code. Called after each render: a streamed message rebuilds
 * its open tail, and the new blocks need theirs.
 */
export function addCodeCopyButtons(root: Element, i18n: I18n): void {
  for (const pre of root.querySelectorAll("pre.md-code")) {
    if (pre.querySelector(":scope > .md-copy")) continue;
    const code = pre.querySelector("code");
    pre.appendChild(copyButton(() => code?.textContent ?? "", i18n, { aria: i18n.t("copy.code"), testid: "copy-code", class: "action-button md-copy" }));
  }
}
