// A tool activity chip: a call that needed no card. Its title and status,
// and why it did not run or failed in plain words without a click
// (`call-outcome.ts`, as a card says it); expandable to its arguments and
// output as text.

import { outcomeOf } from "../call-outcome";
import { disclosure, h, prettyJson } from "../dom";
import type { I18n } from "../i18n";
import type { ToolCallView } from "../protocol";

export interface ChipView {
  el: HTMLDetailsElement;
  update(call: ToolCallView): void;
}

export function toolChip(call: ToolCallView, i18n: I18n): ChipView {
  const title = h("span", { class: "chip-title" });
  const status = h("span", { class: "chip-status", attrs: { "data-testid": "call-status" } });
  const reason = h("span", { class: "chip-reason", attrs: { "data-testid": "call-reason" } });
  const args = h("pre", { class: "chip-pre" });
  const output = h("pre", { class: "chip-pre" });
  const el = disclosure(
    h("span", { class: "chip-summary" }, h("span", { class: "chip-dot", attrs: { "aria-hidden": "true" } }), title, status, reason),
    [
      h(
        "div",
        { class: "chip-body" },
        h("h4", { text: i18n.t("chip.arguments") }),
        args,
        h("h4", { text: i18n.t("chip.output") }),
        output,
      ),
    ],
    { class: "chip", attrs: { "data-testid": "tool-chip" } },
  );

  const update = (next: ToolCallView): void => {
    el.dataset.callId = next.call_id;
    el.dataset.status = next.status;
    el.classList.toggle("chip-error", next.is_error);
    el.classList.toggle("chip-destructive", next.destructive);
    title.textContent = next.title ?? next.tool;
    title.title = next.qualified_name;
    const outcome = outcomeOf(next, i18n);
    el.dataset.tone = outcome.tone;
    status.textContent = outcome.label;
    reason.textContent = outcome.reason ?? "";
    reason.hidden = outcome.reason === null;
    args.textContent = prettyJson(next.arguments);
    output.textContent = next.output ?? i18n.t("chip.noOutput");
  };
  update(call);
  return { el, update };
}
