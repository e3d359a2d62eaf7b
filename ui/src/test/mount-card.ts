// A confirmation card mounted on the page, with query helpers, for the card's
// tests. It is drawn as the chat draws it: the core's events (answering
// decisions as the core does, `test/core.ts`) move the chat's state on and
// the card shows that state.

import { createI18n, type Lang } from "../i18n";
import type { AgentEvent, ConfirmationCard } from "../protocol";
import { ChatLog } from "../state";
import { confirmationCard, type CardView } from "../views/card";
import { answerAsTheCore } from "./core";
import type { FakeApi } from "./fake-api";

export interface MountedCard extends CardView {
  /** An event from the core, as the page receives it. */
  coreSays(event: AgentEvent): void;
  q<T extends Element = HTMLElement>(sel: string): T;
  qa(sel: string): Element[];
}

export function mountCard(data: ConfirmationCard, api: FakeApi, lang: Lang = "zh-CN"): MountedCard {
  const view = confirmationCard(data, { api, i18n: createI18n(lang) });
  const log = new ChatLog(data.session_id);
  answerAsTheCore(api);
  void api.onAgentEvent(({ session_id, event }) => {
    if (session_id !== data.session_id) return;
    for (const entry of log.apply(event)) {
      if (entry.kind !== "card" || entry.replyId !== data.reply_id || entry.card === null) continue;
      view.update(entry.card);
      view.showCalls(entry.calls);
    }
  });
  const coreSays = (event: AgentEvent): void => api.emit({ session_id: data.session_id, run_id: null, event });
  coreSays({ type: "confirmation_requested", card: data });
  document.body.replaceChildren(view.el);
  return {
    ...view,
    // The card sent again, as the core sends it.
    update: (card) => coreSays({ type: "confirmation_requested", card }),
    coreSays,
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
