// The session list: new, open, rename inline, delete after an inline
// confirmation. It owns the list and tells the app which session to show.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { SessionInfo } from "../protocol";
import { showFailure } from "./error-text";

export interface SidebarDeps {
  api: Api;
  i18n: I18n;
  /** Show this session (null: none is left). */
  onSelect(session: SessionInfo | null): void | Promise<void>;
}

export class Sidebar {
  readonly el: HTMLElement;
  private sessions: SessionInfo[] = [];
  private current: string | null = null;
  /** A rename or delete confirmation is open; a refresh must not wipe it. */
  private editing = false;
  private readonly list = h("ul", { class: "session-list" });
  private readonly error = h("p", { class: "sidebar-error", attrs: { role: "alert", hidden: true } });
  private readonly deps: SidebarDeps;

  constructor(deps: SidebarDeps) {
    this.deps = deps;
    const { t } = deps.i18n;
    const headingId = "sessions-heading";
    this.el = h(
      "nav",
      { class: "sidebar", attrs: { "aria-labelledby": headingId } },
      h(
        "div",
        { class: "sidebar-head" },
        h("h2", { text: t("sessions.label"), attrs: { id: headingId } }),
        button(`+ ${t("sessions.new")}`, () => void this.create(), { class: "btn", testid: "new-session" }),
      ),
      this.list,
      this.error,
    );
  }

  get all(): readonly SessionInfo[] {
    return this.sessions;
  }

  async refresh(): Promise<void> {
    try {
      this.setSessions(await this.deps.api.listSessions());
    } catch (error) {
      this.showError(error);
    }
  }

  setSessions(sessions: SessionInfo[]): void {
    this.sessions = [...sessions].sort((a, b) => b.updated_at - a.updated_at);
    if (!this.editing) this.render();
  }

  setCurrent(sessionId: string | null): void {
    this.current = sessionId;
    this.render();
  }

  /** Creates a session, lists it and selects it. */
  async create(): Promise<SessionInfo | null> {
    try {
      const session = await this.deps.api.createSession();
      this.sessions = [session, ...this.sessions.filter((s) => s.id !== session.id)];
      this.current = session.id;
      this.render();
      await this.deps.onSelect(session);
      return session;
    } catch (error) {
      this.showError(error);
      return null;
    }
  }

  private render(): void {
    const { t } = this.deps.i18n;
    this.editing = false;
    this.showError(null);
    if (this.sessions.length === 0) {
      replace(this.list, h("li", { class: "session-empty", text: t("sessions.empty") }));
      return;
    }
    replace(this.list, ...this.sessions.map((session) => this.item(session)));
  }

  private item(session: SessionInfo): HTMLLIElement {
    const { t } = this.deps.i18n;
    const title = session.title.trim() || t("sessions.untitled");
    const li = h("li", {
      class: "session-item",
      attrs: { "data-testid": "session-item", "data-session-id": session.id },
    });
    const open = h("button", {
      class: "session-open",
      text: title,
      attrs: { type: "button", "aria-current": session.id === this.current ? "page" : false, title },
      on: { click: () => this.select(session) },
    });
    const rename = button("✎", () => this.startRename(li, session), {
      class: "btn-icon",
      aria: t("sessions.rename", { title }),
      testid: "rename-session",
    });
    const remove = button("✕", () => this.confirmDelete(li, session), {
      class: "btn-icon",
      aria: t("sessions.delete", { title }),
      testid: "delete-session",
    });
    li.append(open, rename, remove);
    return li;
  }

  private select(session: SessionInfo): void {
    this.current = session.id;
    this.render();
    void this.deps.onSelect(session);
  }

  private startRename(li: HTMLLIElement, session: SessionInfo): void {
    const { t } = this.deps.i18n;
    let done = false;
    const finish = async (save: boolean): Promise<void> => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (!save || title === "" || title === session.title) {
        this.render();
        this.focusItem(session.id);
        return;
      }
      try {
        const renamed = await this.deps.api.renameSession(session.id, title);
        this.sessions = this.sessions.map((s) => (s.id === renamed.id ? renamed : s));
        this.render();
        this.focusItem(session.id);
      } catch (error) {
        this.render();
        this.showError(error);
      }
    };
    const input = h("input", {
      class: "session-rename",
      attrs: { type: "text", value: session.title, "aria-label": t("sessions.renameInput"), maxlength: 100 },
      on: {
        keydown: (event) => {
          if (event.key === "Enter" && !event.isComposing) {
            event.preventDefault();
            void finish(true);
          } else if (event.key === "Escape") {
            event.preventDefault();
            void finish(false);
          }
        },
        blur: () => void finish(true),
      },
    });
    replace(li, input);
    this.editing = true;
    input.focus();
    input.select();
  }

  private confirmDelete(li: HTMLLIElement, session: SessionInfo): void {
    const { t } = this.deps.i18n;
    const no = button(t("sessions.confirmNo"), () => {
      this.render();
      this.focusItem(session.id);
    }, { class: "btn", testid: "cancel-delete" });
    const yes = button(t("sessions.confirmYes"), () => void this.delete(session), {
      class: "btn btn-destructive",
      testid: "confirm-delete",
    });
    replace(li, h("span", { class: "session-confirm", text: t("sessions.confirmDelete") }), no, yes);
    this.editing = true;
    li.addEventListener("keydown", (event) => {
      if (event.key === "Escape") no.click();
    });
    no.focus();
  }

  private async delete(session: SessionInfo): Promise<void> {
    try {
      await this.deps.api.deleteSession(session.id);
    } catch (error) {
      this.render();
      this.showError(error);
      return;
    }
    this.sessions = this.sessions.filter((s) => s.id !== session.id);
    const wasCurrent = this.current === session.id;
    if (wasCurrent) this.current = this.sessions[0]?.id ?? null;
    this.render();
    if (wasCurrent) await this.deps.onSelect(this.sessions[0] ?? null);
  }

  private focusItem(sessionId: string): void {
    this.list.querySelector<HTMLElement>(`[data-session-id="${CSS.escape(sessionId)}"] .session-open`)?.focus();
  }

  showError(error: unknown): void {
    showFailure(this.error, error, this.deps.i18n);
  }
}
