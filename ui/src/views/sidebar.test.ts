import { beforeEach, describe, expect, it } from "vitest";

import { createI18n } from "../i18n";
import type { SessionInfo } from "../protocol";
import { FakeApi, settle } from "../test/fake-api";
import { XSS_IMG } from "../test/fixtures";
import { Sidebar } from "./sidebar";

const i18n = createI18n("zh-CN");
let api: FakeApi;
let sidebar: Sidebar;
let selected: Array<string | null>;

const items = () => [...sidebar.el.querySelectorAll<HTMLElement>('[data-testid="session-item"]')];
const item = (id: string) => sidebar.el.querySelector<HTMLElement>(`[data-session-id="${id}"]`)!;
const key = (el: Element, k: string) => el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));

beforeEach(async () => {
  api = new FakeApi();
  api.sessions = [
    { id: "old", title: "旧会话", created_at: 1, updated_at: 10 },
    { id: "new", title: `${XSS_IMG}`, created_at: 2, updated_at: 20 },
  ];
  selected = [];
  sidebar = new Sidebar({ api, i18n, onSelect: (s: SessionInfo | null) => void selected.push(s?.id ?? null) });
  document.body.replaceChildren(sidebar.el);
  await sidebar.refresh();
});

describe("the session list", () => {
  it("lists sessions newest first, titles as text", () => {
    expect(items().map((el) => el.dataset.sessionId)).toEqual(["new", "old"]);
    expect(item("new").textContent).toContain(XSS_IMG);
    expect(sidebar.el.querySelector("img")).toBeNull();
  });

  it("opens a session on click", () => {
    item("old").querySelector<HTMLButtonElement>(".session-open")!.click();
    expect(selected).toEqual(["old"]);
    expect(item("old").querySelector(".session-open")?.getAttribute("aria-current")).toBe("page");
  });

  it("creates a session and selects it", async () => {
    sidebar.el.querySelector<HTMLButtonElement>('[data-testid="new-session"]')!.click();
    await settle();
    expect(api.of("create_session")).toHaveLength(1);
    expect(items()).toHaveLength(3);
    expect(selected).toEqual([items()[0].dataset.sessionId]);
  });

  it("renames inline: Enter saves, Escape cancels", async () => {
    item("old").querySelector<HTMLButtonElement>('[data-testid="rename-session"]')!.click();
    let input = item("old").querySelector<HTMLInputElement>("input")!;
    expect(document.activeElement).toBe(input);
    input.value = "不要这个名字";
    key(input, "Escape");
    await settle();
    expect(api.of("rename_session")).toEqual([]);
    expect(item("old").textContent).toContain("旧会话");

    item("old").querySelector<HTMLButtonElement>('[data-testid="rename-session"]')!.click();
    input = item("old").querySelector<HTMLInputElement>("input")!;
    input.value = "买耳机";
    key(input, "Enter");
    await settle();
    expect(api.of("rename_session")).toEqual([["old", "买耳机"]]);
    expect(item("old").querySelector(".session-open")?.textContent).toBe("买耳机");
  });

  it("deletes only after an inline confirmation", async () => {
    item("old").querySelector<HTMLButtonElement>('[data-testid="delete-session"]')!.click();
    expect(api.of("delete_session")).toEqual([]);
    item("old").querySelector<HTMLButtonElement>('[data-testid="cancel-delete"]')!.click();
    expect(items()).toHaveLength(2);

    item("old").querySelector<HTMLButtonElement>('[data-testid="delete-session"]')!.click();
    item("old").querySelector<HTMLButtonElement>('[data-testid="confirm-delete"]')!.click();
    await settle();
    expect(api.of("delete_session")).toEqual([["old"]]);
    expect(items().map((el) => el.dataset.sessionId)).toEqual(["new"]);
  });

  it("deleting the open session selects the next one", async () => {
    item("new").querySelector<HTMLButtonElement>(".session-open")!.click();
    item("new").querySelector<HTMLButtonElement>('[data-testid="delete-session"]')!.click();
    item("new").querySelector<HTMLButtonElement>('[data-testid="confirm-delete"]')!.click();
    await settle();
    expect(selected).toEqual(["new", "old"]);
  });

  it("a refresh while renaming keeps the rename field", async () => {
    item("old").querySelector<HTMLButtonElement>('[data-testid="rename-session"]')!.click();
    await sidebar.refresh();
    expect(item("old").querySelector("input")).not.toBeNull();
  });

  it("shows a failed rename's message", async () => {
    api.sessions = api.sessions.filter((s) => s.id !== "old");
    item("old").querySelector<HTMLButtonElement>('[data-testid="rename-session"]')!.click();
    const input = item("old").querySelector<HTMLInputElement>("input")!;
    input.value = "x";
    key(input, "Enter");
    await settle();
    const error = sidebar.el.querySelector<HTMLElement>(".sidebar-error")!;
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("找不到这个会话，它可能已被删除。");
    expect(error.title).toContain("gone");
  });
});
