// A confirmation card mounted on the page, with query helpers, for the card's tests.

import { createI18n, type Lang } from "../i18n";
import type { CallStatus, ConfirmationCard } from "../protocol";
import { confirmationCard, type CardView } from "../views/card";
import type { FakeApi } from "./fake-api";

export interface MountedCard extends CardView {
  /** What the card reported as accepted by the backend. */
  accepted: Array<{ callId: string; status: CallStatus }>;
  q<T extends Element = HTMLElement>(sel: string): T;
  qa(sel: string): Element[];
}

export function mountCard(data: ConfirmationCard, api: FakeApi, lang: Lang = "zh-CN"): MountedCard {
  const accepted: MountedCard["accepted"] = [];
  const view = confirmationCard(data, { api, i18n: createI18n(lang), onAccepted: (s) => accepted.push(...s) });
  document.body.replaceChildren(view.el);
  return {
    ...view,
    accepted,
    q: <T extends Element = HTMLElement>(sel: string) => {
      const found = view.el.querySelector<T>(sel);
      if (!found) throw new Error(`no ${sel}`);
      return found;
    },
    qa: (sel: string) => [...view.el.querySelectorAll(sel)],
  };
}

/** The selector of one call on the card. */
export const callById = (id: string): string => `[data-testid="card-call"][data-call-id="${id}"]`;
