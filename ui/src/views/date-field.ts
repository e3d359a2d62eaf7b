// A date typed in the order the page's language writes it. The native
// date input follows the operating system's locale, whatever language the
// window speaks, so a Chinese window on an English system would ask for
// "mm/dd/yyyy"; this field asks in the page's own order.

import { h } from "../dom";
import type { I18n } from "../i18n";

type Part = "year" | "month" | "day";

/** The order of year, month and day in dates written in `locale`. */
export function dateOrder(locale: string): Part[] {
  const parts = new Intl.DateTimeFormat(locale, { year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(
    new Date(2026, 10, 30),
  );
  const order = parts.map((p) => p.type).filter((t): t is Part => t === "year" || t === "month" || t === "day");
  return order.length === 3 ? order : ["year", "month", "day"];
}

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

/**
 * What was typed, as "YYYY-MM-DD": in the locale's order, or year first
 * (as ISO writes it) in any locale; the separators may be "-", "/", ".",
 * spaces or 年月日. Null when it is not a real calendar date.
 */
export function parseDate(text: string, locale: string): string | null {
  const numbers = text.trim().match(/\d+/g);
  if (!numbers || numbers.length !== 3 || /[^\d\s\-/.年月日]/.test(text.trim())) return null;
  const order: Part[] = numbers[0].length === 4 ? ["year", "month", "day"] : dateOrder(locale);
  const value: Record<Part, number> = { year: 0, month: 0, day: 0 };
  order.forEach((part, i) => (value[part] = Number(numbers[i])));
  if (String(value.year).length !== 4) return null;
  const date = new Date(value.year, value.month - 1, value.day);
  const real =
    date.getFullYear() === value.year && date.getMonth() === value.month - 1 && date.getDate() === value.day;
  return real ? `${pad(value.year, 4)}-${pad(value.month, 2)}-${pad(value.day, 2)}` : null;
}

/** A "YYYY-MM-DD" date written in the locale's order, e.g. 11/30/2026. */
export function writeDate(iso: string, locale: string): string {
  const [year, month, day] = iso.split("-");
  const value: Record<Part, string> = { year, month, day };
  return dateOrder(locale)
    .map((part) => value[part])
    .join("/");
}

/** How a date is written in the page's language, e.g. 年/月/日 or MM/DD/YYYY. */
export function datePattern(i18n: I18n): string {
  return dateOrder(i18n.lang)
    .map((part) => i18n.t(`date.${part}`))
    .join("/");
}

export interface DateField {
  el: HTMLElement;
  input: HTMLInputElement;
  /** The date given, "YYYY-MM-DD"; null when empty or not a date. */
  value(): string | null;
}

/**
 * A labelled text field for one date; `onChange` runs after each change.
 * A text that is not a date is marked invalid with a sentence saying how
 * to write one, and counts as no date.
 */
export function dateField(i18n: I18n, label: string, testid: string, onChange: () => void): DateField {
  const pattern = datePattern(i18n);
  const error = h("span", { class: "date-error", attrs: { id: `${testid}-error`, "data-testid": `${testid}-error` } });
  const input = h("input", {
    attrs: {
      type: "text",
      inputmode: "numeric",
      lang: i18n.lang,
      placeholder: pattern,
      "data-testid": testid,
      "aria-describedby": `${testid}-error`,
    },
  });
  error.hidden = true;
  let value: string | null = null;
  input.addEventListener("change", () => {
    const typed = input.value.trim();
    value = typed === "" ? null : parseDate(typed, i18n.lang);
    const bad = typed !== "" && value === null;
    input.setAttribute("aria-invalid", String(bad));
    error.hidden = !bad;
    error.textContent = bad
      ? i18n.t("date.invalid", { pattern, example: writeDate("2026-11-30", i18n.lang) })
      : "";
    onChange();
  });
  const el = h("label", { class: "audit-filter" }, h("span", { text: label }), input, error);
  return { el, input, value: () => value };
}
