// MCP servers in the standard `mcpServers` shape (command/args/env, or url
// and headers) with a `trusted` flag each. Built-in servers (the shop) are
// listed read-only: the app supplies them.

import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { ServerConfig } from "../protocol";
import { checkbox, field, formatPairs, parsePairs, select, textArea, textInput } from "./form";
import type { Section } from "./settings-model";

type Kind = "stdio" | "http";

interface Row {
  name: string;
  kind: Kind;
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
  trusted: boolean;
}

function toRow(name: string, config: ServerConfig): Row {
  const row: Row = { name, kind: "stdio", command: "", args: "", env: "", url: "", headers: "", trusted: config.trusted };
  if ("command" in config) {
    row.command = config.command;
    row.args = (config.args ?? []).join("\n");
    row.env = formatPairs(config.env ?? {}, "=");
  } else {
    row.kind = "http";
    row.url = config.url;
    row.headers = formatPairs(config.headers ?? {}, ": ");
  }
  return row;
}

type Built = { ok: true; config: ServerConfig } | { ok: false; line: string };

function fromRow(row: Row): Built {
  if (row.kind === "stdio") {
    const env = parsePairs(row.env, "=");
    if (!env.ok) return env;
    const args = row.args.split("\n").map((a) => a.trim()).filter((a) => a !== "");
    return { ok: true, config: { command: row.command.trim(), args, env: env.value, trusted: row.trusted } };
  }
  const headers = parsePairs(row.headers, ":");
  if (!headers.ok) return headers;
  return { ok: true, config: { url: row.url.trim(), headers: headers.value, trusted: row.trusted } };
}

export function serversSection(
  servers: { [name in string]: ServerConfig },
  builtin: readonly string[],
  i18n: I18n,
  write: (servers: { [name in string]: ServerConfig }) => void,
): Section {
  const { t } = i18n;
  const rows: Row[] = Object.entries(servers).map(([name, config]) => toRow(name, config));
  const list = h("div", { class: "server-list" });

  const render = (): void => replace(list, ...rows.map((row, index) => serverForm(row, index)));

  const serverForm = (row: Row, index: number): HTMLElement => {
    const transport = h("div", { class: "server-transport" });
    const renderTransport = (): void =>
      replace(
        transport,
        ...(row.kind === "stdio"
          ? [
              field(t("settings.command"), textInput(row.command, (v) => (row.command = v), { placeholder: "npx" })),
              field(t("settings.args"), textArea(row.args, (v) => (row.args = v))),
              field(t("settings.env"), textArea(row.env, (v) => (row.env = v), 2)),
            ]
          : [
              field(t("settings.url"), textInput(row.url, (v) => (row.url = v), { type: "url", placeholder: "http://127.0.0.1:8080/mcp" })),
              field(t("settings.headers"), textArea(row.headers, (v) => (row.headers = v), 2)),
            ]),
      );
    renderTransport();
    const kinds: Array<{ value: Kind; label: string }> = [
      { value: "stdio", label: t("settings.kindStdio") },
      { value: "http", label: t("settings.kindHttp") },
    ];
    return h(
      "fieldset",
      { class: "server", attrs: { "data-testid": "server-form" } },
      h("legend", { text: row.name || `#${index + 1}` }),
      field(t("settings.serverName"), textInput(row.name, (v) => (row.name = v.trim()), { pattern: "[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*", maxlength: 32 })),
      field(t("settings.serverKind"), select(kinds, row.kind, (kind) => {
        row.kind = kind;
        renderTransport();
      })),
      transport,
      checkbox(t("settings.trusted"), row.trusted, (v) => (row.trusted = v)),
      button(t("settings.removeServer", { name: row.name || `#${index + 1}` }), () => {
        rows.splice(index, 1);
        render();
      }, { class: "btn btn-destructive-outline btn-small" }),
    );
  };

  render();
  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.servers") } },
    h("h3", { text: t("settings.servers") }),
    h("p", { class: "section-help", text: t("settings.serversHelp") }),
    h(
      "ul",
      { class: "builtin-servers" },
      ...builtin.map((name) =>
        h("li", { attrs: { "data-testid": "builtin-server" } }, h("strong", { text: name }), " · ", t("settings.builtin")),
      ),
    ),
    list,
    button(t("settings.addServer"), () => {
      rows.push({ name: "", kind: "stdio", command: "", args: "", env: "", url: "", headers: "", trusted: false });
      render();
    }, { class: "btn", testid: "add-server" }),
  );

  return {
    el,
    validate() {
      const out: { [name in string]: ServerConfig } = {};
      for (const row of rows) {
        if (row.name === "") return t("settings.serverNeedsName");
        const built = fromRow(row);
        if (!built.ok) return t("settings.invalidLine", { line: built.line });
        out[row.name] = built.config;
      }
      write(out);
      return null;
    },
  };
}
