// The structured content of a preview (docs/previews.md), read defensively:
// it comes from a tool server, so a field of the wrong type is dropped, an
// unknown one ignored, and nothing here throws.

import { toFen } from "./money";
import type { JsonValue } from "./protocol";
import { isObject } from "./schema";

export type TotalKind = "goods" | "discount" | "shipping" | "pay" | "refund" | "cart";
const TOTAL_KINDS: readonly TotalKind[] = ["goods", "discount", "shipping", "pay", "refund", "cart"];

export interface PreviewLine {
  name: string;
  spec: string | null;
  code: string | null;
  unitPriceFen: bigint | null;
  quantity: number | null;
  quantityBefore: number | null;
  subtotalFen: bigint | null;
  stockLeft: number | null;
  note: string | null;
}

export interface PreviewTotal {
  /** null for a kind this page does not know: shown by its label only. */
  kind: TotalKind | null;
  label: string | null;
  amountFen: bigint | null;
}

export interface PreviewAddress {
  receiverName: string | null;
  receiverPhone: string | null;
  receiverAddress: string | null;
}

export interface PreviewWarning {
  code: string | null;
  message: string;
  blocking: boolean;
}

export interface PreviewContent {
  summary: string | null;
  lines: PreviewLine[];
  totals: PreviewTotal[];
  address: PreviewAddress | null;
  addressBefore: PreviewAddress | null;
  /** The saved addresses the shop will ask the shopper to choose from. */
  addressChoices: PreviewAddress[];
  warnings: PreviewWarning[];
}

type Obj = { [key in string]?: JsonValue };

const own = (o: Obj, key: string): JsonValue | undefined =>
  Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;

function text(o: Obj, key: string): string | null {
  const value = own(o, key);
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

function count(o: Obj, key: string): number | null {
  const value = own(o, key);
  return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
}

function objects(o: Obj, key: string): Obj[] {
  const value = own(o, key);
  return Array.isArray(value) ? value.filter((item): item is Obj => isObject(item)) : [];
}

function line(o: Obj): PreviewLine | null {
  const name = text(o, "name") ?? text(o, "code");
  if (name === null) return null;
  return {
    name,
    spec: text(o, "spec"),
    code: text(o, "code"),
    unitPriceFen: toFen(own(o, "unitPriceFen")),
    quantity: count(o, "quantity"),
    quantityBefore: count(o, "quantityBefore"),
    subtotalFen: toFen(own(o, "subtotalFen")),
    stockLeft: count(o, "stockLeft"),
    note: text(o, "note"),
  };
}

function total(o: Obj): PreviewTotal | null {
  const kind = TOTAL_KINDS.find((k) => k === own(o, "kind")) ?? null;
  const label = text(o, "label");
  if (kind === null && label === null) return null;
  return { kind, label, amountFen: toFen(own(o, "amountFen")) };
}

/** An address read from `value`'s fields named `keys` (name, phone, street). */
function addressIn(value: JsonValue | undefined, keys: readonly [string, string, string]): PreviewAddress | null {
  if (!isObject(value)) return null;
  const [name, phone, street] = keys;
  const found = { receiverName: text(value, name), receiverPhone: text(value, phone), receiverAddress: text(value, street) };
  return Object.values(found).some((v) => v !== null) ? found : null;
}

const address = (value: JsonValue | undefined): PreviewAddress | null =>
  addressIn(value, ["receiverName", "receiverPhone", "receiverAddress"]);

function warning(o: Obj): PreviewWarning | null {
  const message = text(o, "message") ?? text(o, "code");
  if (message === null) return null;
  return { code: text(o, "code"), message, blocking: own(o, "blocking") === true };
}

const present = <T>(items: Array<T | null>): T[] => items.filter((item): item is T => item !== null);

/** The content as the card shows it; empty parts for anything unreadable. */
export function readPreview(content: JsonValue): PreviewContent {
  const o: Obj = isObject(content) ? content : {};
  return {
    summary: text(o, "summary"),
    lines: present(objects(o, "lines").map(line)),
    totals: present(objects(o, "totals").map(total)),
    address: address(own(o, "address")),
    addressBefore: address(own(o, "addressBefore")),
    addressChoices: present(objects(o, "addressChoices").map(address)),
    warnings: present(objects(o, "warnings").map(warning)),
  };
}

/**
 * The receiver a finished write actually used, from its result's
 * `receiver` ({name, phone, address}, as the shop's orders carry it):
 * what a finished card shows instead of what the preview expected.
 */
export function resultAddress(result: JsonValue | null): PreviewAddress | null {
  return isObject(result) ? addressIn(own(result, "receiver"), ["name", "phone", "address"]) : null;
}
