// A call's arguments as a labelled list, every value as text.

import { h } from "../dom";
import type { I18n } from "../i18n";
import type { JsonValue } from "../protocol";
import { describeArguments, type ArgJson, type ArgValue } from "../schema";

export function argumentList(args: ArgJson, schema: JsonValue, i18n: I18n): HTMLElement {
  const rows = describeArguments(args, schema);
  if (rows.length === 0) return h("p", { class: "args-none", text: i18n.t("card.noArguments") });
  const list = h("dl", { class: "args" });
  for (const row of rows) {
    const dt = h("dt", { text: row.label });
    if (row.description) dt.title = row.description;
    if (row.label !== row.name && row.name) dt.dataset.name = row.name;
    list.append(dt, h("dd", {}, valueNode(row.value, i18n)));
  }
  return list;
}

function valueNode(value: ArgValue, i18n: I18n): Node {
  switch (value.kind) {
    case "empty":
      return h("span", { class: "args-empty", text: i18n.t("card.empty") });
    case "text":
      return h("span", { class: "args-text", text: value.text });
    case "choice":
      // The title reads as words; the value sent is for the curious (the raw JSON, developer tools).
      return h("span", { class: "args-choice", text: value.title, attrs: { "data-value": value.value } });
    case "table":
      return h(
        "table",
        { class: "args-table" },
        h("thead", {}, h("tr", {}, ...value.columns.map((col) => h("th", { text: col.label, attrs: { scope: "col" } })))),
        h("tbody", {}, ...value.rows.map((row) => h("tr", {}, ...row.map((cell) => h("td", { text: cell }))))),
      );
  }
}
