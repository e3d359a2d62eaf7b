import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import { FakeApi, settle } from "../test/fake-api";
import { CANCEL_ORDER_CALL, card, cardCall } from "../test/fixtures";
import { callById, mountCard } from "../test/mount-card";
import { confirmationCard } from "./card";

let api: FakeApi;

beforeEach(() => {
  api = new FakeApi();
});

const twoCalls = () => card([cardCall({ call_id: "read", status: "allowed" }), cardCall({ call_id: "a" }), CANCEL_ORDER_CALL]);
const key = (target: Element, init: KeyboardEventInit) =>
  target.dispatchEvent(new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init }));
const approveOf = (view: ReturnType<typeof mountCard>, id: string) => view.q<HTMLButtonElement>(`${callById(id)} [data-testid="approve"]`);

describe("deciding a card with the keyboard", () => {
  it("when a card appears, focus moves to its first asking call's approve button and what is asked is announced", async () => {
    const view = mountCard(twoCalls(), api);
    await settle();
    expect(document.activeElement).toBe(approveOf(view, "a"));
    const live = view.q('[data-testid="card-announce"]');
    expect(live.getAttribute("aria-live")).toBe("polite");
    expect(live.textContent).toBe("2 个操作待确认。当前：加入/修改购物车，按 Enter 批准。");
  });

  it("pressing Enter twice approves both calls: focus moves from one approve button to the next", async () => {
    const view = mountCard(twoCalls(), api);
    await settle();
    // Enter on a focused button is its click.
    (document.activeElement as HTMLElement).click();
    await settle();
    expect(document.activeElement).toBe(approveOf(view, "call-cancel"));
    expect(view.q('[data-testid="card-announce"]').textContent).toContain("1 个操作待确认");
    (document.activeElement as HTMLElement).click();
    await settle();
    expect(api.of("respond_confirmation").map((call) => call[2])).toEqual([
      [{ call_id: "a", decision: { type: "approve" } }],
      [{ call_id: "call-cancel", decision: { type: "approve" } }],
    ]);
    const status = (id: string) => view.q(callById(id)).dataset.status;
    expect([status("a"), status("call-cancel")]).toEqual(["approved", "approved"]);
  });

  it("focus moves on to the next call when the core's event comes after its answer", async () => {
    api.eventsAfterAnswer = true;
    const view = mountCard(twoCalls(), api);
    await settle();
    (document.activeElement as HTMLElement).click();
    await settle();
    expect(view.q(callById("a")).dataset.status).toBe("approved");
    expect(document.activeElement).toBe(approveOf(view, "call-cancel"));
    expect(view.q('[data-testid="card-announce"]').textContent).toContain("1 个操作待确认");
  });

  it("Ctrl+Enter approves the call that has focus", async () => {
    const view = mountCard(twoCalls(), api);
    await settle();
    const deny = view.q(`${callById("call-cancel")} [data-testid="deny"]`);
    deny.focus();
    key(deny, { key: "Enter", ctrlKey: true });
    await settle();
    expect(api.of("respond_confirmation")[0][2]).toEqual([{ call_id: "call-cancel", decision: { type: "approve" } }]);
  });

  it("Ctrl+Enter outside any call approves the first call still asking, never one only allowed", async () => {
    const view = mountCard(twoCalls(), api);
    key(view.el, { key: "Enter", ctrlKey: true });
    await settle();
    expect(api.of("respond_confirmation")[0][2]).toEqual([{ call_id: "a", decision: { type: "approve" } }]);
  });

  it("Ctrl+Backspace in the reason field denies that call with the reason typed", async () => {
    const view = mountCard(twoCalls(), api);
    const reason = view.q<HTMLInputElement>(`${callById("call-cancel")} [data-testid="deny-reason"]`);
    reason.value = "不取消了";
    key(reason, { key: "Backspace", ctrlKey: true });
    await settle();
    expect(api.of("respond_confirmation")[0][2]).toEqual([{ call_id: "call-cancel", decision: { type: "deny", reason: "不取消了" } }]);
    expect(view.q(callById("call-cancel")).dataset.status).toBe("denied");
    expect(view.q(`${callById("call-cancel")} [data-testid="call-reason"]`).textContent).toBe("理由：不取消了");
  });

  it("Enter in the deny-reason field does not deny, nor approve", async () => {
    const view = mountCard(twoCalls(), api);
    const reason = view.q<HTMLInputElement>(`${callById("a")} [data-testid="deny-reason"]`);
    reason.value = "太贵";
    key(reason, { key: "Enter" });
    key(reason, { key: "Enter", ctrlKey: true });
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(reason.value).toBe("太贵");
  });

  it("inside the argument editor the shortcuts send nothing", async () => {
    const view = mountCard(twoCalls(), api);
    view.q(`${callById("a")} [data-testid="edit-arguments"]`).click();
    const quantity = view.q<HTMLInputElement>('[data-testid="field-quantity"]');
    key(quantity, { key: "Enter", ctrlKey: true });
    key(quantity, { key: "Backspace", ctrlKey: true });
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
  });

  it("Escape on the focused approve button sends nothing and leaves focus there", async () => {
    const view = mountCard(twoCalls(), api);
    await settle();
    key(approveOf(view, "a"), { key: "Escape" });
    await settle();
    expect(api.of("respond_confirmation")).toEqual([]);
    expect(document.activeElement).toBe(approveOf(view, "a"));
  });

  it("shows its shortcuts while a call asks, and hides them once none does", async () => {
    const view = mountCard(card([cardCall({ call_id: "a" })]), api);
    const hint = view.q('[data-testid="card-shortcuts"]');
    expect(hint.hidden).toBe(false);
    expect(hint.textContent).toContain("Ctrl+Enter 批准");
    expect(hint.textContent).toContain("Ctrl+Backspace 拒绝");
    key(view.el, { key: "Enter", ctrlKey: true });
    await settle();
    expect(hint.hidden).toBe(true);
  });

  // The core sends the card again proposing the edit, then refuses the
  // reply; the page may receive the two in either order.
  describe.each([
    { order: "the resent card arrives before the refusal", resentFirst: true },
    { order: "the refusal arrives before the resent card", resentFirst: false },
  ])("an edited approval refused because its preview changed, when $order", ({ resentFirst }) => {
    it("ends with the editor closed, the edit proposed and focus on the edited call's approve button", async () => {
      const data = card([cardCall({ call_id: "a" }), cardCall({ call_id: "b" })]);
      const view = mountCard(data, api);
      await settle();
      view.q(`${callById("b")} [data-testid="edit-arguments"]`).click();
      const quantity = view.q<HTMLInputElement>(`${callById("b")} [data-testid="field-quantity"]`);
      quantity.value = "1";
      quantity.dispatchEvent(new Event("input", { bubbles: true }));
      api.hold = true;
      view.q('[data-testid="approve-edited"]').focus();
      view.q('[data-testid="approve-edited"]').click();
      await settle();
      const edited = { skuCode: "MG6W4CH/A", action: "add", quantity: 1 };
      const resend = () =>
        view.update({ ...data, calls: [data.calls[0], { ...data.calls[1], arguments: edited, arguments_text: JSON.stringify(edited) }] });
      const refuse = async () => {
        api.failNext = { code: "preview_changed", message: "the preview changed" };
        api.release();
        await settle();
      };
      if (resentFirst) {
        resend();
        await refuse();
      } else {
        await refuse();
        resend();
      }
      await settle();
      expect(view.el.querySelector(".card-editor")).toBeNull();
      expect(document.activeElement).toBe(approveOf(view, "b"));
      expect(view.qa(`${callById("b")} dd`).map((dd) => dd.textContent)).toContain("1");
      expect(view.q('[data-testid="card-error"]').hidden).toBe(false);
    });
  });

  it("cancelling the editor gives focus back to the call's Edit button", async () => {
    const view = mountCard(card([cardCall({ call_id: "a" })]), api);
    await settle();
    view.q('[data-testid="edit-arguments"]').click();
    view.q('[data-testid="cancel-edit"]').focus();
    view.q('[data-testid="cancel-edit"]').click();
    expect(view.el.querySelector(".card-editor")).toBeNull();
    expect(document.activeElement).toBe(view.q('[data-testid="edit-arguments"]'));
  });

  it("a card that is not on the page takes no focus", async () => {
    const outside = document.createElement("button");
    document.body.replaceChildren(outside);
    outside.focus();
    confirmationCard(twoCalls(), { api, i18n: createI18n("en") });
    await settle();
    expect(document.activeElement).toBe(outside);
  });
});
