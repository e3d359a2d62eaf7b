import { describe, expect, it } from "vitest";

import { describeArguments } from "./schema";

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
    expect(describeArguments({ action: "remove" }, schema)[0].value).toEqual({ kind: "text", text: "删除整行 (remove)" });
  });

  it("shows nested objects and lists of values as text", () => {
    const rows = describeArguments({ tags: ["降噪", "无线"], price: { min: 1, max: 2 } }, {});
    expect(rows.map((r) => r.value)).toEqual([
      { kind: "text", text: "降噪, 无线" },
      { kind: "text", text: '{\n  "min": 1,\n  "max": 2\n}' },
    ]);
  });
});
