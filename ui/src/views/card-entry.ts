// A card in the chat: the interactive card while any of its calls waits
// for a decision, then the decided card's one-line summaries. The swap
// happens in place, at the card's position in the chat.

import { isPending, type CardEntry } from "../state";
import { confirmationCard, type CardDeps, type CardView } from "./card";
import { decidedCard, type DecidedCardView } from "./card-decided";

export interface CardEntryView {
  el: HTMLElement;
  update(entry: CardEntry): void;
}

export interface CardEntryDeps extends CardDeps {
  /** Every call is decided: the shopper goes back to writing. */
  focusComposer(): void;
}

export function cardEntryView(initial: CardEntry, deps: CardEntryDeps): CardEntryView {
  let live: CardView | null = null;
  let decided: DecidedCardView | null = null;
  const view: CardEntryView = { el: document.createElement("div"), update };

  function update(entry: CardEntry): void {
    const previous = view.el;
    if (isPending(entry)) {
      decided = null;
      if (!live) live = confirmationCard(entry.card, deps);
      live.update(entry.card);
      live.showCalls(entry.calls);
      view.el = live.el;
    } else {
      // The live card sees its calls' last statuses before it goes: a
      // decided call drops its deny reason draft and closes its editor.
      if (live && entry.card) live.update(entry.card);
      live = null;
      if (!decided) decided = decidedCard(entry.replyId, entry.calls, deps.i18n);
      else decided.update(entry.calls);
      view.el = decided.el;
    }
    if (previous !== view.el) {
      // Keyboard focus inside the card (or dropped from its hidden buttons
      // by the last decision) stays on a card that still asks; once every
      // call is decided it goes back to the composer.
      const active = document.activeElement;
      const hadFocus = previous.contains(active) || active === document.body;
      previous.replaceWith(view.el);
      if (hadFocus) {
        if (live) view.el.focus();
        else deps.focusComposer();
      }
    }
  }
  update(initial);
  return view;
}
