import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { Lang } from "../i18n";
import type { CardCall } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { CANCEL_ORDER_CALL, PLAIN_ORDER_CALL, card, cardCall } from "../test/fixtures";
import { mountCard } from "../test/mount-card";

let api: FakeApi;

beforeEach(() => {
  api = new FakeApi();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The card with `call`, its argument editor open on the form. */
function openForm(call: CardCall, lang: Lang = "zh-CN") {
  const view = mountCard(card([call]), api, lang);
  view.q('[data-testid="edit-arguments"]').click();
  const field = <T extends HTMLElement = HTMLInputElement>(name: string) => view.q<T>(`[data-testid="field-${name}"]`);
  const type = (name: string, value: string) => {
    const input = field(name);
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const choose = (name: string, value: string) => {
    const select = field<HTMLSelectElement>(name);
    select.value = value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const approveEdited = () => view.q<HTMLButtonElement>('[data-testid="approve-edited"]');
  const sent = async () => {
    approveEdited().click();
    await settle();
    return api.of("respond_confirmation").map((c) => c[2]);
  };
  const error = () => view.q('[data-testid="edit-error"]');
  return { view, field, type, choose, approveEdited, sent, error };
}

describe("editing arguments in a form generated from the tool's schema", () => {
  it("labels fields with the schema's titles, marks required ones, and gives bounds to the number stepper", () => {
    const { view, field } = openForm(cardCall({ call_id: "a" }));
    const labels = view.qa('[data-testid="arguments-form"] label').map((l) => l.textContent);
    expect(labels).toEqual(["商品编码*", "操作*", "数量"]);
    const quantity = field("quantity");
    expect([quantity.type, quantity.min, quantity.max, quantity.step, quantity.value]).toEqual(["number", "1", "99", "1", "2"]);
    expect(field("skuCode").getAttribute("aria-required")).toBe("true");
    expect(document.activeElement).toBe(field("skuCode"));
  });

  it("offers an enum as a select of its titles", () => {
    const { field } = openForm(cardCall({ call_id: "a" }));
    const action = field<HTMLSelectElement>("action");
    expect([...action.options].map((o) => o.textContent)).toEqual(["—", "加入购物车", "减少数量", "移出购物车"]);
    expect(action.value).toBe("add");
  });

  it("a quantity changed in the form is sent as an integer, exactly the JSON the raw editor shows", async () => {
    const { view, type, sent } = openForm(cardCall({ call_id: "a" }));
    type("quantity", "1");
    view.q('[data-testid="editor-mode"]').click();
    const raw = view.q<HTMLTextAreaElement>('[data-testid="arguments-editor"]').value;
    expect(raw).toBe('{\n  "skuCode": "MG6W4CH/A",\n  "action": "add",\n  "quantity": 1\n}');
    expect(await sent()).toEqual([[{ call_id: "a", decision: { type: "approve_edited", arguments: JSON.parse(raw) } }]]);
    expect(raw).toContain('"quantity": 1\n');
  });

  it("an untouched optional field is not added", async () => {
    const { choose, sent } = openForm(cardCall({ call_id: "a", arguments: { skuCode: "MG6W4CH/A", action: "remove" } }));
    choose("action", "decrease");
    expect(await sent()).toEqual([[{ call_id: "a", decision: { type: "approve_edited", arguments: { skuCode: "MG6W4CH/A", action: "decrease" } } }]]);
  });

  it("a quantity out of range names the field in Chinese and cannot be sent", async () => {
    const { type, error, approveEdited, sent } = openForm(cardCall({ call_id: "a" }));
    type("quantity", "100");
    expect(error().textContent).toBe("数量：必须是 1 到 99 的整数");
    expect(approveEdited().disabled).toBe(true);
    type("quantity", "1.5");
    expect(error().textContent).toBe("数量：必须是 1 到 99 的整数");
    expect(await sent()).toEqual([]);
  });

  it("a quantity out of range names the field in English", () => {
    const { type, error, field } = openForm(cardCall({ call_id: "a" }), "en");
    type("quantity", "0");
    expect(error().textContent).toBe("Quantity: must be a whole number from 1 to 99");
    expect(field("quantity").getAttribute("aria-invalid")).toBe("true");
  });

  it("a required field left empty is named", () => {
    const { type, error, approveEdited } = openForm(cardCall({ call_id: "a" }));
    type("skuCode", "");
    expect(error().textContent).toBe("商品编码：必填");
    expect(approveEdited().disabled).toBe(true);
  });

  it("a cleared optional field is left out", async () => {
    const { type, sent } = openForm(cardCall({ call_id: "a" }));
    type("quantity", "");
    expect(await sent()).toEqual([[{ call_id: "a", decision: { type: "approve_edited", arguments: { skuCode: "MG6W4CH/A", action: "add" } } }]]);
  });

  it("a boolean is a checkbox", async () => {
    const schema = { type: "object", properties: { inStockOnly: { type: ["boolean", "null"], title: "仅看有货" }, keyword: { type: "string", title: "关键词" } } };
    const { field, sent } = openForm(cardCall({ call_id: "s", arguments: { keyword: "耳机" }, input_schema: schema }));
    const box = field("inStockOnly");
    expect(box.type).toBe("checkbox");
    box.click();
    expect(await sent()).toEqual([[{ call_id: "s", decision: { type: "approve_edited", arguments: { keyword: "耳机", inStockOnly: true } } }]]);
  });

  it("create_order's items are a repeated group: a row's quantity edited, a row removed, a row added", async () => {
    const { view, type, field, error, sent } = openForm(PLAIN_ORDER_CALL);
    expect(view.qa('[data-testid="form-row"]')).toHaveLength(2);
    expect(field("items-1-quantity").value).toBe("2");
    type("items-1-quantity", "3");
    view.q<HTMLButtonElement>('[data-testid="form-row"] [data-testid="remove-row"]').click();
    view.q('[data-testid="add-row"]').click();
    expect(error().textContent).toBe("商品 第 2 项 · 商品编码：必填\n商品 第 2 项 · 数量：必填");
    type("items-2-skuCode", "MKFW4CH/A");
    type("items-2-quantity", "1");
    expect(await sent()).toEqual([
      [
        {
          call_id: "call-plain-order",
          decision: {
            type: "approve_edited",
            arguments: {
              items: [
                { skuCode: "MX2D3CH/A", quantity: 3 },
                { skuCode: "MKFW4CH/A", quantity: 1 },
              ],
              couponCode: "NEW50",
              receiverName: "张三",
            },
          },
        },
      ],
    ]);
  });

  it("what the form cannot express is kept as it was and edited through the raw JSON toggle", async () => {
    const schema = { type: "object", properties: { name: { type: "string", title: "名称" }, price: { type: "object", title: "价格区间", properties: { min: { type: "number" } } } } };
    const { view, field, type, sent } = openForm(cardCall({ call_id: "o", arguments: { name: "x", price: { min: 1 } }, input_schema: schema }));
    expect(view.q('[data-testid="arguments-form"]').textContent).toContain("只能用 JSON 修改");
    type("name", "y");
    const toggle = view.q('[data-testid="editor-mode"]');
    toggle.click();
    const raw = view.q<HTMLTextAreaElement>('[data-testid="arguments-editor"]');
    expect(JSON.parse(raw.value)).toEqual({ name: "y", price: { min: 1 } });
    raw.value = '{"name": "z", "price": {"min": 2}}';
    raw.dispatchEvent(new Event("input"));
    toggle.click();
    expect(field("name").value).toBe("z");
    expect(await sent()).toEqual([[{ call_id: "o", decision: { type: "approve_edited", arguments: { name: "z", price: { min: 2 } } } }]]);
  });

  it("opening the editor scrolls it and its buttons into view", () => {
    const scrolled: Element[] = [];
    vi.spyOn(HTMLElement.prototype, "scrollIntoView").mockImplementation(function (this: HTMLElement) {
      scrolled.push(this);
    });
    const { view } = openForm(CANCEL_ORDER_CALL);
    const editor = view.q(".card-editor");
    expect(scrolled[0]).toBe(editor);
    expect(scrolled.some((el) => el.contains(view.q('[data-testid="approve-edited"]')))).toBe(true);
  });

  it("the core's invalid_arguments error is shown in the user's language", async () => {
    api.failNext = { code: "invalid_arguments", message: "quantity: 42 is greater than the maximum of 5" };
    const { view, type, sent } = openForm(cardCall({ call_id: "a" }), "en");
    type("quantity", "42");
    await sent();
    const error = view.q('[data-testid="card-error"]');
    expect(error.textContent).toBe("The edited arguments do not fit what this tool accepts.");
    expect(error.dataset.code).toBe("invalid_arguments");
    expect(view.el.querySelector('[data-testid="arguments-form"]')).not.toBeNull();
  });

  it("Escape in the form closes the editor and sends nothing", async () => {
    const { view, field } = openForm(cardCall({ call_id: "a" }));
    field("quantity").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true }));
    await settle();
    expect(view.el.querySelector(".card-editor")).toBeNull();
    expect(api.of("respond_confirmation")).toEqual([]);
  });
});
