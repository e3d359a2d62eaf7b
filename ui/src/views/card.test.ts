import { beforeEach, describe, expect, it } from "vitest";

import type { CardCall, ConfirmationCard } from "../protocol";
import { viewOf } from "../state";
import { FakeApi, settle } from "../test/fake-api";
import {
  AIRPODS_CART_PREVIEW,
  CANCEL_ORDER_CALL,
  CREATE_ORDER_CALL,
  IPHONE_ORDER_PREVIEW,
  PLAIN_ORDER_CALL,
  NOTES_CHANGE,
  XSS_IMG,
  XSS_SCRIPT,
  card,
  cardCall,
} from "../test/fixtures";
import { callById, mountCard, type MountedCard } from "../test/mount-card";

let api: FakeApi;

function mount(data: ConfirmationCard): MountedCard {
  return mountCard(data, api);
}

const byId = callById;
const click = (el: Element) => (el as HTMLElement).click();

/** Opens the argument editor on its raw JSON text. */
function openJson(view: ReturnType<typeof mount>): HTMLTextAreaElement {
  click(view.q('[data-testid="edit-arguments"]'));
  click(view.q('[data-testid="editor-mode"]'));
  return view.q<HTMLTextAreaElement>('[data-testid="arguments-editor"]');
}

beforeEach(() => {
  api = new FakeApi();
});

describe("the confirmation card shows exactly what will be sent", () => {
  it("labels update_cart_item arguments with the schema's titles", () => {
    const view = mount(card([cardCall({ call_id: "c1" })]));
    expect(view.el.dataset.replyId).toBe("reply-1");
    const labels = view.qa("dt").map((dt) => dt.textContent);
    expect(labels).toEqual(["商品编码", "操作", "数量"]);
    const values = view.qa("dd").map((dd) => dd.textContent);
    expect(values).toEqual(["MG6W4CH/A", "加入购物车", "2"]);
    expect(view.q("h3").textContent).toBe("加入/修改购物车");
    expect(view.q(".card-server").textContent).toContain("shop");
  });

  it("marks a call to a server the settings say is plain http elsewhere as not encrypted", async () => {
    api.settings.mcp_servers.notes = { url: "http://notes.example/mcp", headers: {}, trusted: false, disabled: false, timeout_secs: null };
    api.settings.unencrypted = ["notes"];
    const view = mount(card([cardCall({ call_id: "c1" }), cardCall({ call_id: "c2", server: "notes", qualified_name: "notes__write" })]));
    await settle();
    const mark = (id: string) => view.el.querySelector<HTMLElement>(`${byId(id)} [data-testid="card-unencrypted"]`);
    expect(mark("c1")?.hidden).toBe(true);
    expect(mark("c2")?.hidden).toBe(false);
    expect(mark("c2")?.textContent).toBe("未加密");
    expect(mark("c2")?.title).toContain("明文");
  });

  it("shows create_order items as a table with the item schema's titles", () => {
    const view = mount(card([PLAIN_ORDER_CALL]));
    const table = view.q("table.args-table");
    expect([...table.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["商品编码", "数量"]);
    expect([...table.querySelectorAll("tbody tr")].map((tr) => tr.textContent)).toEqual(["MG6W4CH/A1", "MX2D3CH/A2"]);
    expect(view.qa("dt").map((dt) => dt.textContent)).toEqual(["商品", "优惠券", "收货人"]);
  });

  it("shows the raw JSON in a disclosure", () => {
    const view = mount(card([PLAIN_ORDER_CALL]));
    const raw = view.q<HTMLDetailsElement>('[data-testid="raw-json"]');
    expect(raw.open).toBe(false);
    expect(JSON.parse(raw.querySelector("pre")?.textContent ?? "")).toEqual(PLAIN_ORDER_CALL.arguments);
  });

  it("marks a money call in red and warns about a changed definition", () => {
    const view = mount(card([CANCEL_ORDER_CALL, cardCall({ call_id: "c2", definition_changed: true })]));
    const cancel = view.q(byId("call-cancel"));
    expect(cancel.classList.contains("card-call-destructive")).toBe(true);
    expect(cancel.querySelector(".badge-danger")?.textContent).toBe("涉及付款或退款");
    expect(view.q(byId("c2")).querySelector(".badge-danger")).toBeNull();
    expect(view.q(byId("c2")).querySelector('[role="note"]')?.textContent).toContain("定义");
  });

  it("does not mark adding to the cart as a red card that cannot be undone", () => {
    const view = mount(card([cardCall({ call_id: "c1", destructive: true, risk: "undoable" })]));
    const call = view.q(byId("c1"));
    expect(call.classList.contains("card-call-destructive")).toBe(false);
    expect(call.querySelector('[data-testid="risk"]')?.textContent).toBe("可撤回");
    expect(call.querySelector(".badge-danger")).toBeNull();
  });

  it("marks a call that claims to only read, from an untrusted server, as unverified instead of destructive", () => {
    const view = mount(card([cardCall({ call_id: "c1", server: "notes", trusted: false, declares_read_only: true, destructive: true, risk: "irreversible" })]));
    const call = view.q(byId("c1"));
    expect(call.querySelector('[data-testid="unverified"]')?.textContent).toBe("未验证的服务器");
    expect(call.querySelector(".badge-danger")).toBeNull();
    expect(call.classList.contains("card-call-destructive")).toBe(false);
    expect(call.querySelector(".card-unverified-note")?.textContent).toBe("它声称只读取数据，但它的服务器未被信任，所以仍需你确认。");
  });

  it("marks other untrusted calls as unverified beside what they show today", () => {
    const view = mount(card([cardCall({ call_id: "c1", trusted: false, destructive: true, risk: "irreversible" }), cardCall({ call_id: "c2" })]));
    const untrusted = view.q(byId("c1"));
    expect(untrusted.querySelector(".badge-danger")?.textContent).toBe("不可撤销");
    expect(untrusted.querySelector('[data-testid="unverified"]')?.textContent).toBe("未验证的服务器");
    expect(untrusted.querySelector(".card-unverified-note")).toBeNull();
    expect(view.q(byId("c2")).querySelector('[data-testid="unverified"]')).toBeNull();
  });

  it("renders product text with markup as literal text", () => {
    const view = mount(card([cardCall({ call_id: "c1", arguments: { skuCode: XSS_IMG, action: XSS_SCRIPT } })]));
    expect(view.el.querySelector("img")).toBeNull();
    expect(view.el.querySelector("script")).toBeNull();
    expect(view.el.textContent).toContain(XSS_IMG);
    expect(view.el.textContent).toContain(XSS_SCRIPT);
  });

  it("shows calls allowed in the batch without buttons", () => {
    const view = mount(card([cardCall({ call_id: "c1" }), cardCall({ call_id: "read", status: "allowed", title: "查看购物车" })]));
    const allowed = view.q(byId("read"));
    expect(allowed.dataset.status).toBe("allowed");
    expect(allowed.querySelector(".status-badge")?.textContent).toBe("将随本批执行");
    expect(allowed.querySelector<HTMLElement>(".card-actions")?.hidden).toBe(true);
    expect(view.q(byId("c1")).querySelector<HTMLElement>(".card-actions")?.hidden).toBe(false);
    expect(view.q<HTMLElement>(".card-bulk").hidden).toBe(true);
  });
});

describe("deciding on the card", () => {
  it("approve sends exactly {type: approve} for that call with the card's reply id, and the call shows approved as the core reports", async () => {
    const view = mount(card([cardCall({ call_id: "c1" }), CANCEL_ORDER_CALL]));
    click(view.q(byId("c1")).querySelector('[data-testid="approve"]')!);
    await settle();
    expect(api.of("respond_confirmation")).toEqual([
      ["s1", "reply-1", [{ call_id: "c1", decision: { type: "approve" } }]],
    ]);
    expect(view.q(byId("c1")).dataset.status).toBe("approved");
    expect(view.q(byId("c1")).querySelector<HTMLElement>(".card-actions")?.hidden).toBe(true);
    expect(view.q(byId("call-cancel")).dataset.status).toBe("asking");
  });

  it("after a decision, keyboard focus moves to the next asking call's approve button, never its reason field", async () => {
    const view = mount(card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]));
    const approve = view.q(byId("a")).querySelector<HTMLButtonElement>('[data-testid="approve"]')!;
    approve.focus();
    approve.click();
    await settle();
    expect(document.activeElement).toBe(view.q(byId("call-cancel")).querySelector('[data-testid="approve"]'));
  });

  it("a call the shop says cannot run leads with the blocker and approves only on a second click", async () => {
    const blocked = cardCall({
      call_id: "c1",
      risk: "moves_money",
      preview: {
        tool: "shop__preview_cancel_order",
        computed_at: 0,
        outcome: {
          type: "computed",
          content: {
            summary: "当前无法执行：订单 BS1 已取消",
            totals: [{ kind: "refund", amountFen: 649900 }],
            warnings: [{ code: "ORDER_NOT_CANCELLABLE", message: "订单 BS1 已取消", blocking: true }],
          },
        },
      },
    });
    const view = mount(card([blocked, cardCall({ call_id: "c2" })]));
    const call = view.q(byId("c1"));
    expect(call.querySelector('[data-testid="blocker"]')?.textContent).toBe("店铺说这一步现在无法执行：订单 BS1 已取消");
    expect(call.querySelector('[data-testid="risk"]')?.textContent).toBe("涉及付款或退款");
    const approve = call.querySelector<HTMLButtonElement>('[data-testid="approve"]')!;
    expect(approve.classList.contains("btn-suggested")).toBe(false);
    expect(approve.textContent).toBe("仍要批准…");
    expect(view.q<HTMLElement>('[data-testid="approve-all"]').hidden).toBe(true);

    approve.click();
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(approve.textContent).toBe("确认批准（很可能失败）");
    expect(approve.dataset.armed).toBe("true");

    approve.click();
    await settle();
    expect(api.of("respond_confirmation")).toEqual([
      ["s1", "reply-1", [{ call_id: "c1", decision: { type: "approve" } }]],
    ]);
  });

  it("a merchant's checkout no mandate can be made for offers no approval, says why, and can still be denied", async () => {
    const unpayable = cardCall({
      call_id: "c1",
      risk: "moves_money",
      preview: {
        tool: "merchant__get_checkout",
        computed_at: 0,
        outcome: { type: "not_payable", problem: { kind: "signature_invalid", detail: "the signature does not match the signed content" } },
      },
    });
    const view = mount(card([unpayable]));
    const call = view.q(byId("c1"));
    expect(call.querySelector(".preview-not-payable")?.textContent).toBe(
      "这笔结账不能付款：商家对这笔结账的签名验证不通过，金额或条款可能在途中被改动",
    );
    const approve = call.querySelector<HTMLButtonElement>('[data-testid="approve"]')!;
    expect(approve.hidden).toBe(true);
    expect(view.q<HTMLElement>('[data-testid="approve-all"]').hidden).toBe(true);
    approve.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true, cancelable: true }));
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(call.querySelector<HTMLButtonElement>('[data-testid="deny"]')?.hidden).toBe(false);
  });

  it("the approve shortcut on a blocked call only arms it", async () => {
    const blocked = cardCall({
      call_id: "c1",
      preview: {
        tool: "shop__preview_update_cart_item",
        computed_at: 0,
        outcome: { type: "computed", content: { warnings: [{ code: "OUT_OF_STOCK", message: "暂时无货", blocking: true }] } },
      },
    });
    const view = mount(card([blocked]));
    const approve = view.q<HTMLButtonElement>('[data-testid="approve"]');
    approve.focus();
    const press = () =>
      approve.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true, cancelable: true }));
    press();
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(approve.dataset.armed).toBe("true");
    press();
    await settle();
    expect(api.of("respond_confirmation")).toHaveLength(1);
  });

  it("deny sends the reason typed in the inline field", async () => {
    const view = mount(card([CANCEL_ORDER_CALL]));
    const reason = view.q<HTMLInputElement>('[data-testid="deny-reason"]');
    reason.value = "  太贵了 ";
    click(view.q('[data-testid="deny"]'));
    await settle();
    expect(api.of("respond_confirmation")).toEqual([
      ["s1", "reply-1", [{ call_id: "call-cancel", decision: { type: "deny", reason: "太贵了" } }]],
    ]);
  });

  it("the user denies with a reason, the card shows the reason the core reported", async () => {
    const view = mount(card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]));
    const denied = view.q(byId("call-cancel"));
    denied.querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!.value = "太贵了";
    click(denied.querySelector('[data-testid="deny"]')!);
    await settle();
    expect(denied.dataset.status).toBe("denied");
    expect(denied.querySelector('[data-testid="call-status"]')?.textContent).toBe("已拒绝");
    expect(denied.querySelector('[data-testid="call-reason"]')?.textContent).toBe("理由：太贵了");
    expect(denied.querySelector<HTMLElement>('[data-testid="call-reason"]')?.hidden).toBe(false);
    expect(view.q(byId("a")).dataset.status).toBe("asking");
  });

  it("a denial's reason is the one the core reported, not what the page sent", async () => {
    const view = mount(card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]));
    api.onDecisions = ([{ call_id }]) => [
      { type: "tool_call_finished", call: { ...viewOf(CANCEL_ORDER_CALL, "reply-1"), call_id, status: "denied", deny_reason: "价格太高" } },
    ];
    view.q<HTMLInputElement>(`${byId("call-cancel")} [data-testid="deny-reason"]`).value = "太贵了";
    click(view.q(`${byId("call-cancel")} [data-testid="deny"]`));
    await settle();
    expect(view.q(`${byId("call-cancel")} [data-testid="call-reason"]`).textContent).toBe("理由：价格太高");
  });

  it("a decision the core took without reporting it yet leaves the call asking: nothing is read into the answer", async () => {
    const view = mount(card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]));
    api.onDecisions = null;
    const approve = view.q<HTMLButtonElement>(`${byId("a")} [data-testid="approve"]`);
    approve.click();
    await settle();
    expect(api.of("respond_confirmation")).toHaveLength(1);
    expect(view.q(byId("a")).dataset.status).toBe("asking");
    expect(approve.disabled).toBe(false);
    view.coreSays({ type: "call_status_changed", call_id: "a", status: "approved" });
    expect(view.q(byId("a")).dataset.status).toBe("approved");
  });

  it("the core approves a call, runs the one above and asks it again before its answer arrives: it shows asking, not approved", async () => {
    const add = cardCall({ call_id: "add", preview: AIRPODS_CART_PREVIEW });
    const order: CardCall = { ...CREATE_ORDER_CALL, preview: IPHONE_ORDER_PREVIEW };
    const first = card([add, order]);
    const view = mount(first);
    click(view.q(`${byId("add")} [data-testid="approve"]`));
    await settle();
    expect(view.q(byId("add")).dataset.status).toBe("approved");

    // The last decision runs the card: the add goes, and what the order
    // would do changed, so the core asks for it again, all before it answers.
    api.onDecisions = () => [
      { type: "call_status_changed", call_id: "call-order", status: "approved" },
      { type: "run_started" },
      { type: "tool_call_started", call: { ...viewOf(add, "reply-1"), status: "running" } },
      { type: "tool_call_finished", call: { ...viewOf(add, "reply-1"), status: "succeeded", output: "已加入" } },
      { type: "call_status_changed", call_id: "call-order", status: "asking" },
      { type: "confirmation_requested", card: { ...first, calls: [{ ...add, status: "succeeded" }, order] } },
      { type: "run_stopped", reason: { type: "awaiting_confirmation", reply_id: "reply-1" } },
    ];
    const approveOrder = view.q<HTMLButtonElement>(`${byId("call-order")} [data-testid="approve"]`);
    approveOrder.focus();
    approveOrder.click();
    await settle();

    expect(view.q(byId("add")).dataset.status).toBe("succeeded");
    expect(view.q(byId("call-order")).dataset.status).toBe("asking");
    expect(view.q(`${byId("call-order")} [data-testid="call-status"]`).textContent).not.toBe("已批准");
    expect(view.q(`${byId("call-order")} .card-actions`).hidden).toBe(false);
    expect(approveOrder.disabled).toBe(false);
    expect(view.el.dataset.pending).toBe("true");
    expect(document.activeElement).toBe(approveOrder);
  });

  it("deny without a reason sends a null reason", async () => {
    const view = mount(card([CANCEL_ORDER_CALL]));
    click(view.q('[data-testid="deny"]'));
    await settle();
    expect(api.of("respond_confirmation")[0][2]).toEqual([{ call_id: "call-cancel", decision: { type: "deny", reason: null } }]);
  });

  it("approve-all sends every asking call, and none that is only allowed", async () => {
    const view = mount(
      card([cardCall({ call_id: "a" }), cardCall({ call_id: "read", status: "allowed" }), CREATE_ORDER_CALL]),
    );
    expect(view.q<HTMLElement>(".card-bulk").hidden).toBe(false);
    click(view.q('[data-testid="approve-all"]'));
    await settle();
    expect(api.of("respond_confirmation")).toEqual([
      [
        "s1",
        "reply-1",
        [
          { call_id: "a", decision: { type: "approve" } },
          { call_id: "call-order", decision: { type: "approve" } },
        ],
      ],
    ]);
  });

  it("deny-all sends every asking call with its own reason", async () => {
    const view = mount(card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]));
    view.q(byId("a")).querySelector<HTMLInputElement>('[data-testid="deny-reason"]')!.value = "不要了";
    click(view.q('[data-testid="deny-all"]'));
    await settle();
    expect(api.of("respond_confirmation")[0][2]).toEqual([
      { call_id: "a", decision: { type: "deny", reason: "不要了" } },
      { call_id: "call-order", decision: { type: "deny", reason: null } },
    ]);
  });

  it("pressing Escape anywhere on the card sends nothing", async () => {
    const view = mount(card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]));
    const targets = [
      view.q('[data-testid="approve"]'),
      view.q('[data-testid="approve-all"]'),
      view.q('[data-testid="deny-reason"]'),
      view.q("summary"),
      view.el,
    ];
    for (const target of targets) {
      target.focus();
      target.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true }));
    }
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(view.qa('[data-testid="card-call"]').map((el) => (el as HTMLElement).dataset.status)).toEqual(["asking", "asking"]);
  });

  it("Escape clears the deny reason", () => {
    const view = mount(card([CANCEL_ORDER_CALL]));
    const reason = view.q<HTMLInputElement>('[data-testid="deny-reason"]');
    reason.value = "理由";
    reason.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(reason.value).toBe("");
  });

  it("disables the card while a decision is in flight, so a double click sends once", async () => {
    api.hold = true;
    const view = mount(card([cardCall({ call_id: "a" }), CREATE_ORDER_CALL]));
    const approve = view.q(byId("a")).querySelector<HTMLButtonElement>('[data-testid="approve"]')!;
    approve.click();
    approve.click();
    view.q<HTMLButtonElement>('[data-testid="approve-all"]').click();
    await settle();
    expect(api.of("respond_confirmation")).toHaveLength(1);
    expect(approve.disabled).toBe(true);
    expect(view.qa("button").every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
    // Not shown as approved before the core said so.
    expect(view.q(byId("a")).dataset.status).toBe("asking");
    api.release();
    await settle();
    expect(view.q(byId("a")).dataset.status).toBe("approved");
    expect(api.of("respond_confirmation")).toHaveLength(1);
    expect(view.q(byId("call-order")).querySelector<HTMLButtonElement>('[data-testid="approve"]')!.disabled).toBe(false);
  });

  it("a refused decision says why in the user's language and re-enables the card", async () => {
    api.failNext = { code: "already_decided", message: "call a was already decided" };
    const view = mount(card([cardCall({ call_id: "a" })]));
    const approve = view.q<HTMLButtonElement>('[data-testid="approve"]');
    approve.focus();
    approve.click();
    await settle();
    expect(document.activeElement).toBe(approve);
    const error = view.q('[data-testid="card-error"]');
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("这个操作已经决定过了。");
    expect(error.title).toContain("call a was already decided");
    expect(approve.disabled).toBe(false);
    expect(view.q(byId("a")).dataset.status).toBe("asking");
  });

  it("shows each call's final status as the core's events change it", () => {
    const data = card([cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]);
    const view = mount(data);
    view.coreSays({ type: "tool_call_finished", call: { ...viewOf(data.calls[0], "reply-1"), status: "succeeded", output: "ok" } });
    view.coreSays({ type: "call_status_changed", call_id: "call-cancel", status: "expired" });
    const statuses = view.qa('[data-testid="card-call"]').map((el) => [
      (el as HTMLElement).dataset.status,
      el.querySelector(".status-badge")?.textContent,
      el.querySelector<HTMLElement>(".card-actions")?.hidden,
    ]);
    expect(statuses).toEqual([
      ["succeeded", "已完成", true],
      ["expired", "已过期，未执行", true],
    ]);
  });
});

describe("editing arguments before approving", () => {
  it("sends approve_edited with the parsed object; the card shows at once the arguments the core says the call will send", async () => {
    // A second call still asks: the approved one waits for it, unsent.
    const data = card([cardCall({ call_id: "a" }), cardCall({ call_id: "b" })]);
    const view = mount(data);
    const editor = openJson(view);
    expect(JSON.parse(editor.value)).toEqual({ skuCode: "MG6W4CH/A", action: "add", quantity: 2 });
    editor.value = '{"skuCode": "MG6W4CH/A", "action": "add", "quantity": 1}';
    editor.dispatchEvent(new Event("input"));
    click(view.q('[data-testid="approve-edited"]'));
    await settle();
    const edited = { skuCode: "MG6W4CH/A", action: "add", quantity: 1 };
    expect(api.of("respond_confirmation")[0][2]).toEqual([{ call_id: "a", decision: { type: "approve_edited", arguments: edited } }]);
    expect(view.q(byId("a")).dataset.status).toBe("approved");
    expect(view.q(byId("b")).dataset.status).toBe("asking");
    expect(view.el.querySelector('[data-testid="arguments-editor"]')).toBeNull();
    const shown = (id: string): Array<string | null> => [...view.q(byId(id)).querySelectorAll("dd")].map((dd) => dd.textContent);
    expect(shown("a")).toEqual(["MG6W4CH/A", "加入购物车", "1"]);
    expect(shown("b")).toEqual(["MG6W4CH/A", "加入购物车", "2"]);
    expect(JSON.parse(view.q(`${byId("a")} [data-testid="raw-json"] pre`).textContent ?? "")).toEqual(edited);
  });

  it("a call approved edited and then asked again shows what the card proposes again", async () => {
    const data = card([cardCall({ call_id: "a" })]);
    const view = mount(data);
    const edited = { skuCode: "MG6W4CH/A", action: "add", quantity: 1 };
    view.coreSays({ type: "call_status_changed", call_id: "a", status: "approved" });
    view.coreSays({ type: "tool_call_started", call: { ...viewOf(data.calls[0], "reply-1"), status: "running", arguments: edited } });
    expect(view.qa("dd").map((dd) => dd.textContent)).toEqual(["MG6W4CH/A", "加入购物车", "1"]);
    const proposed = { skuCode: "MG6W4CH/A", action: "add", quantity: 3 };
    view.coreSays({ type: "call_status_changed", call_id: "a", status: "asking" });
    view.coreSays({
      type: "confirmation_requested",
      card: { ...data, calls: [{ ...data.calls[0], arguments: proposed, arguments_text: JSON.stringify(proposed) }] },
    });
    expect(view.q(byId("a")).dataset.status).toBe("asking");
    expect(view.qa("dd").map((dd) => dd.textContent)).toEqual(["MG6W4CH/A", "加入购物车", "3"]);
  });

  it("refuses text that is not a JSON object before sending anything", async () => {
    const view = mount(card([cardCall({ call_id: "a" })]));
    const editor = openJson(view);
    const approveEdited = view.q<HTMLButtonElement>('[data-testid="approve-edited"]');
    for (const text of ['{"quantity": ', "[1, 2]"]) {
      editor.value = text;
      editor.dispatchEvent(new Event("input"));
      expect(approveEdited.disabled).toBe(true);
      expect(view.q('[data-testid="edit-error"]').hidden).toBe(false);
      approveEdited.click();
    }
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
  });

  it("shows the core's invalid_arguments error on the card", async () => {
    api.failNext = { code: "invalid_arguments", message: "quantity: 0 is less than the minimum of 1" };
    const view = mount(card([cardCall({ call_id: "a" })]));
    const editor = openJson(view);
    editor.value = '{"skuCode": "X", "action": "add", "quantity": 0}';
    editor.dispatchEvent(new Event("input"));
    click(view.q('[data-testid="approve-edited"]'));
    await settle();
    expect(view.q('[data-testid="card-error"]').textContent).toBe("修改后的参数不符合此工具的要求。");
    expect(view.q('[data-testid="card-error"]').title).toContain("quantity: 0 is less than the minimum of 1");
    expect(view.el.querySelector('[data-testid="arguments-editor"]')).not.toBeNull();
    expect(view.q(byId("a")).dataset.status).toBe("asking");
  });

  it("Escape closes the editor without approving", async () => {
    const view = mount(card([cardCall({ call_id: "a" })]));
    click(view.q('[data-testid="edit-arguments"]'));
    view.q('[data-testid="arguments-editor"]').dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    await settle();
    expect(view.el.querySelector('[data-testid="arguments-editor"]')).toBeNull();
    expect(api.of("respond_confirmation")).toEqual([]);
  });
});

/** A call as the core sends it: the arguments' exact text, and the same parsed by JSON.parse. */
function sentCall(callId: string, text: string) {
  return cardCall({ call_id: callId, arguments: JSON.parse(text), arguments_text: text });
}

describe("the card hides nothing", () => {
  it("lists arguments named like object built-ins with their values", () => {
    const view = mount(card([sentCall("c1", '{"constructor": "x", "toString": 1, "__proto__": {"a":1}}')]));
    const rows = view.qa("dt").map((dt, i) => [dt.textContent, view.qa("dd")[i].textContent]);
    expect(rows.map(([name]) => name)).toEqual(["constructor", "toString", "__proto__"]);
    expect(rows[0][1]).toBe("x");
    expect(rows[1][1]).toBe("1");
    expect(JSON.parse(rows[2][1] ?? "")).toEqual({ a: 1 });
    const raw = view.q('[data-testid="raw-json"] pre').textContent ?? "";
    expect(raw).toContain('"__proto__": {');
    expect(raw).toContain('"toString": 1');
  });

  it("shows an integer beyond 2^53 with every digit it will be sent with", () => {
    const view = mount(card([sentCall("c1", '{"skuCode":"MG6W4CH/A","action":"add","quantity":9007199254740993}')]));
    const quantity = view.qa("dt").findIndex((dt) => dt.textContent === "数量");
    expect(view.qa("dd")[quantity].textContent).toBe("9007199254740993");
    expect(view.q('[data-testid="raw-json"] pre').textContent).toContain('"quantity": 9007199254740993');
  });

  it("refuses to send an edit with a number a JavaScript number cannot hold", async () => {
    const view = mount(card([sentCall("c1", '{"skuCode":"MG6W4CH/A","action":"add","quantity":9007199254740993}')]));
    click(view.q('[data-testid="edit-arguments"]'));
    expect(view.q<HTMLTextAreaElement>('[data-testid="arguments-editor"]').value).toContain("9007199254740993");
    expect(view.q('[data-testid="edit-error"]').textContent).toContain("9007199254740993");
    const approveEdited = view.q<HTMLButtonElement>('[data-testid="approve-edited"]');
    expect(approveEdited.disabled).toBe(true);
    approveEdited.click();
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
  });
});

describe("a call whose tool's definition changed", () => {
  const changedCall = () =>
    cardCall({ call_id: "n1", qualified_name: "notes__add_note", server: "notes", tool: "add_note", definition_changed: true });

  it("shows each changed field old beside new, and only those", async () => {
    api.changes.set("notes__add_note", NOTES_CHANGE);
    const view = mount(card([changedCall()]));
    await settle();
    expect(api.of("tool_definition_change")).toEqual([["notes__add_note"]]);
    const fields = view.qa('[data-testid="definition-field"]') as HTMLElement[];
    expect(fields.map((f) => f.dataset.field)).toEqual(["description", "annotations"]);
    const [description, annotations] = fields;
    expect(description.querySelector('[data-testid="definition-old"]')?.textContent).toContain("Add a note to the notebook.");
    expect(description.querySelector('[data-testid="definition-new"]')?.textContent).toContain("Also sends your notes to a third party.");
    expect(annotations.querySelector('[data-testid="definition-old"] pre')?.textContent).toContain('"readOnlyHint": true');
    expect(annotations.querySelector('[data-testid="definition-new"] pre')?.textContent).toContain('"readOnlyHint": false');
  });

  it("accepting sends the shown hash, and the call still asks for its own decision", async () => {
    api.changes.set("notes__add_note", NOTES_CHANGE);
    const view = mount(card([changedCall()]));
    await settle();
    click(view.q('[data-testid="accept-definition"]'));
    await settle();
    expect(api.of("accept_tool_definition")).toEqual([["notes__add_note", NOTES_CHANGE.new_hash]]);
    expect(view.q('[data-testid="definition-accepted"]').textContent).toContain("仍需你批准或拒绝");
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(view.q(byId("n1")).dataset.status).toBe("asking");
    expect(view.q(byId("n1")).querySelector<HTMLElement>(".card-actions")?.hidden).toBe(false);
  });

  it("shows why accepting failed and keeps the button", async () => {
    api.changes.set("notes__add_note", NOTES_CHANGE);
    const view = mount(card([changedCall()]));
    await settle();
    api.failNext = { code: "definition_changed_again", message: "changed again" };
    click(view.q('[data-testid="accept-definition"]'));
    await settle();
    expect(view.q('[data-testid="definition-change"] [role="alert"]').textContent).toBe("工具的定义又变化了，请重新查看后再接受。");
    expect(view.q<HTMLButtonElement>('[data-testid="accept-definition"]').disabled).toBe(false);
  });
});
