// A decided card: one line per call saying what became of it ("✓ 已完成 ·
// 加入购物车…", "✗ 失败 · <the shop's reason>"), each expandable to what
// the card showed (the preview, the arguments) and the result. Built only
// from the calls' stored views, so a live chat and a reopened one draw the
// same card.

import { disclosure, h, replace } from "../dom";
import type { I18n } from "../i18n";
import { outcomeOf } from "../call-outcome";
import { readPreview, resultAddress } from "../preview-content";
import type { ToolCallView } from "../protocol";
import type { LiveCall } from "../state";
import type { ArgJson } from "../schema";
import { argumentList } from "./args";
import { elapsedClock } from "./elapsed";
import { progressLine } from "./progress";
import { previewView } from "./card-preview";

export interface DecidedCardView {
  el: HTMLElement;
  update(calls: LiveCall[]): void;
}

export function decidedCard(replyId: string, calls: LiveCall[], i18n: I18n): DecidedCardView {
  const list = h("ol", { class: "card-calls card-lines" });
  const el = h(
    "section",
    {
      class: "card card-decided",
      attrs: {
        role: "region",
        "aria-label": i18n.t("card.heading"),
        "data-testid": "confirmation-card",
        "data-reply-id": replyId,
        "data-pending": "false",
        tabindex: -1,
      },
    },
    list,
  );
  const lines = new Map<string, { el: HTMLLIElement; update(call: LiveCall): void }>();
  const update = (next: LiveCall[]): void => {
    const shown = next.map((call) => {
      let line = lines.get(call.call_id);
      if (!line) {
        line = decidedLine(call, i18n);
        lines.set(call.call_id, line);
      }
      line.update(call);
      return line.el;
    });
    replace(list, ...shown);
  };
  update(calls);
  return { el, update };
}

/** What the call does in a few words: its preview's summary, else its title. */
export function callSummary(call: Pick<ToolCallView, "preview" | "title" | "tool">): string {
  const outcome = call.preview?.outcome;
  const summary = outcome?.type === "computed" ? readPreview(outcome.content).summary : null;
  return summary ?? call.title ?? call.tool;
}

function decidedLine(initial: LiveCall, i18n: I18n): { el: HTMLLIElement; update(call: LiveCall): void } {
  const mark = h("span", { class: "line-mark", attrs: { "aria-hidden": "true" } });
  const label = h("span", { class: "line-status", attrs: { "data-testid": "call-status" } });
  const elapsed = elapsedClock(i18n);
  const progress = progressLine();
  const what = h("span", { class: "line-what" });
  const reason = h("span", { class: "line-reason", attrs: { "data-testid": "call-reason" } });
  const body = h("div", { class: "line-body" });
  const beforeReason = separator();
  const line = h("span", { class: "line-summary" }, mark, " ", label, progress.el, elapsed.el, separator(), what, beforeReason, reason);
  const details = disclosure(line, [body], {
    class: "card-line",
    attrs: { "data-testid": "card-line", title: i18n.t("outcome.details") },
  });
  const el = h("li", { class: "card-call", attrs: { "data-testid": "card-call" } }, details);
  let drawn = "";
  const update = (call: LiveCall): void => {
    const outcome = outcomeOf(call, i18n);
    el.dataset.callId = call.call_id;
    el.dataset.status = call.status;
    el.dataset.tone = outcome.tone;
    mark.textContent = outcome.mark;
    label.textContent = outcome.label;
    if (call.status === "running") elapsed.running();
    else elapsed.stop();
    progress.show(call);
    what.textContent = callSummary(call);
    what.dataset.tool = call.qualified_name;
    reason.textContent = outcome.reason ?? "";
    reason.hidden = outcome.reason === null;
    // Emptied, not hidden: the line's text is what a reader (and a copy) gets.
    beforeReason.textContent = outcome.reason === null ? "" : " · ";
    // The body is drawn again only when what it shows changed.
    const key = JSON.stringify([call.preview, call.arguments, call.output]);
    if (key !== drawn) {
      drawn = key;
      replace(body, ...lineBody(call, i18n));
    }
  };
  update(initial);
  return { el, update };
}

function separator(): HTMLElement {
  return h("span", { class: "line-sep", text: " · ", attrs: { "aria-hidden": "true" } });
}

function lineBody(call: ToolCallView, i18n: I18n): HTMLElement[] {
  const { t } = i18n;
  return [
    // A finished write shows the address it used, which the shop may have
    // asked for after the card was approved.
    call.preview === null ? null : previewView(call.preview, i18n, call.status === "succeeded" ? resultAddress(call.structured_output) : null),
    h("h4", { text: t("card.arguments") }),
    argumentList(call.arguments as ArgJson, call.labels_schema ?? null, i18n),
    h("h4", { text: t("chip.output") }),
    h("pre", { class: "chip-pre", text: call.output ?? t("chip.noOutput") }),
  ].filter((part): part is HTMLElement => part !== null);
}
