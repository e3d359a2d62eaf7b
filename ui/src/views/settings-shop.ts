// Which shop the assistant uses (the local demo the app starts, or the
// online shop at a URL, trusted as the shop either way), and the servers
// that ask the user to sign in: who is signed in, sign in, sign out.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { ServerStatus, SettingsEdit } from "../protocol";
import { field, select, textInput } from "./form";
import type { Section } from "./settings-model";
import { signInControl } from "./sign-in";

type ShopKind = "local" | "online";

/** The shop choice, written into `draft.shop`. */
export function shopSection(draft: SettingsEdit, i18n: I18n): Section {
  const { t } = i18n;
  const current = draft.shop ?? { kind: "local" };
  let kind: ShopKind = current.kind;
  let url = current.kind === "online" ? current.url : "";
  const urlField = field(
    t("settings.shopUrl"),
    textInput(url, (value) => (url = value), { type: "url", placeholder: "https://shop.example.com/mcp", "data-testid": "shop-url" }),
    t("settings.shopUrlHelp"),
  );
  urlField.hidden = kind === "local";
  const choice = select<ShopKind>(
    [
      { value: "local", label: t("settings.shopLocal") },
      { value: "online", label: t("settings.shopOnline") },
    ],
    kind,
    (value) => {
      kind = value;
      urlField.hidden = kind === "local";
    },
    { "data-testid": "shop-kind" },
  );
  let platformProfile = draft.ucp_platform_profile;
  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.shop") } },
    h("h3", { text: t("settings.shop") }),
    field(t("settings.shopKind"), choice),
    urlField,
    field(
      t("settings.platformProfile"),
      textInput(platformProfile, (value) => (platformProfile = value), { type: "url", "data-testid": "platform-profile" }),
      t("settings.platformProfileHelp"),
    ),
  );
  return {
    el,
    validate() {
      draft.ucp_platform_profile = platformProfile.trim();
      if (kind === "local") {
        draft.shop = { kind: "local" };
        return null;
      }
      if (url.trim() === "") return t("settings.shopUrlMissing");
      draft.shop = { kind: "online", url: url.trim() };
      return null;
    },
  };
}

/**
 * The servers that ask for a sign-in, each with who is signed in and a
 * way to sign in or out. Read from the core when shown and after each
 * change; nothing here is saved with the settings.
 */
export function signInsSection(api: Api, i18n: I18n): HTMLElement {
  const { t } = i18n;
  const list = h("ul", { class: "sign-ins", attrs: { "data-testid": "sign-ins" } });
  const el = h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("settings.signIns") } },
    h("h3", { text: t("settings.signIns") }),
    list,
  );

  const row = (status: ServerStatus): HTMLElement => {
    const name = h("strong", { text: status.name });
    if (status.sign_in?.type === "signed_in") {
      return h(
        "li",
        { attrs: { "data-testid": "sign-in-row", "data-server": status.name } },
        name,
        " · ",
        h("span", { attrs: { "data-testid": "signed-in" }, text: t("signIn.signedIn", { identity: status.sign_in.identity }) }),
        " ",
        button(t("signIn.signOut"), () => void api.signOut(status.name).then(load, load), {
          class: "btn btn-small",
          testid: "sign-out",
        }),
      );
    }
    return h(
      "li",
      { attrs: { "data-testid": "sign-in-row", "data-server": status.name } },
      name,
      " · ",
      t("settings.signInNeeded"),
      signInControl(status.name, { api, i18n, onSignedIn: () => void load() }),
    );
  };

  const load = async (): Promise<void> => {
    const statuses = await api.serverStatus().catch(() => []);
    const asking = statuses.filter((status) => status.sign_in !== null);
    replace(list, ...(asking.length ? asking.map(row) : [h("li", { class: "muted", text: t("settings.noSignIns") })]));
  };
  void load();
  return el;
}
