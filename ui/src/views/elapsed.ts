// How long a call has been running, shown once it passes a second and
// counted each second while it runs: a slow call is visibly alive.

import { h } from "../dom";
import type { I18n } from "../i18n";

export interface ElapsedClock {
  el: HTMLElement;
  /** The call is running (again): counts from the first time it was told. */
  running(): void;
  /** The call is no longer running: the clock goes away. */
  stop(): void;
}

/** Shown from this many milliseconds on. */
export const SHOWN_AFTER_MS = 1000;

export function elapsedClock(i18n: I18n): ElapsedClock {
  const el = h("span", { class: "chip-elapsed", attrs: { "data-testid": "call-elapsed", hidden: true } });
  let since: number | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  const draw = (): void => {
    if (since === null) return;
    const ms = Date.now() - since;
    el.hidden = ms < SHOWN_AFTER_MS;
    // Emptied when hidden: a line's text is what a reader (and a copy) gets.
    el.textContent = el.hidden ? "" : i18n.t("chip.elapsed", { seconds: Math.floor(ms / 1000) });
  };
  const stop = (): void => {
    if (timer !== null) clearInterval(timer);
    timer = null;
    since = null;
    el.hidden = true;
    el.textContent = "";
  };
  return {
    el,
    running() {
      since ??= Date.now();
      draw();
      timer ??= setInterval(() => {
        // Taken out of the page (another session shown): nothing to count for.
        if (el.isConnected) draw();
        else stop();
      }, 250);
    },
    stop,
  };
}
