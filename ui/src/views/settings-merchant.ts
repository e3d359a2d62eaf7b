// Adding a shop that speaks the Universal Commerce Protocol (UCP) by its
// address: the core reads the merchant's profile at its origin and adds its
// commerce service to the servers, untrusted, saved at once. Like an import,
// it is refused while the form holds unsaved changes, which it would drop.

import type { Api } from "../api";
import { button, h } from "../dom";
import type { I18n } from "../i18n";
import type { SettingsView } from "../protocol";
import { PageMessage, showFailure } from "./error-text";
import { field, textInput } from "./form";

export interface MerchantDeps {
  api: Api;
  i18n: I18n;
  /** Whether the settings form holds unsaved changes. */
  unsaved(): boolean;
  /** The merchant was added; the view is what the core now holds. */
  onAdded(saved: SettingsView): void;
}

export function merchantSection(deps: MerchantDeps): HTMLElement {
  const { api, i18n } = deps;
  const { t } = i18n;
  let address = "";
  const error = h("p", { class: "save-error", attrs: { role: "alert", "data-testid": "merchant-error", hidden: true } });
  const status = h("p", { attrs: { role: "status", "data-testid": "merchant-added", hidden: true } });
  const add = async (): Promise<void> => {
    showFailure(error, null, i18n);
    status.hidden = true;
    if (address.trim() === "") return showFailure(error, new PageMessage(t("merchant.missing")), i18n);
    if (deps.unsaved()) return showFailure(error, new PageMessage(t("merchant.unsaved")), i18n);
    try {
      const saved = await api.addUcpMerchant(address.trim());
      status.textContent = t("merchant.added");
      status.hidden = false;
      deps.onAdded(saved);
    } catch (failure) {
      showFailure(error, failure, i18n);
    }
  };
  return h(
    "section",
    { class: "settings-section", attrs: { "aria-label": t("merchant.heading"), "data-testid": "merchant-section" } },
    h("h3", { text: t("merchant.heading") }),
    field(
      t("merchant.address"),
      textInput(address, (value) => (address = value), { type: "url", placeholder: "https://shop.example.com", "data-testid": "merchant-address" }),
      t("merchant.help"),
    ),
    button(t("merchant.add"), () => void add(), { class: "btn", testid: "merchant-add" }),
    error,
    status,
  );
}
