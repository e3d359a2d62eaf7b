// What changed in a tool's definition since the user first trusted it:
// each changed field, the trusted version beside the current one, and a
// button that accepts the current one. The core compares and audits;
// this view only shows its answer and sends the hash of what it showed.

import type { Api } from "../api";
import { button, h, prettyJson, replace } from "../dom";
import type { I18n } from "../i18n";
import type { DefinitionChange, DefinitionField, ToolDefinitionView } from "../protocol";
import { errorDetail, failureText, showFailure } from "./error-text";

export interface DefinitionChangeDeps {
  api: Api;
  i18n: I18n;
  /** On a card, accepting says the call still waits for its decision. */
  onCard: boolean;
  /** The core accepted the definition. */
  onAccepted?(): void;
}

/** A panel that loads the change of `qualifiedName` and shows it. */
export function definitionChangePanel(qualifiedName: string, deps: DefinitionChangeDeps): HTMLElement {
  const { t } = deps.i18n;
  const panel = h(
    "section",
    { class: "definition-change", attrs: { "data-testid": "definition-change", "data-tool": qualifiedName, "aria-label": t("definition.heading") } },
    h("p", { class: "definition-loading", text: t("definition.loading") }),
  );
  const accepted = (): void => {
    panel.dataset.accepted = "true";
    replace(panel, h("p", { class: "definition-accepted", text: t(deps.onCard ? "definition.acceptedCard" : "definition.accepted"), attrs: { role: "status", "data-testid": "definition-accepted" } }));
  };
  deps.api.toolDefinitionChange(qualifiedName).then(
    (change) => {
      if (change === null) accepted();
      else replace(panel, ...changeView(change, deps, accepted));
    },
    (error: unknown) => replace(panel, h("p", { class: "field-error", attrs: { role: "alert", title: errorDetail(error, deps.i18n) }, text: t("definition.unavailable", { message: failureText(error, deps.i18n) }) })),
  );
  return panel;
}

function changeView(change: DefinitionChange, deps: DefinitionChangeDeps, accepted: () => void): HTMLElement[] {
  const { t } = deps.i18n;
  const error = h("p", { class: "field-error", attrs: { role: "alert", hidden: true } });
  const accept = button(
    t("definition.accept"),
    async () => {
      accept.disabled = true;
      error.hidden = true;
      try {
        await deps.api.acceptToolDefinition(change.qualified_name, change.new_hash);
      } catch (failure) {
        showFailure(error, failure, deps.i18n);
        accept.disabled = false;
        return;
      }
      accepted();
      deps.onAccepted?.();
    },
    { class: "btn", testid: "accept-definition", aria: t("definition.acceptAria", { tool: change.qualified_name }) },
  );
  return [
    h("h4", { class: "definition-heading", text: t("definition.heading") }),
    ...change.changed.map((field) => fieldView(field, change.old, change.new, deps.i18n)),
    h("div", { class: "definition-actions" }, accept),
    error,
  ];
}

/** One changed field: the trusted value beside the current one. */
function fieldView(field: DefinitionField, old: ToolDefinitionView, now: ToolDefinitionView, i18n: I18n): HTMLElement {
  const { t } = i18n;
  const side = (which: "old" | "new", view: ToolDefinitionView): HTMLElement =>
    h(
      "div",
      { class: `definition-side definition-${which}`, attrs: { "data-testid": `definition-${which}` } },
      h("span", { class: "definition-side-label", text: t(which === "old" ? "definition.before" : "definition.now") }),
      valueOf(field, view, i18n),
    );
  return h(
    "div",
    { class: "definition-field", attrs: { "data-testid": "definition-field", "data-field": field } },
    h("h5", { text: t(`definition.field.${field}`) }),
    h("div", { class: "definition-sides" }, side("old", old), side("new", now)),
  );
}

function valueOf(field: DefinitionField, view: ToolDefinitionView, i18n: I18n): HTMLElement {
  const none = (): HTMLElement => h("span", { class: "definition-none", text: i18n.t("definition.none") });
  switch (field) {
    case "title":
      return view.title === null ? none() : h("p", { class: "definition-text", text: view.title });
    case "description":
      return view.description === null ? none() : h("p", { class: "definition-text", text: view.description });
    case "input_schema":
      return h("pre", { class: "definition-json", text: prettyJson(view.input_schema) });
    case "annotations":
      return view.annotations === null ? none() : h("pre", { class: "definition-json", text: prettyJson(view.annotations) });
  }
}
