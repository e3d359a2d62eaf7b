// The argument editor's form, generated from the tool's input schema: a
// labelled control per argument (text, number stepper, select of the enum's
// titles, checkbox) and an array of objects as a small repeated group.
//
// The form edits a copy of the arguments and writes only what the user
// changed: an untouched control leaves its argument exactly as it was (an
// absent optional argument stays absent, a number keeps its digits), so the
// JSON it produces is what the raw editor would have sent for the same edit.
// Anything the schema does not let it express is kept as is and left to the
// raw JSON editor.

import { button, h } from "../dom";
import { ExactNumber, own, setOwn, type ExactJson, type ExactObject } from "../exact-json";
import type { I18n, MessageKey } from "../i18n";
import { isObject, type FieldKind, type SchemaField } from "../schema";

export type FormResult = { ok: true; value: ExactObject } | { ok: false; errors: string[] };

/** What a control says about its argument. */
type Read = { keep: true } | { set: ExactJson } | { unset: true } | { error: string };

interface Control {
  readonly el: HTMLElement;
  /** Focusable inputs, to disable while busy and to focus first. */
  readonly inputs: Array<HTMLInputElement | HTMLSelectElement | HTMLButtonElement>;
  read(): Read;
}

export class SchemaForm {
  readonly el = h("div", { class: "schema-form", attrs: { "data-testid": "arguments-form" } });
  private base: ExactObject = Object.create(null) as ExactObject;
  private controls: Array<{ field: SchemaField; control: Control }> = [];

  constructor(
    private readonly fields: SchemaField[],
    private readonly i18n: I18n,
    private readonly onChange: () => void,
  ) {}

  /** Shows `args` (what is proposed, or what the JSON editor holds) in the form. */
  set(args: ExactObject): void {
    this.base = args;
    this.controls = this.fields.map((field) => ({ field, control: this.control(field, own(args, field.name), [field.name]) }));
    this.el.replaceChildren(...this.controls.map((c) => c.control.el));
  }

  /** The arguments with the user's changes, or why they cannot be sent, each naming its field. */
  result(): FormResult {
    const value = copy(this.base);
    const errors: string[] = [];
    for (const { field, control } of this.controls) apply(value, field.name, control.read(), errors);
    return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
  }

  focus(): void {
    this.controls.flatMap((c) => c.control.inputs)[0]?.focus();
  }

  setBusy(busy: boolean): void {
    for (const { control } of this.controls) for (const input of control.inputs) input.disabled = busy;
  }

  private control(field: SchemaField, current: ExactJson | undefined, path: string[], rowLabel?: () => string): Control {
    // A row's place changes as rows are removed: its label is read when an error is worded.
    const label = (): string => (rowLabel ? `${rowLabel()} · ${this.nameOf(field)}` : this.nameOf(field));
    const type = fits(field.type, current) ? field.type : ({ kind: "other" } as const);
    switch (type.kind) {
      case "rows":
        return this.rows(field, type.fields, current, path);
      case "other":
        return {
          el: h("div", { class: "field form-other" }, h("span", { class: "field-label", text: field.label }), h("span", { class: "field-help", text: this.i18n.t("card.form.jsonOnly") })),
          inputs: [],
          read: () => ({ keep: true }),
        };
      default:
        return this.scalar(field, type, current, path, label);
    }
  }

  private scalar(field: SchemaField, type: FieldKind, current: ExactJson | undefined, path: string[], label: () => string): Control {
    const testid = `field-${path.join("-")}`;
    const attrs = { "data-testid": testid, "aria-required": field.required ? "true" : undefined };
    let input: HTMLInputElement | HTMLSelectElement;
    let initial: string;
    if (type.kind === "enum") {
      input = h(
        "select",
        { attrs },
        // The empty option stands for "leave it out".
        h("option", { text: this.i18n.t("card.empty"), attrs: { value: "" } }),
        ...type.options.map((o) => h("option", { text: o.title, attrs: { value: o.value } })),
      );
      initial = typeof current === "string" ? current : "";
    } else if (type.kind === "boolean") {
      input = h("input", { attrs: { ...attrs, type: "checkbox" } });
      initial = String(current === true);
      input.checked = current === true;
    } else if (type.kind === "integer" || type.kind === "number") {
      input = h("input", {
        attrs: { ...attrs, type: "number", step: type.kind === "integer" ? 1 : "any", min: type.minimum ?? undefined, max: type.maximum ?? undefined, inputmode: type.kind === "integer" ? "numeric" : "decimal" },
      });
      initial = current instanceof ExactNumber ? current.text : "";
    } else {
      input = h("input", { attrs: { ...attrs, type: "text", spellcheck: "false" } });
      initial = typeof current === "string" ? current : "";
    }
    if (!(input instanceof HTMLInputElement && input.type === "checkbox")) input.value = initial;
    const now = (): string => (input instanceof HTMLInputElement && input.type === "checkbox" ? String(input.checked) : input.value);
    input.addEventListener(input instanceof HTMLSelectElement || input.type === "checkbox" ? "change" : "input", () => {
      input.setAttribute("aria-invalid", String("error" in read()));
      this.onChange();
    });
    const read = (): Read => {
      const text = now();
      if (text === initial) return current === undefined && field.required ? { error: this.i18n.t("card.form.required", { label: label() }) } : { keep: true };
      if (type.kind === "boolean") return { set: input instanceof HTMLInputElement && input.checked };
      if (text.trim() === "") return field.required ? { error: this.i18n.t("card.form.required", { label: label() }) } : { unset: true };
      if (type.kind === "integer" || type.kind === "number") return this.number(type.kind, type.minimum, type.maximum, text.trim(), label());
      return { set: text };
    };
    const mark = field.required && h("span", { class: "required-mark", text: "*", attrs: { title: this.i18n.t("card.form.requiredMark").trim() } });
    const labelEl = h("label", {}, field.label, mark);
    const id = `${testid}-${Math.random().toString(36).slice(2)}`;
    input.id = id;
    labelEl.htmlFor = id;
    const el = type.kind === "boolean" ? h("div", { class: "field check" }, input, labelEl) : h("div", { class: "field" }, labelEl, input);
    return { el, inputs: [input], read };
  }

  private number(kind: "integer" | "number", min: number | null, max: number | null, text: string, label: string): Read {
    const value = Number(text);
    const shape = kind === "integer" ? /^-?\d+$/ : /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
    const ok = shape.test(text) && Number.isFinite(value) && (kind === "number" || Number.isSafeInteger(value)) && (min === null || value >= min) && (max === null || value <= max);
    if (ok) return { set: new ExactNumber(String(value)) };
    const prefix = kind === "integer" ? "int" : "num";
    const bounds = min !== null && max !== null ? "Range" : min !== null ? "Min" : max !== null ? "Max" : "";
    return { error: this.i18n.t(`card.form.${prefix}${bounds}` as MessageKey, { label, min: min ?? "", max: max ?? "" }) };
  }

  private rows(field: SchemaField, fields: SchemaField[], current: ExactJson | undefined, path: string[]): Control {
    const t = this.i18n.t;
    const base = Array.isArray(current) ? current.filter((row): row is ExactObject => isObject(row)) : [];
    const rows: Array<{ base: ExactObject; controls: Array<{ field: SchemaField; control: Control }>; el: HTMLElement }> = [];
    let touched = false;
    const list = h("ol", { class: "form-rows" });
    const inputs: Control["inputs"] = [];
    const refreshInputs = (): void => {
      inputs.length = 0;
      for (const row of rows) for (const c of row.controls) inputs.push(...c.control.inputs);
      for (const row of rows) inputs.push(...[...row.el.querySelectorAll("button")]);
      inputs.push(add);
    };
    const changed = (): void => {
      touched = true;
      this.onChange();
    };
    let serial = 0;
    const addRow = (rowBase: ExactObject): void => {
      // Test ids stay unique as rows come and go; labels follow the row's place.
      const id = String(serial++);
      const rowLabel = (): string => t("card.form.row", { label: this.nameOf(field), n: rows.indexOf(row) + 1 });
      const controls = fields.map((f) => ({ field: f, control: this.control(f, own(rowBase, f.name), [...path, id, f.name], rowLabel) }));
      const row = { base: rowBase, controls, el: h("li", { class: "form-row", attrs: { "data-testid": "form-row" } }) };
      const remove = button(t("card.form.removeRow"), () => {
        rows.splice(rows.indexOf(row), 1);
        row.el.remove();
        refreshInputs();
        changed();
      }, { class: "btn btn-flat", testid: "remove-row" });
      row.el.append(...controls.map((c) => c.control.el), remove);
      // A row's own inputs mark the group changed; it is then rewritten whole.
      // Captured, so the group counts as changed before the input's own handler reads it.
      row.el.addEventListener("input", () => (touched = true), true);
      row.el.addEventListener("change", () => (touched = true), true);
      rows.push(row);
      list.append(row.el);
    };
    const add = button(t("card.form.addRow"), () => {
      addRow(Object.create(null) as ExactObject);
      refreshInputs();
      changed();
      rows[rows.length - 1]?.controls[0]?.control.inputs[0]?.focus();
    }, { class: "btn btn-flat", testid: "add-row" });
    for (const row of base) addRow(row);
    refreshInputs();
    const mark = field.required && h("span", { class: "required-mark", text: "*", attrs: { title: t("card.form.requiredMark").trim() } });
    const el = h("fieldset", { class: "field form-group", attrs: { "data-testid": `field-${path.join("-")}` } }, h("legend", {}, field.label, mark), list, add);
    return {
      el,
      inputs,
      read: () => {
        if (!touched) return { keep: true };
        if (rows.length === 0 && field.required) return { error: t("card.form.required", { label: this.nameOf(field) }) };
        const errors: string[] = [];
        const value = rows.map((row) => {
          const item = copy(row.base);
          for (const c of row.controls) apply(item, c.field.name, c.control.read(), errors);
          return item;
        });
        return errors.length > 0 ? { error: errors.join("\n") } : { set: value };
      },
    };
  }

  /**
   * The field as an error names it. The shop's titles are Chinese; in
   * English the argument's own name reads better ("Quantity" for `quantity`).
   */
  private nameOf(field: SchemaField): string {
    if (this.i18n.lang !== "en" || !/[\u3400-\u9fff]/.test(field.label)) return field.label;
    const words = field.name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ").toLowerCase();
    return words.charAt(0).toUpperCase() + words.slice(1);
  }
}

/** Whether the value shown is one the control can hold; otherwise it is left to the JSON editor. */
function fits(type: FieldKind, current: ExactJson | undefined): boolean {
  if (current === undefined || current === null) return true;
  switch (type.kind) {
    case "enum":
      return typeof current === "string" && type.options.some((o) => o.value === current);
    case "integer":
    case "number":
      return current instanceof ExactNumber;
    case "boolean":
      return typeof current === "boolean";
    case "string":
      return typeof current === "string";
    case "rows":
      return Array.isArray(current) && current.every((row) => isObject(row));
    case "other":
      return true;
  }
}

function apply(target: ExactObject, name: string, read: Read, errors: string[]): void {
  if ("error" in read) errors.push(...read.error.split("\n"));
  else if ("set" in read) setOwn<ExactJson>(target, name, read.set);
  else if ("unset" in read) delete target[name];
}

function copy(object: ExactObject): ExactObject {
  const out = Object.create(null) as ExactObject;
  for (const key of Object.keys(object)) setOwn(out, key, own(object, key) ?? null);
  return out;
}
