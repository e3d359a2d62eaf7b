// What a running call's server says of how far it has come, in a few
// words beside its elapsed time: "· 33% · 翻到第 1 页". A count with no
// total says nothing a shopper can read, so it is left out.

import { h } from "../dom";
import type { LiveCall } from "../state";

export interface ProgressLine {
  el: HTMLElement;
  show(call: LiveCall): void;
}

export function progressLine(): ProgressLine {
  const el = h("span", { class: "chip-progress", attrs: { "data-testid": "call-progress", hidden: true } });
  return {
    el,
    show(call) {
      const text = call.status === "running" && call.progress ? progressText(call.progress) : "";
      // Emptied when hidden: a line's text is what a reader (and a copy) gets.
      el.textContent = text;
      el.hidden = text === "";
    },
  };
}

export function progressText(progress: NonNullable<LiveCall["progress"]>): string {
  const parts: string[] = [];
  const { total } = progress;
  if (total !== null && total > 0 && Number.isFinite(progress.progress)) {
    const percent = Math.max(0, Math.min(100, Math.floor((progress.progress * 100) / total)));
    parts.push(`${percent}%`);
  }
  const message = progress.message?.trim();
  if (message) parts.push(message);
  return parts.map((part) => ` · ${part}`).join("");
}
