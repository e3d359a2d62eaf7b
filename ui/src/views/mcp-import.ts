// Bringing MCP servers over from other clients, and writing the user's out.
// Import: paste a configuration (or read a .json file in the page), preview
// the plan the core makes of it (names and renames, commands or URLs, env
// and header names, trust off), then add its servers in one save. The core
// reads the text again when adding and refuses if the plan changed. Export:
// the core's mcpServers text (env and header secrets left empty, secrets in
// args and URLs written as ${env:…} variables, each named), to copy.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import type { I18n, Params } from "../i18n";
import type { ImportNote, ImportPlan, ImportProblem, PlannedServer, PlannedValue, SettingsView, WithheldSecret } from "../protocol";
import { copyButton } from "./copy-button";
import { PageMessage, showFailure } from "./error-text";
import { field } from "./form";

export interface McpImportDeps {
  api: Api;
  i18n: I18n;
  /** Whether the settings form holds unsaved changes (an import would drop them). */
  unsaved(): boolean;
  /** The servers were added; the view is what the core now holds. */
  onImported(saved: SettingsView): void;
}

/** A problem the core found, in the user's language. */
export function problemText(problem: ImportProblem, i18n: I18n): string {
  const { kind, ...fields } = problem;
  const params: Params = { ...fields };
  if (problem.kind === "wrong_value") params.expected = i18n.t(`mcpImport.expected.${problem.expected}`);
  return i18n.t(`mcpImport.problem.${kind}`, params);
}

export function noteText(note: ImportNote, i18n: I18n): string {
  const { kind, ...fields } = note;
  return i18n.t(`mcpImport.note.${kind}`, fields);
}

/** The sentences naming what an export left out: values to fill in, and variables to set. */
function withheldView(withheld: WithheldSecret[], i18n: I18n): HTMLElement[] {
  const { t } = i18n;
  const empty = withheld.filter((w) => w.variable === null).map((w) => `${w.server} · ${w.name}`);
  const variables = withheld.flatMap(({ server, kind, name, variable }) =>
    variable === null ? [] : [t("mcpExport.variable", { variable, server, name: kind === "url_password" ? t("mcpExport.urlPassword") : name })],
  );
  const sentence = (testid: string, text: string): HTMLElement => h("p", { class: "import-warning", attrs: { "data-testid": testid }, text });
  return [
    ...(empty.length > 0 ? [sentence("export-withheld", t("mcpExport.withheld", { names: empty.join(", ") }))] : []),
    ...(variables.length > 0 ? [sentence("export-variables", t("mcpExport.variables", { names: variables.join(i18n.lang === "en" ? ", " : "、") }))] : []),
  ];
}

/** What an env value or header is made of: the variables it names, never a written value. */
function valueText(value: PlannedValue, i18n: I18n): string {
  const names = value.from_variables.join(", ");
  if (value.from_variables.length === 0) return i18n.t("mcpImport.value.text");
  return i18n.t(value.has_written_text ? "mcpImport.value.variablesAndText" : "mcpImport.value.variables", { names });
}

function serverItem(planned: PlannedServer, i18n: I18n): HTMLElement {
  const { t } = i18n;
  const { server } = planned;
  const stdio = "command" in server;
  const facts = [t("mcpImport.untrusted"), t("mcpImport.disabled")];
  if (planned.was_disabled) facts.push(t("mcpImport.wasDisabled"));
  if (server.timeout_secs !== null) facts.push(t("mcpImport.timeout", { secs: server.timeout_secs }));
  // Everything it will run or send, each argument on its own: a space
  // inside one cannot pass for two.
  const how = stdio
    ? [
        h("dt", { text: t("mcpImport.command") }),
        h("dd", {}, h("code", { class: "import-command", attrs: { "data-testid": "import-command" }, text: server.command })),
        ...(server.args.length === 0
          ? []
          : [
              h("dt", { text: t("mcpImport.args", { count: server.args.length }) }),
              h("dd", {}, h("ol", { class: "import-args" }, ...server.args.map((arg) => h("li", {}, h("code", { attrs: { "data-testid": "import-arg" }, text: arg }))))),
            ]),
      ]
    : [h("dt", { text: t("mcpImport.url") }), h("dd", {}, h("code", { attrs: { "data-testid": "import-url" }, text: server.url }))];
  const values =
    planned.values.length === 0
      ? []
      : [
          h("dt", { text: t(stdio ? "mcpImport.env" : "mcpImport.headers") }),
          h(
            "dd",
            {},
            h(
              "ul",
              { class: "import-values" },
              ...planned.values.map((value) =>
                h("li", { attrs: { "data-testid": "import-value", "data-name": value.name } }, h("code", { text: value.name }), " · ", valueText(value, i18n)),
              ),
            ),
          ),
        ];
  return h(
    "li",
    { attrs: { "data-testid": "import-server", "data-name": planned.name } },
    h("strong", { text: planned.name }),
    " · ",
    h("span", { class: "import-facts", text: facts.join(" · ") }),
    planned.rename
      ? h("p", { class: "import-rename", attrs: { "data-testid": "import-rename" }, text: t(`mcpImport.rename.${planned.rename}`, { original: planned.original_name, name: planned.name }) })
      : null,
    h("dl", { class: "import-how" }, ...how, ...values),
    ...planned.variables
      .filter((variable) => !variable.set)
      .map((variable) => h("p", { class: "import-warning", attrs: { "data-testid": "import-unset" }, text: t("mcpImport.variableUnset", { name: variable.name }) })),
  );
}

function planView(plan: ImportPlan, i18n: I18n, apply: HTMLButtonElement): HTMLElement {
  const { t } = i18n;
  const count = plan.servers.length;
  apply.textContent = count === 1 ? t("mcpImport.applyOne") : t("mcpImport.applyMany", { count });
  return h(
    "div",
    { class: "import-plan", attrs: { "data-testid": "import-plan" } },
    h("ul", { class: "import-servers" }, ...plan.servers.map((s) => serverItem(s, i18n))),
    plan.notes.length > 0
      ? h("div", { class: "import-notes" }, h("p", { text: t("mcpImport.notes") }), h("ul", {}, ...plan.notes.map((n) => h("li", { attrs: { "data-testid": "import-note" }, text: noteText(n, i18n) }))))
      : null,
    apply,
  );
}

function problemsView(problems: ImportProblem[], i18n: I18n): HTMLElement {
  return h(
    "div",
    { class: "import-problems", attrs: { role: "alert", "data-testid": "import-problems" } },
    h("p", { text: i18n.t("mcpImport.refused") }),
    h("ul", {}, ...problems.map((p) => h("li", { attrs: { "data-testid": "import-problem" }, text: problemText(p, i18n) }))),
  );
}

/** The import and export controls of the servers section. */
export function mcpImportSection(deps: McpImportDeps): HTMLElement {
  const { api, i18n } = deps;
  const { t } = i18n;
  const result = h("div", { class: "import-result", attrs: { "data-testid": "import-result", "aria-live": "polite" } });
  const error = h("p", { class: "save-error", attrs: { role: "alert", "data-testid": "import-error", hidden: true } });
  const text = h("textarea", { attrs: { rows: 8, spellcheck: "false", "data-testid": "import-text" } });
  // A changed text needs a new preview before anything is added.
  text.addEventListener("input", () => replace(result));
  const file = h("input", { attrs: { type: "file", accept: ".json,application/json", "data-testid": "import-file" } });
  file.addEventListener("change", () => {
    const chosen = file.files?.[0];
    if (!chosen) return;
    void chosen.text().then((content) => {
      text.value = content;
      void preview();
    });
  });

  const preview = async (): Promise<void> => {
    showFailure(error, null, i18n);
    const pasted = text.value;
    try {
      const answer = await api.previewMcpImport(pasted);
      if (answer.outcome === "refused") {
        replace(result, problemsView(answer.problems, i18n));
        return;
      }
      const apply = button("", () => void add(pasted, answer.plan), { class: "btn btn-primary", testid: "import-apply" });
      replace(result, planView(answer.plan, i18n, apply));
    } catch (failure) {
      showFailure(error, failure, i18n);
    }
  };

  const add = async (pasted: string, plan: ImportPlan): Promise<void> => {
    showFailure(error, null, i18n);
    if (deps.unsaved()) {
      showFailure(error, new PageMessage(t("mcpImport.unsaved")), i18n);
      return;
    }
    try {
      const saved = await api.applyMcpImport(pasted, plan.fingerprint);
      replace(result, h("p", { attrs: { role: "status", "data-testid": "import-added" }, text: t("mcpImport.added", { count: plan.servers.length }) }));
      deps.onImported(saved);
    } catch (failure) {
      showFailure(error, failure, i18n);
    }
  };

  const dialog = h(
    "div",
    { class: "import-dialog", attrs: { role: "group", "aria-label": t("mcpImport.open"), "data-testid": "import-dialog", hidden: true } },
    field(t("mcpImport.text"), text),
    field(t("mcpImport.file"), file),
    button(t("mcpImport.preview"), () => void preview(), { class: "btn", testid: "import-preview" }),
    error,
    result,
  );
  const toggle = button(t("mcpImport.open"), () => {
    dialog.hidden = !dialog.hidden;
    toggle.textContent = dialog.hidden ? t("mcpImport.open") : t("mcpImport.close");
    toggle.setAttribute("aria-expanded", String(!dialog.hidden));
    if (!dialog.hidden) text.focus();
  }, { class: "btn", testid: "import-servers" });
  toggle.setAttribute("aria-expanded", "false");

  const exported = h("div", { class: "export-result", attrs: { "data-testid": "export-result" } });
  const exportButton = button(t("mcpExport.button"), async () => {
    try {
      const answer = await api.exportMcpConfig();
      const area = h("textarea", { attrs: { rows: 8, readonly: true, spellcheck: "false", "data-testid": "export-text", "aria-label": t("mcpExport.text") } });
      area.value = answer.text;
      const empty = answer.text.replace(/\s/g, "") === '{"mcpServers":{}}';
      replace(
        exported,
        empty ? h("p", { text: t("mcpExport.empty") }) : null,
        area,
        copyButton(() => area.value, i18n, { aria: t("mcpExport.copy"), testid: "export-copy", class: "btn" }),
        ...withheldView(answer.withheld, i18n),
      );
    } catch (failure) {
      const message = h("p", { class: "save-error", attrs: { role: "alert" } });
      showFailure(message, failure, i18n);
      replace(exported, message);
    }
  }, { class: "btn", testid: "export-servers" });

  return h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("mcpImport.heading") } },
    h("h3", { text: t("mcpImport.heading") }),
    h("p", { class: "section-help", text: t("mcpImport.help") }),
    h("div", { class: "import-actions" }, toggle, exportButton),
    dialog,
    exported,
  );
}
