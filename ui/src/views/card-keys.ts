// Deciding a card from the keyboard, safely. Focus rests on an approve
// button (never in a deny-reason field, where a stray Enter would decide),
// and a live region says which call is asked. Ctrl+Enter approves and
// Ctrl+Backspace denies the call that has focus, or else the first still
// asking. Inside the argument editor neither acts: approving there would
// send the arguments unedited, and Ctrl+Backspace deletes a word.
// Escape is not handled here: it never approves.

import { h } from "../dom";
import type { I18n } from "../i18n";
import type { CallDecision } from "../protocol";

/** What the keys need of a call on the card. */
export interface KeyedCall {
  readonly el: HTMLElement;
  readonly asking: boolean;
  readonly name: string;
  approveButton(): HTMLButtonElement;
  /** Approves, or only arms approving when the shop says the call cannot run. */
  approveOrArm(): boolean;
  denyDecision(): CallDecision;
  isReason(node: Node): boolean;
  isEditing(node: Node): boolean;
}

export class CardKeys {
  /** The shortcuts, shown on the card while a call asks. */
  readonly hint: HTMLElement;
  /** Says which call focus moved to, for screen readers. */
  readonly live: HTMLElement;

  constructor(
    private readonly calls: () => KeyedCall[],
    private readonly i18n: I18n,
    private readonly decide: (decisions: CallDecision[]) => void,
  ) {
    this.hint = h("p", { class: "card-shortcuts", text: i18n.t("card.shortcuts"), attrs: { "data-testid": "card-shortcuts" } });
    this.live = h("p", { class: "visually-hidden", attrs: { "aria-live": "polite", "data-testid": "card-announce" } });
  }

  /** Handles a key pressed anywhere on the card; true when it was a shortcut. */
  keydown(event: KeyboardEvent): boolean {
    if (!(event.ctrlKey || event.metaKey) || event.altKey || event.isComposing) return false;
    const approve = event.key === "Enter";
    if (!approve && event.key !== "Backspace") return false;
    const target = event.target instanceof Node ? event.target : null;
    const asking = this.calls().filter((c) => c.asking);
    const focused = target ? asking.find((c) => c.el.contains(target)) : undefined;
    if (target && focused?.isEditing(target)) return false;
    // Typing a reason means to deny: approving from there is not a shortcut.
    if (approve && target && focused?.isReason(target)) return false;
    const call = focused ?? asking[0];
    if (!call) return false;
    event.preventDefault();
    if (approve) call.approveOrArm();
    else this.decide([call.denyDecision()]);
    return true;
  }

  /** Moves focus to the first call still asking and says what it asks; false when none asks. */
  focusNext(): boolean {
    const asking = this.calls().filter((c) => c.asking);
    const next = asking[0];
    if (!next) return false;
    next.approveButton().focus();
    this.live.textContent = this.i18n.t("card.askingNow", { count: asking.length, title: next.name });
    return true;
  }

  render(open: number): void {
    this.hint.hidden = open === 0;
    if (open === 0) this.live.textContent = "";
  }
}
