// A call's preview as the shopper reads it: what the shop computed the
// write would do (goods, amounts, address, warnings), or why it could not.
// Everything is text from a server: it goes in through textContent only.

import { formatTime, h } from "../dom";
import { createI18n, type I18n, type MessageKey } from "../i18n";
import { formatFen } from "../money";
import {
  readPreview,
  type PreviewAddress,
  type PreviewContent,
  type PreviewLine,
  type PreviewTotal,
  type PreviewWarning,
  type TotalKind,
} from "../preview-content";
import type { CallPreview, CheckoutProblem } from "../protocol";
import type { Sequence } from "../card-sequence";

const ARROW = " → ";

/**
 * `used` is the address a finished call actually used (from its result):
 * a finished card shows it rather than what the preview expected.
 * `sequence`: how the preview stands to the calls above it on its card.
 */
/** Why a merchant's checkout cannot be paid, in the shopper's words. */
export function notPayableText(problem: CheckoutProblem, i18n: I18n): string {
  const reason = i18n.t(`preview.notPayable.${problem.kind}` as MessageKey, problem.kind === "currency" ? { currency: problem.currency } : {});
  return i18n.t("preview.notPayable", { reason });
}

export function previewView(
  preview: CallPreview,
  i18n: I18n,
  used: PreviewAddress | null = null,
  sequence: Sequence | null = null,
): HTMLElement {
  const { t } = i18n;
  const el = h("section", {
    class: `preview preview-${preview.outcome.type}`,
    attrs: { "data-testid": "preview", "data-outcome": preview.outcome.type, "aria-label": t("preview.label") },
  });
  const note = sequenceNote(sequence, i18n);
  if (note !== null) el.append(note);
  switch (preview.outcome.type) {
    case "computed":
      el.append(...computed(readPreview(preview.outcome.content), i18n, used, sequence?.cartWithEarlier ?? null));
      break;
    case "refused":
      el.append(h("p", { class: "preview-refused", text: t("preview.refused", { message: preview.outcome.message }) }));
      break;
    case "unavailable":
      el.append(h("p", { class: "preview-unavailable", text: t("preview.unavailable", { message: preview.outcome.message }) }));
      break;
    case "not_payable": {
      const { problem } = preview.outcome;
      el.append(h("p", { class: "preview-not-payable", attrs: { role: "alert" }, text: notPayableText(problem, i18n) }));
      if ("detail" in problem) el.append(h("p", { class: "preview-detail", text: t("preview.notPayableDetail", { detail: problem.detail }) }));
      break;
    }
  }
  el.append(
    // The tool's name is for the curious (developer tools), not the shopper's words.
    h("p", {
      class: "preview-source",
      text: t("preview.source", { time: formatTime(preview.computed_at, i18n.lang) }),
      attrs: { "data-tool": preview.tool },
    }),
  );
  return el;
}

/** Whether the numbers below count the calls above on the card. */
function sequenceNote(sequence: Sequence | null, i18n: I18n): HTMLElement | null {
  if (sequence === null) return null;
  const key = sequence.askedAgain ? "preview.askedAgain" : sequence.mayAskAgain ? "preview.mayAskAgain" : null;
  if (key === null) return null;
  return h("p", {
    class: `preview-sequence preview-sequence-${sequence.askedAgain ? "asked-again" : "may-ask-again"}`,
    text: i18n.t(key),
    attrs: { "data-testid": "preview-sequence", role: "note" },
  });
}

function computed(content: PreviewContent, i18n: I18n, used: PreviewAddress | null, cartWithEarlier: bigint | null): HTMLElement[] {
  const parts: Array<HTMLElement | null> = [
    content.summary === null ? null : h("p", { class: "preview-summary", text: content.summary, attrs: { "data-testid": "preview-summary" } }),
    warnings(content.warnings, i18n),
    content.lines.length === 0 ? null : linesTable(content.lines, i18n),
    content.totals.length === 0 ? null : totalsList(content.totals, i18n, cartWithEarlier),
    used === null ? addressBlock(content, i18n) : usedAddressBlock(used, content.addressBefore, i18n),
  ];
  return parts.filter((part): part is HTMLElement => part !== null);
}

function warnings(items: PreviewWarning[], i18n: I18n): HTMLElement | null {
  if (items.length === 0) return null;
  // Blocking ones first: they decide whether approving can work at all.
  const ordered = [...items.filter((w) => w.blocking), ...items.filter((w) => !w.blocking)];
  return h(
    "ul",
    { class: "preview-warnings" },
    ...ordered.map((w) =>
      h(
        "li",
        {
          class: w.blocking ? "preview-warning preview-warning-blocking" : "preview-warning preview-note",
          attrs: { "data-testid": "preview-warning", "data-blocking": String(w.blocking), "data-code": w.code ?? undefined },
        },
        h("strong", { text: i18n.t(w.blocking ? "preview.blocking" : "preview.note") }),
        " ",
        w.message,
      ),
    ),
  );
}

type Column = { key: MessageKey; numeric: boolean; cell(line: PreviewLine): string | Node };

const money = (fen: bigint | null): string => (fen === null ? "" : formatFen(fen));

const COLUMNS: Column[] = [
  { key: "preview.product", numeric: false, cell: productCell },
  { key: "preview.unitPrice", numeric: true, cell: (l) => money(l.unitPriceFen) },
  {
    key: "preview.quantity",
    numeric: true,
    cell: (l) => (l.quantity === null ? "" : l.quantityBefore === null ? String(l.quantity) : `${l.quantityBefore}${ARROW}${l.quantity}`),
  },
  { key: "preview.subtotal", numeric: true, cell: (l) => money(l.subtotalFen) },
  { key: "preview.stockLeft", numeric: true, cell: (l) => (l.stockLeft === null ? "" : String(l.stockLeft)) },
];

function productCell(line: PreviewLine): Node {
  return h(
    "div",
    { class: "preview-product" },
    h("span", { class: "preview-name", text: line.name }),
    line.spec && h("span", { class: "preview-spec", text: line.spec }),
    line.note && h("span", { class: "preview-line-note", text: line.note }),
  );
}

function linesTable(lines: PreviewLine[], i18n: I18n): HTMLElement {
  // A column no line fills is left out: the card is narrow.
  const used = COLUMNS.filter((col) => lines.some((line) => col.cell(line) !== ""));
  const cls = (col: Column) => (col.numeric ? "num" : undefined);
  return h(
    "div",
    { class: "preview-lines-wrap" },
    h(
      "table",
      { class: "preview-lines", attrs: { "data-testid": "preview-lines" } },
      h("thead", {}, h("tr", {}, ...used.map((col) => h("th", { class: cls(col), text: i18n.t(col.key), attrs: { scope: "col" } })))),
      h(
        "tbody",
        {},
        ...lines.map((line) =>
          h("tr", { attrs: { title: line.code ?? undefined } }, ...used.map((col) => h("td", { class: cls(col) }, col.cell(line)))),
        ),
      ),
    ),
  );
}

// The kinds' names in both languages: a server label that only repeats the
// name ("应付" beside "To pay") adds nothing.
const NAMES = [createI18n("zh-CN"), createI18n("en")];
const kindKey = (kind: TotalKind | null): MessageKey => (kind === null ? "preview.total.other" : `preview.total.${kind}`);

function totalsList(totals: PreviewTotal[], i18n: I18n, cartWithEarlier: bigint | null): HTMLElement {
  // The cart after this call and the cart changes above it on the card:
  // each preview alone counts only its own.
  const withEarlier =
    cartWithEarlier === null
      ? []
      : [
          h("dt", { class: "preview-total preview-total-cart-with-earlier", attrs: { "data-kind": "cart-with-earlier" } }, h("span", { text: i18n.t("preview.total.cartWithEarlier") })),
          h("dd", { class: "preview-total preview-total-cart-with-earlier num", text: formatFen(cartWithEarlier), attrs: { "data-testid": "cart-with-earlier" } }),
        ];
  return h(
    "dl",
    { class: "preview-totals", attrs: { "data-testid": "preview-totals" } },
    ...totals.flatMap((total) => {
      const key = kindKey(total.kind);
      const name = total.kind === null && total.label !== null ? total.label : i18n.t(key);
      const label = total.label !== null && total.label !== name && !NAMES.some((n) => n.t(key) === total.label) ? total.label : null;
      const cls = `preview-total preview-total-${total.kind ?? "other"}`;
      return [
        h("dt", { class: cls, attrs: { "data-kind": total.kind ?? "other" } }, h("span", { text: name }), label && h("span", { class: "preview-total-label", text: label })),
        h("dd", { class: `${cls} num`, text: total.amountFen === null ? "—" : formatFen(total.amountFen) }),
      ];
    }),
    ...withEarlier,
  );
}

function addressBlock(content: PreviewContent, i18n: I18n): HTMLElement | null {
  const { address: after, addressBefore: before, addressChoices: choices } = content;
  const { t } = i18n;
  if (after === null && before === null) {
    // The shop will ask which saved address: none is shown as chosen.
    if (choices.length === 0) return null;
    return addressSection(
      t("preview.address"),
      h("p", { class: "preview-address-asked", text: t("preview.addressAsked", { count: String(choices.length) }) }),
      h("ul", { class: "preview-address-choices" }, ...choices.map((choice) => h("li", {}, addressLines(choice)))),
    );
  }
  if (before === null) return addressSection(t("preview.address"), addressLines(after));
  return addressSection(
    t("preview.address"),
    beforeLine(before, i18n),
    h("div", { class: "preview-address-after" }, h("span", { class: "preview-address-tag", text: t("preview.addressAfter") }), addressLines(after)),
  );
}

/** A finished call's address: the one it used, from its result. */
function usedAddressBlock(used: PreviewAddress, before: PreviewAddress | null, i18n: I18n): HTMLElement {
  const after = h("div", { class: "preview-address-after", attrs: { "data-testid": "address-used" } }, addressLines(used));
  const body = before === null ? [after] : [beforeLine(before, i18n), after];
  return addressSection(i18n.t("preview.addressUsed"), ...body);
}

function beforeLine(before: PreviewAddress, i18n: I18n): HTMLElement {
  return h("div", { class: "preview-address-before" }, h("span", { class: "preview-address-tag", text: i18n.t("preview.addressBefore") }), addressLines(before));
}

function addressSection(heading: string, ...body: HTMLElement[]): HTMLElement {
  return h(
    "div",
    { class: "preview-address", attrs: { "data-testid": "preview-address" } },
    h("span", { class: "preview-address-heading", text: heading }),
    ...body,
  );
}

function addressLines(address: PreviewAddress | null): HTMLElement {
  const who = [address?.receiverName, address?.receiverPhone].filter((v): v is string => !!v).join(" ");
  return h(
    "address",
    {},
    who && h("span", { class: "preview-receiver", text: who }),
    address?.receiverAddress && h("span", { class: "preview-street", text: address.receiverAddress }),
    address === null && h("span", { text: "—" }),
  );
}
