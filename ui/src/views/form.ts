// Form controls for the settings screens: labelled fields and the text
// forms of maps ("KEY=VALUE" / "Name: Value" per line).

import { h, type Child } from "../dom";

let nextId = 0;

/** A label above its control; `help` below it, tied by aria-describedby. */
export function field(label: string, control: HTMLElement, help?: Child): HTMLElement {
  nextId += 1;
  const id = control.id || `field-${nextId}`;
  control.id = id;
  const helpEl = help ? h("p", { class: "field-help", attrs: { id: `${id}-help` } }, help) : null;
  if (helpEl) control.setAttribute("aria-describedby", helpEl.id);
  return h("div", { class: "field" }, h("label", { text: label, attrs: { for: id } }), control, helpEl);
}

/** A checkbox with its label to the right. */
export function checkbox(label: string, checked: boolean, onChange: (checked: boolean) => void, testid?: string): HTMLElement {
  const input = h("input", {
    attrs: { type: "checkbox", "data-testid": testid },
    on: { change: () => onChange(input.checked) },
  });
  input.checked = checked;
  return h("label", { class: "check" }, input, h("span", { text: label }));
}

export function textInput(
  value: string,
  onInput: (value: string) => void,
  attrs: Record<string, string | number | boolean | undefined> = {},
): HTMLInputElement {
  const input = h("input", {
    attrs: { type: "text", spellcheck: "false", ...attrs },
    on: { input: () => onInput(input.value) },
  });
  input.value = value;
  return input;
}

export function textArea(value: string, onInput: (value: string) => void, rows = 3): HTMLTextAreaElement {
  const area = h("textarea", {
    attrs: { rows, spellcheck: "false" },
    on: { input: () => onInput(area.value) },
  });
  area.value = value;
  return area;
}

export function select<T extends string>(
  options: Array<{ value: T; label: string }>,
  value: T,
  onChange: (value: T) => void,
  attrs: Record<string, string | undefined> = {},
): HTMLSelectElement {
  const el = h(
    "select",
    { attrs, on: { change: () => onChange(el.value as T) } },
    ...options.map((o) => h("option", { text: o.label, attrs: { value: o.value } })),
  );
  el.value = value;
  return el;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; line: string };

/** Parses one entry per line split at the first `separator`; blank lines are skipped. */
export function parsePairs(text: string, separator: string): Parsed<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.indexOf(separator);
    const key = at > 0 ? line.slice(0, at).trim() : "";
    if (key === "") return { ok: false, line };
    out[key] = line.slice(at + separator.length).trim();
  }
  return { ok: true, value: out };
}

/** A positive whole number from a field, or null. */
export function positiveInt(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return value > 0 && Number.isSafeInteger(value) ? value : null;
}
