// Money as the shop counts it: integer fen, shown as yuan. BigInt keeps
// every digit, so ¥ amounts are never rounded through floating point.

import { ExactNumber } from "./exact-json";

const MINUS = "\u2212";

/**
 * Fen as an exact integer: a safe JavaScript integer, a bigint, or an
 * integer read exactly from JSON text. Anything else (a fraction, a number
 * already rounded beyond 2^53, text) is not an amount: null.
 */
export function toFen(value: unknown): bigint | null {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : null;
  if (value instanceof ExactNumber) return /^-?\d+$/.test(value.text) ? BigInt(value.text) : null;
  return null;
}

/** "¥6,799.00"; a negative amount as "−¥200.00" (a real minus sign). */
export function formatFen(fen: bigint): string {
  const negative = fen < 0n;
  const abs = negative ? -fen : fen;
  const yuan = (abs / 100n).toString().replace(/\B(?=(\d{3})+$)/g, ",");
  const cents = (abs % 100n).toString().padStart(2, "0");
  return `${negative ? MINUS : ""}¥${yuan}.${cents}`;
}

/** `formatFen` of `value` when it is an exact integer, else null. */
export function formatMoney(value: unknown): string | null {
  const fen = toFen(value);
  return fen === null ? null : formatFen(fen);
}
