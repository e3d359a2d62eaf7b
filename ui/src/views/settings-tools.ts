// Per-tool policy: ask / deny / auto-approve, keyed by `server__tool`,
// the tools grouped by what they can do (the core's `group`: read only,
// change the cart, move money, other writes) under the servers' titles.
// Auto-approve is offered only where the core honours it
// (`auto_approve_allowed`: a trusted server's write tool that is neither
// destructive nor open-world and moves no money). An auto-approve stored
// by an older version for any other tool is never honoured by the core:
// the row says so, and the next save drops it.

import type { Api } from "../api";
import { h } from "../dom";
import type { I18n, MessageKey } from "../i18n";
import type { ToolGroup, ToolPolicyView, ToolOverride } from "../protocol";
import { definitionChangePanel } from "./definition-change";
import { select } from "./form";

/** Where a changed tool's definition is read and accepted. */
export interface DefinitionDeps {
  api: Api;
  /** A definition was accepted: the tool list is out of date. */
  onAccepted(): void;
}

type Choice = "default" | ToolOverride;

/** Whether the core would honour "auto_approve" for this tool. */
export function canAutoApprove(tool: ToolPolicyView): boolean {
  return tool.auto_approve_allowed;
}

/** What the policy does for this tool with no user setting. */
function defaultDecision(tool: ToolPolicyView): "allow" | "ask" {
  return tool.trusted && tool.read_only && !tool.definition_changed ? "allow" : "ask";
}

export function toolsSection(
  overrides: { [key in string]: ToolOverride },
  tools: readonly ToolPolicyView[],
  i18n: I18n,
  definitions?: DefinitionDeps,
): HTMLElement {
  const { t } = i18n;
  const groups = GROUPS.map((group) => ({ group, tools: tools.filter((tool) => tool.group === group) })).filter(
    (entry) => entry.tools.length > 0,
  );
  return h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.tools") } },
    h("h3", { text: t("settings.tools") }),
    h("p", { class: "section-help", text: t("settings.toolsHelp") }),
    tools.length === 0
      ? h("p", { class: "empty", text: t("settings.toolsEmpty") })
      : null,
    ...groups.map(({ group, tools: members }) => toolGroup(group, members, overrides, i18n, definitions)),
  );
}

/** The groups in the order shown: what only reads first, what moves money after the cart. */
const GROUPS: readonly ToolGroup[] = ["read", "cart", "money", "other_write"];

function toolGroup(
  group: ToolGroup,
  tools: readonly ToolPolicyView[],
  overrides: { [key in string]: ToolOverride },
  i18n: I18n,
  definitions?: DefinitionDeps,
): HTMLElement {
  const { t } = i18n;
  const headingId = `tool-group-${group}`;
  const body = h("tbody");
  for (const tool of tools) {
    body.appendChild(toolRow(tool, overrides, i18n));
    if (tool.definition_changed && definitions) {
      const panel = definitionChangePanel(tool.qualified_name, { api: definitions.api, i18n, onCard: false, onAccepted: definitions.onAccepted });
      body.appendChild(h("tr", { class: "tool-change-row" }, h("td", { attrs: { colspan: 3 } }, panel)));
    }
  }
  return h(
    "div",
    { class: "tool-group", attrs: { "data-testid": "tool-group", "data-group": group, role: "group", "aria-labelledby": headingId } },
    h("h4", { text: t(`toolGroup.${group}`), attrs: { id: headingId } }),
    h(
      "table",
      { class: "tools-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...(["settings.tool", "settings.toolKind", "settings.toolPolicy"] as const).map((key) =>
            h("th", { text: t(key), attrs: { scope: "col" } }),
          ),
        ),
      ),
      body,
    ),
  );
}

function toolRow(tool: ToolPolicyView, overrides: { [key in string]: ToolOverride }, i18n: I18n): HTMLTableRowElement {
  const { t } = i18n;
  const kind: MessageKey = tool.read_only
    ? "settings.kindRead"
    : tool.moves_money
      ? "settings.kindMoney"
      : tool.destructive
        ? "settings.kindDestructive"
        : "settings.kindWrite";
  const kindClass = tool.read_only ? "read" : tool.moves_money || tool.destructive ? "destructive" : "write";
  const options: Array<{ value: Choice; label: string }> = [
    { value: "default", label: t("settings.policyDefault", { decision: t(`settings.decision.${defaultDecision(tool)}`) }) },
    { value: "ask", label: t("settings.policyAsk") },
    { value: "deny", label: t("settings.policyDeny") },
  ];
  const stored = overrides[tool.qualified_name];
  // A stored auto-approve the core would not honour is not kept.
  const stale = stored === "auto_approve" && !canAutoApprove(tool);
  if (stale) delete overrides[tool.qualified_name];
  const current = overrides[tool.qualified_name];
  if (canAutoApprove(tool)) {
    options.push({ value: "auto_approve", label: t("settings.policyAuto") });
  }
  const warning = h("p", { class: "field-warning", text: t("settings.autoWarning"), attrs: { role: "note" } });
  const staleNote = h("p", {
    class: "field-warning",
    text: t("settings.autoNotHonoured"),
    attrs: { role: "note", "data-testid": "auto-not-honoured", hidden: !stale },
  });
  const showWarning = (choice: Choice): void => {
    warning.hidden = choice !== "auto_approve";
  };
  const label = tool.title ?? tool.tool;
  const control = select<Choice>(
    options,
    current ?? "default",
    (choice) => {
      if (choice === "default") delete overrides[tool.qualified_name];
      else overrides[tool.qualified_name] = choice;
      showWarning(choice);
    },
    { "aria-label": `${t("settings.toolPolicy")}: ${label}`, "data-testid": "tool-policy" },
  );
  showWarning(current ?? "default");
  return h(
    "tr",
    { attrs: { "data-testid": "tool-row", "data-tool": tool.qualified_name } },
    h(
      "td",
      {},
      h("span", { class: "tool-title", text: label }),
      // Whose tool it is, by the server's name in these settings, and the
      // server's own name for it as its documentation writes it (not the
      // app's server__tool routing name).
      h(
        "span",
        { class: "tool-name" },
        h("span", { class: "tool-server", text: tool.server }),
        tool.title ? h("code", { text: tool.tool }) : null,
      ),
    ),
    h("td", {}, h("span", { class: `kind kind-${kindClass}`, text: t(kind) })),
    h("td", {}, control, warning, staleNote),
  );
}
