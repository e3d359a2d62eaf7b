// Turns a call's arguments and its tool's JSON Schema into labelled rows for
// the confirmation card: each property's `title` (falling back to its name),
// enum values with their titles, amounts in fen (`…Fen`) as yuan, arrays of
// objects as small tables.

import { ExactNumber, own, stringifyExact, type ExactJson } from "./exact-json";
import { formatMoney } from "./money";
import type { JsonValue } from "./protocol";

type JsonObject = { [key in string]?: JsonValue };

/** Arguments as the card reads them: plain JSON, or JSON read exactly. */
export type ArgJson = JsonValue | ExactNumber | ArgJson[] | ArgObject;
type ArgObject = { [key in string]?: ArgJson };

export type ArgValue =
  | { kind: "text"; text: string }
  /** An enum value the schema gives a title for. */
  | { kind: "choice"; title: string; value: string }
  | { kind: "empty" }
  | { kind: "table"; columns: Column[]; rows: string[][] };

export interface Column {
  name: string;
  label: string;
}

export interface ArgRow {
  name: string;
  label: string;
  description: string | null;
  value: ArgValue;
}

export function isObject(value: JsonValue | undefined): value is JsonObject;
export function isObject(value: ArgJson | undefined): value is ArgObject;
export function isObject(value: ArgJson | undefined): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof ExactNumber);
}

const has = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

/**
 * The labelled rows for `args`, in the schema's property order, then any
 * extras. Names are looked up as own properties only: an argument called
 * `constructor` or `toString` is listed like any other.
 */
export function describeArguments(args: ArgJson, schema: JsonValue): ArgRow[] {
  if (!isObject(args)) return [{ name: "", label: "", description: null, value: text(args) }];
  const root = isObject(schema) ? schema : {};
  const props = propertiesOf(root, root);
  const names = [...Object.keys(props).filter((name) => has(args, name)), ...Object.keys(args).filter((name) => !has(props, name))];
  return names.map((name) => {
    const prop = resolve(own(props, name), root);
    return {
      name,
      label: titleOf(prop) ?? name,
      description: stringField(prop, "description"),
      value: valueOf(own(args, name), prop, root, name),
    };
  });
}

/** An enum argument's values, each with its title. */
export interface EnumField {
  options: Array<{ value: string; title: string }>;
}

/** What kind of control an argument gets in the editor's form. */
export type FieldKind =
  | { kind: "enum"; options: EnumField["options"] }
  | { kind: "integer" | "number"; minimum: number | null; maximum: number | null }
  | { kind: "boolean" }
  | { kind: "string" }
  /** An array of objects whose fields are all of the kinds above. */
  | { kind: "rows"; fields: SchemaField[] }
  /** Anything else (nested objects, arrays of values): edited as JSON only. */
  | { kind: "other" };

export interface SchemaField {
  name: string;
  label: string;
  required: boolean;
  type: FieldKind;
}

/** The schema's top-level arguments as form fields, in the schema's order. */
export function schemaFields(schema: JsonValue): SchemaField[] {
  const root = isObject(schema) ? schema : {};
  return fieldsOf(resolve(root, root), root, true);
}

function fieldsOf(object: JsonObject, root: JsonObject, nested: boolean): SchemaField[] {
  const props = propertiesOf(object, root);
  const required = own(object, "required");
  return Object.keys(props).map((name) => {
    const prop = resolve(own(props, name), root);
    return {
      name,
      label: titleOf(prop) ?? name,
      required: Array.isArray(required) && required.includes(name),
      type: kindOf(prop, root, nested),
    };
  });
}

function kindOf(prop: JsonObject, root: JsonObject, nested: boolean): FieldKind {
  const options = enumOptions(prop);
  if (options.length > 0) return { kind: "enum", options };
  const declared = own(prop, "type");
  const types = (Array.isArray(declared) ? declared : [declared]).filter((t) => t !== "null");
  if (types.length !== 1) return { kind: "other" };
  const [type] = types;
  if (type === "integer" || type === "number") {
    return { kind: type, minimum: numberField(prop, "minimum"), maximum: numberField(prop, "maximum") };
  }
  if (type === "boolean" || type === "string") return { kind: type };
  if (type === "array" && nested) {
    const items = resolve(own(prop, "items"), root);
    const fields = fieldsOf(items, root, false);
    if (own(items, "type") === "object" && fields.length > 0 && fields.every((f) => f.type.kind !== "other")) {
      return { kind: "rows", fields };
    }
  }
  return { kind: "other" };
}

function numberField(schema: JsonObject, field: string): number | null {
  const value = own(schema, field);
  return typeof value === "number" ? value : null;
}

function enumOptions(prop: JsonObject): EnumField["options"] {
  const options: EnumField["options"] = [];
  for (const key of ["oneOf", "anyOf"]) {
    const list = own(prop, key);
    if (!Array.isArray(list)) continue;
    for (const option of list) {
      if (isObject(option) && typeof option.const === "string") {
        options.push({ value: option.const, title: stringField(option, "title") ?? stringField(option, "description") ?? option.const });
      }
    }
  }
  const plain = own(prop, "enum");
  if (options.length === 0 && Array.isArray(plain)) {
    for (const value of plain) if (typeof value === "string") options.push({ value, title: value });
  }
  return options;
}

function valueOf(value: ArgJson | undefined, prop: JsonObject, root: JsonObject, name: string): ArgValue {
  if (value === undefined || value === null) return { kind: "empty" };
  if (typeof value === "string") {
    const title = enumTitle(prop, value);
    if (title && title !== value) return { kind: "choice", title, value };
  }
  if (Array.isArray(value) && value.length > 0 && value.every((v) => isObject(v))) {
    return tableOf(value as ArgObject[], resolve(own(prop, "items"), root), root);
  }
  if (Array.isArray(value) && value.every((v) => !isObject(v) && !Array.isArray(v))) {
    return { kind: "text", text: value.map((v) => scalar(v, {})).join(", ") };
  }
  return text(value, prop, name);
}

function tableOf(rows: ArgObject[], itemSchema: JsonObject, root: JsonObject): ArgValue {
  const props = propertiesOf(itemSchema, root);
  const names = [...Object.keys(props)];
  for (const row of rows) {
    for (const name of Object.keys(row)) if (!names.includes(name)) names.push(name);
  }
  const used = names.filter((name) => rows.some((row) => own(row, name) !== undefined));
  return {
    kind: "table",
    columns: used.map((name) => ({ name, label: titleOf(resolve(own(props, name), root)) ?? name })),
    rows: rows.map((row) =>
      used.map((name) => {
        const cell = own(row, name);
        return cell === undefined || cell === null ? "" : scalar(cell, resolve(own(props, name), root), name);
      }),
    ),
  };
}

function text(value: ArgJson | undefined, prop: JsonObject = {}, name = ""): ArgValue {
  if (value === undefined || value === null) return { kind: "empty" };
  return { kind: "text", text: scalar(value, prop, name) };
}

/**
 * A value as text; an enum value gets its title (`加入 (add)`) when the
 * schema has one, and an integer named `…Fen` is shown as yuan (the shop's
 * convention; the raw JSON keeps the number).
 */
function scalar(value: ArgJson, prop: JsonObject, name = ""): string {
  if (name.endsWith("Fen")) {
    const money = formatMoney(value);
    if (money !== null) return money;
  }
  if (typeof value === "string") {
    const title = enumTitle(prop, value);
    return title && title !== value ? `${title} (${value})` : value;
  }
  // A number read exactly is shown as it will be sent, every digit.
  if (value instanceof ExactNumber) return value.text;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return stringifyExact(value as ExactJson);
}

function enumTitle(prop: JsonObject, value: string): string | null {
  for (const key of ["oneOf", "anyOf"]) {
    const options = own(prop, key);
    if (!Array.isArray(options)) continue;
    for (const option of options) {
      if (isObject(option) && option.const === value) {
        return stringField(option, "title") ?? stringField(option, "description");
      }
    }
  }
  return null;
}

function propertiesOf(schema: JsonObject, root: JsonObject): JsonObject {
  const resolved = resolve(schema, root);
  const properties = own(resolved, "properties");
  return isObject(properties) ? properties : {};
}

/** Follows a local `$ref` (`#/$defs/X`, `#/definitions/X`) and unwraps a nullable `anyOf`. */
function resolve(schema: JsonValue | undefined, root: JsonObject, depth = 0): JsonObject {
  if (!isObject(schema) || depth > 8) return {};
  const ref = own(schema, "$ref");
  if (typeof ref === "string" && ref.startsWith("#/")) {
    let target: JsonValue | undefined = root;
    for (const part of ref.slice(2).split("/")) {
      target = isObject(target) ? own(target, decodeURIComponent(part.replace(/~1/g, "/").replace(/~0/g, "~"))) : undefined;
    }
    const { $ref: _ignored, ...rest } = schema;
    return { ...resolve(target, root, depth + 1), ...rest };
  }
  const anyOf = own(schema, "anyOf");
  if (Array.isArray(anyOf) && !schema.properties && !schema.items) {
    const nonNull = anyOf.filter((option) => !(isObject(option) && option.type === "null"));
    if (nonNull.length === 1 && !nonNull.some((option) => isObject(option) && "const" in option)) {
      const { anyOf: _nullable, ...rest } = schema;
      return { ...resolve(nonNull[0], root, depth + 1), ...rest };
    }
  }
  return schema;
}

function titleOf(schema: JsonObject): string | null {
  return stringField(schema, "title");
}

function stringField(schema: JsonObject, field: string): string | null {
  const value = own(schema, field);
  return typeof value === "string" && value.trim() !== "" ? value : null;
}
