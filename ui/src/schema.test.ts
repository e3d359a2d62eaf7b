import { describe, expect, it } from "vitest";

import { parseExact } from "./exact-json";
import { describeArguments, schemaFields } from "./schema";
import { CREATE_ORDER_SCHEMA, UPDATE_CART_SCHEMA } from "./test/fixtures";

describe("argument labels from a tool's input schema", () => {
  it("falls back to the property name and lists arguments the schema does not know", () => {
    const rows = describeArguments(
      { orderNo: "BS1", extra: true },
      { type: "object", properties: { orderNo: { type: "string" } } },
    );
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ["orderNo", { kind: "text", text: "BS1" }],
      ["extra", { kind: "text", text: "true" }],
    ]);
  });

  it("follows $ref into $defs and unwraps nullable anyOf for item tables", () => {
    const schema = {
      type: "object",
      properties: {
        items: { title: "商品", type: "array", items: { $ref: "#/$defs/Line" } },
        note: { anyOf: [{ $ref: "#/$defs/Note" }, { type: "null" }], title: "备注" },
      },
      $defs: {
        Line: { type: "object", properties: { skuCode: { type: "string", title: "商品编码" }, quantity: { type: "integer", title: "数量" } } },
        Note: { type: "string" },
      },
    };
    const rows = describeArguments({ items: [{ quantity: 2, skuCode: "A1" }], note: null }, schema);
    expect(rows[0]).toMatchObject({
      label: "商品",
      value: {
        kind: "table",
        columns: [
          { name: "skuCode", label: "商品编码" },
          { name: "quantity", label: "数量" },
        ],
        rows: [["A1", "2"]],
      },
    });
    expect(rows[1]).toMatchObject({ label: "备注", value: { kind: "empty" } });
  });

  it("shows an enum value with its title when the schema gives one", () => {
    const schema = {
      properties: {
        action: {
          title: "操作",
          oneOf: [
            { const: "add", title: "加入" },
            { const: "remove", title: "删除整行" },
          ],
        },
      },
    };
    expect(describeArguments({ action: "remove" }, schema)[0].value).toEqual({ kind: "choice", title: "删除整行", value: "remove" });
  });

  it("finds an enum's titles through a nullable anyOf wrapping a oneOf, also behind a $ref", () => {
    const options = { oneOf: [{ const: "add", title: "加入购物车" }, { const: "remove", title: "移出购物车" }] };
    const schema = {
      properties: {
        inline: { anyOf: [options, { type: "null" }], title: "操作" },
        byRef: { anyOf: [{ $ref: "#/$defs/CartAction" }, { type: "null" }] },
        flat: { anyOf: [...options.oneOf, { type: "null" }] },
      },
      $defs: { CartAction: options },
    };
    const rows = describeArguments({ inline: "add", byRef: "remove", flat: "add" }, schema);
    expect(rows.map((r) => r.value)).toEqual([
      { kind: "choice", title: "加入购物车", value: "add" },
      { kind: "choice", title: "移出购物车", value: "remove" },
      { kind: "choice", title: "加入购物车", value: "add" },
    ]);
  });

  it("shows an unknown enum value as it is", () => {
    const schema = { properties: { action: { oneOf: [{ const: "add", title: "加入购物车" }] } } };
    expect(describeArguments({ action: "explode" }, schema)[0].value).toEqual({ kind: "text", text: "explode" });
  });

  it("shows integers named …Fen as yuan, every digit kept, and leaves other numbers alone", () => {
    const args = parseExact('{"priceFen": 679900, "refundFen": -20000, "hugeFen": 900719925474099312, "oddFen": 1.5, "quantity": 679900, "lines": [{"unitPriceFen": 5}]}');
    expect(describeArguments(args, {}).map((r) => r.value)).toEqual([
      { kind: "text", text: "¥6,799.00" },
      { kind: "text", text: "−¥200.00" },
      { kind: "text", text: "¥9,007,199,254,740,993.12" },
      { kind: "text", text: "1.5" },
      { kind: "text", text: "679900" },
      { kind: "table", columns: [{ name: "unitPriceFen", label: "unitPriceFen" }], rows: [["¥0.05"]] },
    ]);
  });

  it("shows nested objects and lists of values as text", () => {
    const rows = describeArguments({ tags: ["降噪", "无线"], price: { min: 1, max: 2 } }, {});
    expect(rows.map((r) => r.value)).toEqual([
      { kind: "text", text: "降噪, 无线" },
      { kind: "text", text: '{\n  "min": 1,\n  "max": 2\n}' },
    ]);
  });

  it("lists the enum arguments with their titles for the editor, through a nullable anyOf too", () => {
    const schema = {
      properties: {
        skuCode: { type: "string" },
        action: { title: "操作", anyOf: [{ oneOf: [{ const: "add", title: "加入购物车" }, { const: "remove" }] }, { type: "null" }] },
        sort: { enum: ["price", 3] },
      },
    };
    expect(schemaFields(schema).filter((f) => f.type.kind === "enum")).toEqual([
      { name: "action", label: "操作", required: false, type: { kind: "enum", options: [{ value: "add", title: "加入购物车" }, { value: "remove", title: "remove" }] } },
      { name: "sort", label: "sort", required: false, type: { kind: "enum", options: [{ value: "price", title: "price" }] } },
    ]);
  });

  it("gives each argument a form field: titles, required, integer bounds, and an array of objects as rows", () => {
    expect(schemaFields(UPDATE_CART_SCHEMA).map((f) => [f.name, f.label, f.required, f.type.kind])).toEqual([
      ["skuCode", "商品编码", true, "string"],
      ["action", "操作", true, "enum"],
      ["quantity", "数量", false, "integer"],
    ]);
    expect(schemaFields(UPDATE_CART_SCHEMA)[2].type).toEqual({ kind: "integer", minimum: 1, maximum: 99 });
    const [items] = schemaFields(CREATE_ORDER_SCHEMA);
    expect(items.type.kind === "rows" && items.type.fields.map((f) => [f.name, f.required, f.type.kind])).toEqual([
      ["skuCode", true, "string"],
      ["quantity", true, "integer"],
    ]);
  });

  it("leaves nested objects and arrays of values to the JSON editor", () => {
    const schema = { properties: { price: { type: "object", properties: { min: { type: "number" } } }, tags: { type: "array", items: { type: "string" } }, on: { type: ["boolean", "null"] } } };
    expect(schemaFields(schema).map((f) => f.type.kind)).toEqual(["other", "other", "boolean"]);
  });
});
