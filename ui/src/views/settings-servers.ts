// MCP servers in the standard `mcpServers` shape (command/args/env, or url
// and headers) with a `trusted` flag, a `disabled` flag, an optional call
// timeout and the origins of the pages it may send the user to each. Built-in servers (the shop) are
// listed read-only: the app supplies them. Env values and headers are
// write-only: the page is told their names, never their values. A secret
// value in the args or the URL (after `--api-key`, a `?token=`…) comes as
// SECRET_MASK in place; sent back as it is, the core keeps the stored value.

import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import { SECRET_MASK, type ServerEdit, type ServerStatus } from "../protocol";
import { checkbox, field, positiveInt, select, textArea, textInput } from "./form";
import { secretMap, type SecretMap } from "./secret-fields";
import { serverStatusLine } from "./server-status";
import type { Section } from "./settings-model";

type Kind = "stdio" | "http";

interface Row {
  name: string;
  /** The name the core knows the server by, for a server already saved. */
  stored: string | null;
  kind: Kind;
  command: string;
  args: string;
  env: SecretMap;
  url: string;
  headers: SecretMap;
  trusted: boolean;
  disabled: boolean;
  /** Whole seconds as typed; empty is the app's default. */
  timeout: string;
  /** The sign-in's client id where the server registers none; empty: none. */
  clientId: string;
  /** The core found the saved address to be plain http to another computer. */
  unencrypted: boolean;
  /** Origins besides its own address whose pages it may open, one per line. */
  pageOrigins: string;
  /** For a merchant's shopping service (UCP): the merchant's origin; empty: none. */
  ucpOrigin: string;
}

function newRow(i18n: I18n, name: string, stored: ServerEdit | null, unencrypted: boolean): Row {
  const env = stored && "command" in stored ? Object.keys(stored.env) : [];
  const headers = stored && "url" in stored ? Object.keys(stored.headers) : [];
  return {
    name,
    stored: stored ? name : null,
    kind: stored && "url" in stored ? "http" : "stdio",
    command: stored && "command" in stored ? stored.command : "",
    args: stored && "command" in stored ? stored.args.join("\n") : "",
    env: secretMap(env, "=", i18n, "KEY=VALUE", "server-env"),
    url: stored && "url" in stored ? stored.url : "",
    headers: secretMap(headers, ": ", i18n, "Name: Value", "server-headers"),
    trusted: stored?.trusted ?? false,
    disabled: stored?.disabled ?? false,
    timeout: stored?.timeout_secs == null ? "" : String(stored.timeout_secs),
    clientId: stored?.oauth_client_id ?? "",
    unencrypted,
    pageOrigins: (stored?.page_origins ?? []).join("\n"),
    ucpOrigin: stored?.ucp?.origin ?? "",
  };
}

type Built = { ok: true; edit: ServerEdit } | { ok: false; line: string };

function fromRow(row: Row): Built {
  const timeout_secs = row.timeout.trim() === "" ? null : positiveInt(row.timeout);
  const page_origins = row.pageOrigins.split("\n").map((o) => o.trim()).filter((o) => o !== "");
  const behaviour = { trusted: row.trusted, disabled: row.disabled, timeout_secs, page_origins };
  if (row.kind === "stdio") {
    const env = row.env.collect();
    if (!env.ok) return env;
    const args = row.args.split("\n").map((a) => a.trim()).filter((a) => a !== "");
    return { ok: true, edit: { command: row.command.trim(), args, env: env.value, ...behaviour } };
  }
  const headers = row.headers.collect();
  if (!headers.ok) return headers;
  const oauth_client_id = row.clientId.trim() === "" ? null : row.clientId.trim();
  // Only a merchant's service says so: any other server keeps the plain shape.
  const ucp = row.ucpOrigin.trim() === "" ? {} : { ucp: { origin: row.ucpOrigin.trim() } };
  return { ok: true, edit: { url: row.url.trim(), headers: headers.value, ...behaviour, oauth_client_id, ...ucp } };
}

/**
 * The servers' forms, each saved server with its process's status as
 * `statuses` reads it. `write` gets every server as the page saves it, and
 * the renamed ones: new name to the name it was saved under.
 */
export function serversSection(
  servers: { [name in string]?: ServerEdit },
  unencrypted: readonly string[],
  builtin: readonly string[],
  i18n: I18n,
  write: (servers: { [name in string]: ServerEdit }, renamed: { [name in string]: string }) => void,
  statuses: () => Promise<readonly ServerStatus[]> = async () => [],
): Section {
  const { t } = i18n;
  // Filled in once the core answers, for the servers it knows; a server
  // not yet saved has none. A slot in a line (`inline`) is set off by " · ".
  const statusSlots = new Map<string, { slot: HTMLElement; inline: boolean }>();
  const statusSlot = (name: string, inline = false): HTMLElement => {
    const known = statusSlots.get(name) ?? { slot: h(inline ? "span" : "p", { class: "server-status-row" }), inline };
    statusSlots.set(name, known);
    return known.slot;
  };
  const rows: Row[] = Object.entries(servers).map(([name, view]) => newRow(i18n, name, view ?? null, unencrypted.includes(name)));
  const list = h("div", { class: "server-list" });

  const render = (): void => replace(list, ...rows.map((row, index) => serverForm(row, index)));

  const serverForm = (row: Row, index: number): HTMLElement => {
    const transport = h("div", { class: "server-transport" });
    // Said only where a stored value is hidden, so it is not read as text to retype.
    const masked = (text: string): string | undefined => (text.includes(SECRET_MASK) ? t("settings.maskedKept", { mask: SECRET_MASK }) : undefined);
    const args = textArea(row.args, (v) => (row.args = v));
    args.dataset.testid = "server-args";
    const pageOrigins = textArea(row.pageOrigins, (v) => (row.pageOrigins = v), 2);
    pageOrigins.dataset.testid = "server-page-origins";
    pageOrigins.placeholder = "https://pay.example.com";
    const renderTransport = (): void =>
      replace(
        transport,
        ...(row.kind === "stdio"
          ? [
              field(t("settings.command"), textInput(row.command, (v) => (row.command = v), { placeholder: "npx" })),
              field(t("settings.args"), args, masked(row.args)),
              field(t("settings.env"), row.env.el),
            ]
          : [
              field(t("settings.url"), textInput(row.url, (v) => (row.url = v), { type: "url", placeholder: "http://127.0.0.1:8080/mcp", "data-testid": "server-url" }), masked(row.url)),
              ...(row.unencrypted
                ? [h("p", { class: "field-warning", attrs: { "data-testid": "server-unencrypted" }, text: t("settings.unencrypted") })]
                : []),
              field(t("settings.headers"), row.headers.el),
              field(
                t("settings.clientId"),
                textInput(row.clientId, (v) => (row.clientId = v), { "data-testid": "server-client-id" }),
                t("settings.clientIdHelp"),
              ),
              field(
                t("settings.ucpOrigin"),
                textInput(row.ucpOrigin, (v) => (row.ucpOrigin = v), { type: "url", placeholder: "https://shop.example.com", "data-testid": "server-ucp-origin" }),
                t("settings.ucpOriginHelp"),
              ),
            ]),
      );
    renderTransport();
    const kinds: Array<{ value: Kind; label: string }> = [
      { value: "stdio", label: t("settings.kindStdio") },
      { value: "http", label: t("settings.kindHttp") },
    ];
    return h(
      "fieldset",
      { class: "server", attrs: { "data-testid": "server-form", "data-name": row.name } },
      h("legend", { text: row.name || `#${index + 1}` }),
      ...(row.stored === null ? [] : [statusSlot(row.stored)]),
      field(t("settings.serverName"), textInput(row.name, (v) => (row.name = v.trim()), { pattern: "[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*", maxlength: 32 })),
      field(t("settings.serverKind"), select(kinds, row.kind, (kind) => {
        row.kind = kind;
        renderTransport();
      })),
      transport,
      checkbox(t("settings.trusted"), row.trusted, (v) => (row.trusted = v)),
      checkbox(t("settings.serverDisabled"), row.disabled, (v) => (row.disabled = v), "server-disabled"),
      field(t("settings.serverTimeout"), textInput(row.timeout, (v) => (row.timeout = v), { inputmode: "numeric", placeholder: "120", "data-testid": "server-timeout" })),
      field(t("settings.pageOrigins"), pageOrigins, t("settings.pageOriginsHelp")),
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
        h("li", { attrs: { "data-testid": "builtin-server" } }, h("strong", { text: name }), " · ", t("settings.builtin"), statusSlot(name, true)),
      ),
    ),
    list,
    button(t("settings.addServer"), () => {
      rows.push(newRow(i18n, "", null, false));
      render();
    }, { class: "btn", testid: "add-server" }),
  );

  void statuses().then(
    (known) => {
      for (const [name, { slot, inline }] of statusSlots) {
        const status = known.find((s) => s.name === name);
        if (status) replace(slot, ...(inline ? [" · "] : []), serverStatusLine(status, i18n));
      }
    },
    () => undefined,
  );

  return {
    el,
    validate() {
      const out: { [name in string]: ServerEdit } = {};
      const renamed: { [name in string]: string } = {};
      for (const row of rows) {
        if (row.name === "") return t("settings.serverNeedsName");
        if (row.timeout.trim() !== "" && positiveInt(row.timeout) === null) return t("settings.invalidNumber", { field: t("settings.serverTimeout") });
        const built = fromRow(row);
        if (!built.ok) return t("settings.invalidLine", { line: built.line });
        out[row.name] = built.edit;
        if (row.stored !== null && row.stored !== row.name) renamed[row.name] = row.stored;
      }
      write(out, renamed);
      return null;
    },
  };
}
