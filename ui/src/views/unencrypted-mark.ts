// The "not encrypted" mark on a card's call: its server is reached over
// plain http on another computer, so the call's arguments and its answer
// cross the network in clear. The settings (the core's view) say which
// servers those are; the mark appears when they have answered.

import { h } from "../dom";
import type { I18n } from "../i18n";

export function unencryptedMark(server: string, unencrypted: Promise<ReadonlySet<string>>, i18n: I18n): HTMLElement {
  const mark = h("span", {
    class: "badge badge-unencrypted",
    text: i18n.t("card.unencrypted"),
    attrs: { title: i18n.t("settings.unencrypted"), "data-testid": "card-unencrypted" },
  });
  mark.hidden = true;
  void unencrypted.then((names) => {
    mark.hidden = !names.has(server);
  });
  return mark;
}
