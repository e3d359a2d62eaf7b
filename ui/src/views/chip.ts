// A tool activity chip: one call's title and status, expandable to show its
// arguments and output as text.

import { disclosure, h, prettyJson } from "../dom";
import type { I18n } from "../i18n";
import type { ToolCallView } from "../protocol";

export interface ChipView {
  el: HTMLDetailsElement;
  update(call: ToolCallView): void;
}

export function toolChip(call: ToolCallView, i18n: I18n): ChipView {
  const title = h("span", { class: "chip-title" });
  const status = h("span", { class: "chip-status" });
  const args = h("pre", { class: "chip-pre" });
  const output = h("pre", { class: "chip-pre" });
  const el = disclosure(
    h("span", { class: "chip-summary" }, h("span", { class: "chip-dot", attrs: { "aria-hidden": "true" } }), title, status),
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
    status.textContent = i18n.status(next.status);
    args.textContent = prettyJson(next.arguments);
    output.textContent = next.output ?? i18n.t("chip.noOutput");
  };
  update(call);
  return { el, update };
}
