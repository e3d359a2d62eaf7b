// The argument editor of a card call: a form generated from the tool's
// input schema (schema-form.ts), and the arguments as JSON text for what
// the form cannot express, one toggle apart. Either way what is sent is
// parsed locally first, and the same edit gives the same JSON.

import { button, h } from "../dom";
import { ExactNumber, parseExact, stringifyExact, type ExactJson, type ExactObject } from "../exact-json";
import type { I18n } from "../i18n";
import type { JsonValue } from "../protocol";
import { isObject, schemaFields } from "../schema";
import { SchemaForm } from "./schema-form";

type Mode = "form" | "json";

export class Editor {
  readonly el: HTMLElement;
  private readonly textarea: HTMLTextAreaElement;
  private readonly jsonPane: HTMLElement;
  private readonly form: SchemaForm | null;
  private readonly error = h("p", { class: "field-error", attrs: { role: "alert", "data-testid": "edit-error" } });
  private readonly approveButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly modeButton: HTMLButtonElement;
  private readonly actions: HTMLElement;
  private mode: Mode;
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
      on: { input: () => this.validate() },
    });
    this.jsonPane = h("div", { class: "json-pane" }, h("label", { text: i18n.t("card.editLabel"), attrs: { for: id } }), this.textarea);
    const fields = schemaFields(schema);
    // A schema without properties gives the form nothing to show.
    this.form = fields.length > 0 && isObject(args) ? new SchemaForm(fields, i18n, () => this.validate()) : null;
    this.form?.set(args as ExactObject);
    this.mode = this.form ? "form" : "json";
    this.modeButton = button("", () => this.toggle(), { class: "btn btn-flat", testid: "editor-mode" });
    this.modeButton.hidden = this.form === null;
    this.approveButton = button(
      i18n.t("card.approveEdited"),
      () => {
        if (this.parsed !== null) on.approve(this.parsed);
      },
      { class: "btn btn-suggested", testid: "approve-edited" },
    );
    this.cancelButton = button(i18n.t("card.cancelEdit"), () => on.cancel(), { class: "btn", testid: "cancel-edit" });
    this.actions = h("div", { class: "card-actions" }, this.modeButton, this.cancelButton, this.approveButton);
    this.el = h(
      "div",
      {
        class: "card-editor",
        on: {
          keydown: (event) => {
            // Escape leaves the editor; it never approves.
            if (event.key !== "Escape") return;
            event.preventDefault();
            event.stopPropagation();
            on.cancel();
          },
        },
      },
      this.form?.el,
      this.jsonPane,
      this.error,
      this.actions,
    );
    this.show();
  }

  focus(): void {
    if (this.mode === "form") this.form?.focus();
    else this.textarea.focus();
  }

  /** Keeps the editor and its buttons on screen (a long card scrolls). */
  reveal(): void {
    this.el.scrollIntoView?.({ block: "nearest" });
    this.actions.scrollIntoView?.({ block: "nearest" });
  }

  setBusy(busy: boolean): void {
    this.textarea.readOnly = busy;
    this.form?.setBusy(busy);
    this.cancelButton.disabled = busy;
    this.modeButton.disabled = busy;
    this.approveButton.disabled = busy || this.parsed === null;
  }

  /** The form writes its arguments into the JSON text, and back: one edit, two views. */
  private toggle(): void {
    if (!this.form) return;
    if (this.mode === "form") {
      const result = this.form.result();
      if (result.ok) this.textarea.value = stringifyExact(result.value);
      this.mode = "json";
    } else {
      let args: ExactJson;
      try {
        args = parseExact(this.textarea.value);
      } catch {
        return; // The error under the text already says why.
      }
      if (!isObject(args)) return;
      this.form.set(args);
      this.mode = "form";
    }
    this.show();
    this.focus();
  }

  private show(): void {
    const form = this.mode === "form";
    if (this.form) this.form.el.hidden = !form;
    this.jsonPane.hidden = form;
    this.modeButton.textContent = this.i18n.t(form ? "card.editJson" : "card.editForm");
    this.validate();
  }

  private validate(): void {
    let message = "";
    this.parsed = null;
    if (this.mode === "form" && this.form) {
      const result = this.form.result();
      if (result.ok) message = this.accept(stringifyExact(result.value));
      else message = result.errors.join("\n");
    } else {
      message = this.accept(this.textarea.value);
    }
    this.error.textContent = message;
    this.error.hidden = message === "";
    this.textarea.setAttribute("aria-invalid", String(message !== "" && this.mode === "json"));
    this.approveButton.disabled = this.parsed === null;
  }

  /** Reads `text` as what would be sent; returns why it cannot be, or "". */
  private accept(text: string): string {
    try {
      // An edit is sent as JavaScript values: a number they cannot hold
      // exactly is refused rather than sent changed.
      const inexact = inexactNumber(parseExact(text));
      if (inexact) return this.i18n.t("card.inexactNumber", { number: inexact.text });
      const value = JSON.parse(text) as JsonValue;
      if (!isObject(value)) return this.i18n.t("card.notObject");
      this.parsed = value;
      return "";
    } catch (error) {
      return this.i18n.t("card.invalidJson", { message: error instanceof Error ? error.message : String(error) });
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
