// How a call's preview stands to the calls above it on its card. Each
// preview is what its server worked out with things as they are now, one
// call at a time; the calls of a card run in order. So a card that adds to
// the cart and then orders must say which numbers already count the calls
// above and which do not. Pure; no DOM.

import { readPreview, type PreviewContent } from "./preview-content";
import type { CallStatus, CardCall } from "./protocol";

export interface Sequence {
  /** A call that moves money, asking again: calls above it ran, and what it would do changed. */
  askedAgain: boolean;
  /**
   * A call that moves money, below writes still to run: its preview does
   * not count them yet, and the core asks again before sending it if they
   * change what it would do.
   */
  mayAskAgain: boolean;
  /** The cart's total after this call and the cart changes above it still to run, when they add something. */
  cartWithEarlier: bigint | null;
}

const NONE: Sequence = { askedAgain: false, mayAskAgain: false, cartWithEarlier: null };

/** Statuses of a call that went out to its server (or may have). */
const SENT: readonly CallStatus[] = ["running", "succeeded", "failed", "interrupted", "awaiting_input"];
/** Statuses of a call that will still run with the card. */
const TO_RUN: readonly CallStatus[] = ["asking", "approved", "allowed"];

/** A call that can change something: all but a trusted server's declared reads. */
const writes = (call: CardCall): boolean => !(call.trusted && call.declares_read_only);

function content(call: CardCall): PreviewContent | null {
  const outcome = call.preview?.outcome;
  return outcome?.type === "computed" ? readPreview(outcome.content) : null;
}

/**
 * What a cart change adds to the cart's orderable total: each line's
 * quantity change at its unit price. Nothing when the shop says it cannot
 * run (a blocking warning), or when a line lacks its numbers.
 */
function cartChange(call: CardCall): bigint {
  const preview = content(call);
  if (preview === null || preview.warnings.some((w) => w.blocking)) return 0n;
  if (!preview.totals.some((t) => t.kind === "cart")) return 0n;
  let change = 0n;
  for (const line of preview.lines) {
    if (line.quantity === null || line.quantityBefore === null || line.unitPriceFen === null) return 0n;
    change += BigInt(line.quantity - line.quantityBefore) * line.unitPriceFen;
  }
  return change;
}

/** How the call at `index` of `calls` (in the card's order, with their current statuses) stands to those above it. */
export function sequenceOf(calls: readonly CardCall[], index: number): Sequence {
  const call = calls[index];
  if (call === undefined || call.status !== "asking" || call.preview === null) return NONE;
  const above = calls.slice(0, index).filter(writes);
  const movesMoney = call.risk === "moves_money";
  const askedAgain = movesMoney && above.some((c) => SENT.includes(c.status));
  const mayAskAgain = movesMoney && !askedAgain && above.some((c) => TO_RUN.includes(c.status));
  const cart = content(call)?.totals.find((t) => t.kind === "cart")?.amountFen ?? null;
  const added = above.filter((c) => TO_RUN.includes(c.status)).reduce((sum, c) => sum + cartChange(c), 0n);
  const cartWithEarlier = cart !== null && added !== 0n ? cart + added : null;
  return { askedAgain, mayAskAgain, cartWithEarlier };
}

export const sameSequence = (a: Sequence, b: Sequence): boolean =>
  a.askedAgain === b.askedAgain && a.mayAskAgain === b.mayAskAgain && a.cartWithEarlier === b.cartWithEarlier;
