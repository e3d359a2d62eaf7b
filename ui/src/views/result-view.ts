// A tool's structured result as the shopper reads it: lists of things as
// tables, money as ¥, times as local dates, anything else as labelled
// fields (result-fields.ts knows the shop's shapes). Every value is text
// from a server: it goes in through textContent only.

import { formatTime, h, prettyJson } from "../dom";
import type { I18n } from "../i18n";
import { formatFen, toFen } from "../money";
import type { JsonValue } from "../protocol";
import { fieldLabel, isHiddenField, isMoneyKey, isTimeKey, profileFor } from "../result-fields";
import { isObject } from "../schema";

type Obj = { [key in string]?: JsonValue };

/** Deeper than this the value is shown as JSON text. */
const MAX_DEPTH = 6;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

export function resultView(value: JsonValue, i18n: I18n): HTMLElement {
  return h("div", { class: "result-view", attrs: { "data-testid": "result-view" } }, block(value, i18n, 0));
}

const own = (o: Obj, key: string): JsonValue | undefined =>
  Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;

const isScalar = (value: JsonValue | undefined): boolean => value === undefined || value === null || typeof value !== "object";

/** Epoch milliseconds of a time field's value, or null when it is not one. */
function timeOf(value: JsonValue | undefined): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : null;
  if (typeof value === "string" && ISO_TIME.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/** A value as text (money, a time, yes/no, a list of words); null when it has structure. */
export function valueText(key: string | null, value: JsonValue | undefined, i18n: I18n): string | null {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return i18n.t(value ? "result.yes" : "result.no");
  if (key !== null && isMoneyKey(key)) {
    const fen = toFen(value);
    if (fen !== null) return formatFen(fen);
  }
  if (key !== null && isTimeKey(key)) {
    const ms = timeOf(value);
    if (ms !== null) return formatTime(ms, i18n.lang);
  }
  if (typeof value === "string" || typeof value === "number") return String(value);
  if (Array.isArray(value) && value.every(isScalar)) {
    return value.length === 0 ? i18n.t("result.none") : value.map((v) => valueText(null, v, i18n)).join(i18n.lang === "en" ? ", " : "、");
  }
  return null;
}

function block(value: JsonValue, i18n: I18n, depth: number): Node {
  if (depth > MAX_DEPTH) return h("pre", { class: "chip-pre", text: prettyJson(value) });
  const text = valueText(null, value, i18n);
  if (text !== null) return h("span", { class: "result-text", text });
  if (Array.isArray(value)) {
    const rows = value.filter((item): item is Obj => isObject(item));
    if (rows.length === value.length) return list(rows, i18n, depth);
    return h("ul", { class: "result-items" }, ...value.map((item) => h("li", {}, block(item, i18n, depth + 1))));
  }
  return isObject(value) ? fields(value, i18n, depth) : h("span", { class: "result-text", text: String(value) });
}

const shownKeys = (o: Obj): string[] => {
  const keys = Object.keys(o);
  return keys.filter((key) => !isHiddenField(key, keys));
};

/** An object: its facts, then its lists, its amounts, and its parts. */
function fields(o: Obj, i18n: I18n, depth: number): HTMLElement {
  const facts: string[] = [];
  const lists: string[] = [];
  const amounts: string[] = [];
  const parts: string[] = [];
  for (const key of shownKeys(o)) {
    const value = own(o, key);
    if (isMoneyKey(key) && toFen(value) !== null) amounts.push(key);
    else if (valueText(key, value, i18n) !== null) facts.push(key);
    else if (Array.isArray(value)) lists.push(key);
    else parts.push(key);
  }
  const dl = (keys: string[], cls: string): HTMLElement | null =>
    keys.length === 0
      ? null
      : h(
          "dl",
          { class: cls },
          ...keys.flatMap((key) => [
            h("dt", { text: fieldLabel(key, i18n.lang) }),
            h("dd", { text: valueText(key, own(o, key), i18n) ?? "", attrs: { "data-field": key } }),
          ]),
        );
  const section = (key: string): HTMLElement =>
    h(
      "section",
      { class: "result-part", attrs: { "data-field": key } },
      h("h5", { class: "result-heading", text: fieldLabel(key, i18n.lang) }),
      block(own(o, key) ?? null, i18n, depth + 1),
    );
  if (facts.length + lists.length + amounts.length + parts.length === 0) return h("span", { class: "result-text", text: "—" });
  return h(
    "div",
    { class: "result-object" },
    dl(facts, "result-fields"),
    ...lists.map(section),
    dl(amounts, "result-fields result-amounts"),
    ...parts.map(section),
  );
}

/** A list of objects: a table, with the columns its profile names when the shop's shape is known. */
function list(rows: Obj[], i18n: I18n, depth: number): Node {
  if (rows.length === 0) return h("span", { class: "result-text", text: i18n.t("result.none") });
  const keys = [...new Set(rows.flatMap(shownKeys))];
  const profile = profileFor(keys);
  if (profile?.singleInFull && rows.length === 1) return fields(rows[0], i18n, depth);
  // A column no row fills is left out: the chip is narrow.
  const columns = (profile ? profile.columns : keys).filter((key) =>
    rows.some((row) => {
      const value = own(row, key);
      return value !== undefined && value !== null && value !== "";
    }),
  );
  const numeric = (key: string): boolean => isMoneyKey(key) || rows.every((row) => typeof own(row, key) === "number");
  const cls = (key: string) => (numeric(key) ? "num" : undefined);
  return h(
    "div",
    { class: "result-table-wrap" },
    h(
      "table",
      { class: "result-table" },
      h("thead", {}, h("tr", {}, ...columns.map((key) => h("th", { class: cls(key), text: fieldLabel(key, i18n.lang), attrs: { scope: "col", "data-field": key } })))),
      h(
        "tbody",
        {},
        ...rows.map((row) => {
          const code = own(row, "skuCode") ?? own(row, "spuCode");
          return h(
            "tr",
            { attrs: { title: typeof code === "string" ? code : undefined } },
            ...columns.map((key) => h("td", { class: cls(key), attrs: { "data-field": key } }, cell(key, own(row, key), i18n, depth))),
          );
        }),
      ),
    ),
  );
}

/** A table cell: text where it can be (specs as "颜色 黑色 · …", lines as "iPhone 17 ×1"), else the value in full. */
function cell(key: string, value: JsonValue | undefined, i18n: I18n, depth: number): Node | string {
  const text = valueText(key, value, i18n);
  if (text !== null) return text;
  if (isObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => isScalar(v));
    if (entries.length === Object.keys(value).length) {
      return h("span", { class: "result-inline", text: entries.map(([k, v]) => `${k} ${valueText(k, v, i18n) ?? ""}`).join(" · ") });
    }
  }
  if (Array.isArray(value)) {
    const named = value.map((item) => (isObject(item) ? itemName(item) : null));
    if (named.every((name) => name !== null)) return named.join(i18n.lang === "en" ? ", " : "、");
  }
  return block(value ?? null, i18n, depth + 1);
}

function itemName(o: Obj): string | null {
  const name = ["config", "name", "skuName", "code", "orderNo"].map((key) => own(o, key)).find((v) => typeof v === "string");
  if (typeof name !== "string") return null;
  const quantity = own(o, "quantity");
  return typeof quantity === "number" ? `${name} ×${quantity}` : name;
}
