// A tool activity chip: a call that needed no card. Its title and status,
// and why it did not run or failed in plain words without a click
// (`call-outcome.ts`, as a card says it); expandable to its arguments and
// its result. A result with structured content is shown as the shopper's
// view (result-view.ts); the text written for the model stays one click
// away under "原文/Raw".

import { outcomeOf } from "../call-outcome";
import { disclosure, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { JsonValue } from "../protocol";
import type { LiveCall } from "../state";
import type { ArgJson } from "../schema";
import { argumentList } from "./args";
import { elapsedClock } from "./elapsed";
import { progressLine } from "./progress";
import { resultView } from "./result-view";

export interface ChipView {
  el: HTMLDetailsElement;
  update(call: LiveCall): void;
}

export function toolChip(call: LiveCall, i18n: I18n): ChipView {
  const title = h("span", { class: "chip-title" });
  const status = h("span", { class: "chip-status", attrs: { "data-testid": "call-status" } });
  const reason = h("span", { class: "chip-reason", attrs: { "data-testid": "call-reason" } });
  const elapsed = elapsedClock(i18n);
  const progress = progressLine();
  const args = h("div", { class: "chip-args" });
  const output = h("pre", { class: "chip-pre" });
  const shopperView = h("div", { class: "chip-result" });
  const raw = disclosure(h("span", { text: i18n.t("result.raw") }), [output], {
    class: "chip-raw",
    attrs: { "data-testid": "result-raw" },
  });
  const result = h("div", {}, output);
  const el = disclosure(
    h("span", { class: "chip-summary" }, h("span", { class: "chip-dot", attrs: { "aria-hidden": "true" } }), title, status, progress.el, elapsed.el, reason),
    [
      h(
        "div",
        { class: "chip-body" },
        h("h4", { text: i18n.t("chip.arguments") }),
        args,
        h("h4", { text: i18n.t("chip.output") }),
        result,
      ),
    ],
    { class: "chip", attrs: { "data-testid": "tool-chip" } },
  );

  // Rebuilt only when the structured content changes, so an open "Raw" stays open.
  let shown: JsonValue | null | undefined;
  const showResult = (next: LiveCall): void => {
    const structured = next.is_error ? null : (next.structured_output ?? null);
    if (structured === shown) return;
    shown = structured;
    if (structured === null) {
      replace(result, output);
      return;
    }
    replace(shopperView, resultView(structured, i18n));
    raw.appendChild(output);
    replace(result, shopperView, raw);
  };

  const update = (next: LiveCall): void => {
    el.dataset.callId = next.call_id;
    el.dataset.status = next.status;
    el.classList.toggle("chip-error", next.is_error);
    el.classList.toggle("chip-destructive", next.destructive);
    title.textContent = next.title ?? next.tool;
    // The tool's name is for the curious (developer tools), not the shopper's words.
    title.dataset.tool = next.qualified_name;
    const outcome = outcomeOf(next, i18n);
    el.dataset.tone = outcome.tone;
    status.textContent = outcome.label;
    if (next.status === "running") elapsed.running();
    else elapsed.stop();
    progress.show(next);
    reason.textContent = outcome.reason ?? "";
    reason.hidden = outcome.reason === null;
    replace(args, argumentList(next.arguments as ArgJson, next.labels_schema ?? null, i18n));
    output.textContent = next.output ?? i18n.t("chip.noOutput");
    showResult(next);
  };
  update(call);
  return { el, update };
}
