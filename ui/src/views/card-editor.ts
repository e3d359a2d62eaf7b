// The argument editor of a card call: the arguments as JSON text, parsed
// locally before anything is sent, and a select for each enum argument
// that names its values by their titles ("加入购物车", not "add").

import { button, h } from "../dom";
import { ExactNumber, own, parseExact, setOwn, stringifyExact, type ExactJson } from "../exact-json";
import type { I18n } from "../i18n";
import type { JsonValue } from "../protocol";
import { enumFields, isObject, type EnumField } from "../schema";
import { field, select } from "./form";

export class Editor {
  readonly el: HTMLElement;
  private readonly textarea: HTMLTextAreaElement;
  private readonly error = h("p", { class: "field-error", attrs: { role: "alert", "data-testid": "edit-error" } });
  private readonly approveButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly choices: Array<{ field: EnumField; control: HTMLSelectElement }>;
  private parsed: JsonValue | null = null;
  private readonly i18n: I18n;

  constructor(
    args: ExactJson,
    schema: JsonValue,
    i18n: I18n,
    on: { approve(args: JsonValue): void; cancel(): void },
  ) {
    this.i18n = i18n;
    const id = `editor-${Math.random().toString(36).slice(2)}`;
    this.textarea = h("textarea", {
      class: "json-editor",
      text: stringifyExact(args),
      attrs: { id, rows: 8, spellcheck: "false", "data-testid": "arguments-editor" },
      on: {
        input: () => this.validate(),
        keydown: (event) => {
          if (event.key === "Escape") {
            event.preventDefault();
            event.stopPropagation();
            on.cancel();
          }
        },
      },
    });
    this.choices = enumFields(schema).map((f) => ({
      field: f,
      control: select(
        // The empty option stands for "absent or not one of these".
        [{ value: "", label: i18n.t("card.empty") }, ...f.options.map((o) => ({ value: o.value, label: o.title === o.value ? o.value : `${o.title} (${o.value})` }))],
        "",
        (value) => this.choose(f.name, value),
        { "data-testid": `choice-${f.name}` },
      ),
    }));
    this.approveButton = button(
      i18n.t("card.approveEdited"),
      () => {
        if (this.parsed !== null) on.approve(this.parsed);
      },
      { class: "btn btn-suggested", testid: "approve-edited" },
    );
    this.cancelButton = button(i18n.t("card.cancelEdit"), () => on.cancel(), { class: "btn", testid: "cancel-edit" });
    this.el = h(
      "div",
      { class: "card-editor" },
      this.choices.length > 0 && h("div", { class: "editor-choices" }, ...this.choices.map((c) => field(c.field.label, c.control))),
      h("label", { text: i18n.t("card.editLabel"), attrs: { for: id } }),
      this.textarea,
      this.error,
      h("div", { class: "card-actions" }, this.cancelButton, this.approveButton),
    );
    this.validate();
  }

  focus(): void {
    this.textarea.focus();
  }

  setBusy(busy: boolean): void {
    this.textarea.readOnly = busy;
    this.cancelButton.disabled = busy;
    for (const c of this.choices) c.control.disabled = busy || this.parsed === null;
    this.approveButton.disabled = busy || this.parsed === null;
  }

  /** A choice writes its value into the JSON text, which stays what is sent. */
  private choose(name: string, value: string): void {
    if (value === "") return;
    try {
      const args = parseExact(this.textarea.value);
      if (!isObject(args)) return;
      setOwn<ExactJson>(args, name, value);
      this.textarea.value = stringifyExact(args);
    } catch {
      return;
    }
    this.validate();
  }

  private validate(): void {
    let message = "";
    this.parsed = null;
    let exact: ExactJson = null;
    try {
      // An edit is sent as JavaScript values: a number they cannot hold
      // exactly is refused rather than sent changed.
      exact = parseExact(this.textarea.value);
      const inexact = inexactNumber(exact);
      const value = JSON.parse(this.textarea.value) as JsonValue;
      if (inexact) message = this.i18n.t("card.inexactNumber", { number: inexact.text });
      else if (isObject(value)) this.parsed = value;
      else message = this.i18n.t("card.notObject");
    } catch (error) {
      message = this.i18n.t("card.invalidJson", { message: error instanceof Error ? error.message : String(error) });
    }
    this.syncChoices(exact);
    this.error.textContent = message;
    this.error.hidden = message === "";
    this.textarea.setAttribute("aria-invalid", String(message !== ""));
    this.approveButton.disabled = this.parsed === null;
  }

  /** The selects follow the text; they are off while it does not parse. */
  private syncChoices(args: ExactJson): void {
    for (const { field: f, control } of this.choices) {
      const current = isObject(args) ? own(args, f.name) : undefined;
      control.value = typeof current === "string" && f.options.some((o) => o.value === current) ? current : "";
      control.disabled = this.parsed === null;
    }
  }
}

function inexactNumber(value: ExactJson): ExactNumber | null {
  if (value instanceof ExactNumber) return value.fitsNumber ? null : value;
  if (value === null || typeof value !== "object") return null;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const found = item === undefined ? null : inexactNumber(item);
    if (found) return found;
  }
  return null;
}
