// The window: title bar with the app's h1 and navigation, the session list,
// and one page (chat, audit log, settings, or the first-run screen).

import type { Api } from "../api";
import { button, h } from "../dom";
import { createI18n, langFor, type I18n, type Lang } from "../i18n";
import type {
  Appearance,
  DatabaseRestored,
  EventEnvelope,
  ModelStatus,
  SessionInfo,
  SettingsView,
  StartState,
  Transcript,
} from "../protocol";
import { markInteractiveAfterPaint } from "../interactive";
import { ChatLog } from "../state";
import { applyTheme } from "../theme";
import { auditView } from "./audit";
import { ChatView } from "./chat";
import { firstRunView, type FirstRunView } from "./firstrun";
import { settingsView } from "./settings";
import { Sidebar } from "./sidebar";
import { PageMessage, failureText } from "./error-text";
import { restoreNotice } from "./restore-notice";

export interface AppDeps {
  api: Api;
  root: HTMLElement;
  /** The system's language (`navigator.language` unless a test says). */
  systemLanguage?: string;
}

type Page = "chat" | "audit" | "settings" | "first-run";

/** What the page drew of the shell's start state, and the open count then. */
interface Handed {
  sessions: SessionInfo[];
  transcript: Transcript | null;
  token: number;
}

export class App {
  private readonly deps: AppDeps;
  private i18n: I18n;
  private page: Page = "chat";
  private sidebar!: Sidebar;
  private chat!: ChatView;
  private main!: HTMLElement;
  private nav!: Record<"chat" | "audit" | "settings", HTMLButtonElement>;
  private openToken = 0;
  private unlisten: (() => void) | null = null;
  /** What this start restored of a damaged database, until the shopper closes the notice. */
  private restored: DatabaseRestored[] = [];
  /** Settles once the page hears the core's events: a message waits for it. */
  private subscription: Promise<unknown> = Promise.resolve();
  /** What the shell handed over and the page drew, until checked. */
  private readonly handed: Handed | null;
  /** The model check's answer the shell handed over (no model set up), its first-run page drawn. */
  private readonly handedCheck: ModelStatus | null;

  constructor(deps: AppDeps) {
    this.deps = deps;
    const handed = deps.api.startState();
    const appearance = handed?.settings.appearance;
    // Without the shell's state, the system's language until the core's settings say otherwise.
    this.i18n = createI18n(langFor(appearance?.language ?? null, this.systemLanguage()));
    applyTheme(appearance?.theme ?? "system");
    this.restored = handed?.restored ?? [];
    this.build();
    this.handed = handed ? this.drawHanded(handed) : null;
    // A first run: the first-run page is the first screen, never the chat a moment before it.
    this.handedCheck = handed?.model ?? null;
    if (handed && this.handedCheck) this.drawFirstRun(this.handedCheck, handed.settings);
  }

  /**
   * Applies the stored language and theme, subscribes to events, lists and
   * opens sessions, checks the model. What the shell handed over is drawn
   * already; it is checked against the core's answers once subscribed, and
   * drawn again only where they differ.
   */
  async start(): Promise<void> {
    const { api } = this.deps;
    const handed = this.handed;
    const subscribing = api.onAgentEvent((envelope) => this.onEvent(envelope)).then(
      (unlisten) => ({ unlisten }),
      (error: unknown) => ({ error }),
    );
    this.subscription = subscribing;
    let subscribed: Awaited<typeof subscribing>;
    if (handed) {
      subscribed = await subscribing;
    } else {
      // Asked together: none needs another's answer, and the first answers
      // wait on the page's first layout anyway. The events go to whichever
      // view the answers leave (`onEvent` reads `this.chat` when it runs),
      // and sessions are listed only once subscribed, so none is missed.
      const [settings, restored, answered] = await Promise.all([
        api.getSettings().catch(() => null),
        api.databasesRestored().catch((): DatabaseRestored[] => []),
        subscribing,
      ]);
      subscribed = answered;
      if (settings) this.applyAppearance(settings.appearance);
      this.restored = restored;
      if (this.restored.length > 0) this.build();
    }
    if ("unlisten" in subscribed) this.unlisten = subscribed.unlisten;
    else this.chat.showError(subscribed.error);
    if (handed) await this.checkHanded(handed);
    else {
      await this.sidebar.refresh();
      const latest = this.sidebar.all[0];
      if (latest) await this.open(latest);
    }
    // The chat works from here on; the model check below may wait on the network.
    markInteractiveAfterPaint();
    // The shell handed the check's answer (no model set up), and its page is drawn.
    if (this.handedCheck) return;
    const check = await api.checkModel().catch((error: unknown) => ({
      state: "unreachable" as const,
      message: failureText(error, this.i18n),
    }));
    // Only a missing setup is the first run; a configured model that does
    // not answer now is the provider's trouble, not lost settings.
    if (check.state === "unreachable") {
      this.chat.showError(new PageMessage(this.i18n.t("modelCheck.down", { message: check.message ?? "" })));
    } else if (check.state === "not_configured") {
      await this.showFirstRun(check);
    }
  }

  /**
   * Draws the sessions and the newest one as the shell handed them, so the
   * first frame is the whole screen, and marks that frame. Answers what
   * was drawn, to be checked once subscribed.
   */
  private drawHanded(state: StartState): Handed {
    this.sidebar.setSessions(state.sessions);
    const latest = this.sidebar.all[0];
    // The page opens the newest session by its own order; a handed
    // transcript of another is not used.
    const transcript = latest && state.latest?.session.id === latest.id ? state.latest : null;
    const drawn = { sessions: state.sessions, transcript, token: this.openToken };
    // Without its transcript the newest session is opened once subscribed.
    if (latest && !transcript) return drawn;
    this.sidebar.setCurrent(latest?.id ?? null);
    if (transcript) this.chat.load(ChatLog.fromTranscript(transcript));
    markInteractiveAfterPaint();
    return drawn;
  }

  /**
   * Once subscribed, the core's sessions and open transcript against the
   * handed ones: what changed since the shell read them (nothing, as a
   * rule) is drawn again; what did not is left as the shopper sees it.
   */
  private async checkHanded(handed: Handed): Promise<void> {
    const { api } = this.deps;
    let sessions: SessionInfo[];
    try {
      sessions = await api.listSessions();
    } catch (error) {
      this.sidebar.showError(error);
      return;
    }
    if (JSON.stringify(sessions) !== JSON.stringify(handed.sessions)) this.sidebar.setSessions(sessions);
    // The shopper opened a session meanwhile: theirs stands.
    if (handed.token !== this.openToken) return;
    const latest = this.sidebar.all[0];
    if (!latest) return;
    if (handed.transcript?.session.id !== latest.id) {
      // Opened behind whatever page is shown: a handed first-run page stays.
      await this.open(latest, false);
      return;
    }
    try {
      const transcript = await api.openSession(latest.id);
      if (handed.token !== this.openToken) return;
      if (JSON.stringify(transcript) !== JSON.stringify(handed.transcript)) {
        this.chat.load(ChatLog.fromTranscript(transcript));
      }
    } catch (error) {
      if (handed.token === this.openToken) this.chat.showError(error);
    }
  }

  /**
   * The first-run page; after a language was chosen on it (`chosen`), drawn
   * again in that language with the window. The page is made whole before
   * it is shown, so there is no moment without its form, and the language
   * choice keeps keyboard focus across the redraw.
   */
  private async showFirstRun(check: ModelStatus, chosen?: Appearance): Promise<void> {
    const i18n = chosen ? createI18n(langFor(chosen.language, this.systemLanguage())) : this.i18n;
    const firstRun = this.firstRunView(check, i18n);
    await firstRun.load();
    if (chosen) this.applyAppearance(chosen);
    this.show("first-run", firstRun.el);
    if (chosen) firstRun.focusLanguage();
  }

  /** The first-run page made whole at once from the settings the shell handed over. */
  private drawFirstRun(check: ModelStatus, settings: SettingsView): void {
    const firstRun = this.firstRunView(check, this.i18n, settings);
    // With the settings given, the form is made before this returns.
    void firstRun.load();
    this.show("first-run", firstRun.el);
  }

  private firstRunView(check: ModelStatus, i18n: I18n, settings?: SettingsView): FirstRunView {
    return firstRunView({
      api: this.deps.api,
      i18n,
      check,
      settings,
      onDone: () => this.show("chat"),
      onLanguage: (appearance) => void this.showFirstRun(check, appearance),
    });
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = null;
  }

  private onEvent(envelope: EventEnvelope): void {
    this.chat.handle(envelope);
  }

  private build(): void {
    const { t } = this.i18n;
    document.documentElement.lang = this.i18n.lang;
    const navButton = (page: "chat" | "audit" | "settings", label: string, testid: string): HTMLButtonElement =>
      button(label, () => this.show(page), { class: "nav-button", testid });
    this.nav = {
      chat: navButton("chat", t("nav.chat"), "nav-chat"),
      audit: navButton("audit", t("nav.audit"), "audit"),
      settings: navButton("settings", t("nav.settings"), "settings"),
    };
    this.sidebar = new Sidebar({ api: this.deps.api, i18n: this.i18n, onSelect: (session) => this.open(session) });
    this.chat = new ChatView({
      api: this.deps.api,
      i18n: this.i18n,
      ensureSession: () => this.ensureSession(),
      onRunStopped: () => void this.sidebar.refresh(),
      openSettings: () => this.show("settings"),
    });
    this.main = h("main", { class: "app-main", attrs: { id: "main" } });
    this.deps.root.replaceChildren(
      h(
        "div",
        { class: "app" },
        h(
          "header",
          { class: "app-header" },
          h("h1", { text: t("app.title") }),
          h("nav", { class: "app-nav", attrs: { "aria-label": t("nav.label") } }, this.nav.chat, this.nav.audit, this.nav.settings),
        ),
        ...(this.restored.length > 0 ? [restoreNotice(this.i18n, this.restored, () => this.closeRestoreNotice())] : []),
        h("div", { class: "app-body" }, this.sidebar.el, this.main),
      ),
    );
    this.show(this.page === "first-run" ? "chat" : this.page);
  }

  private show(page: Page, element?: HTMLElement): void {
    this.page = page;
    for (const [name, el] of Object.entries(this.nav)) {
      el.setAttribute("aria-current", name === page ? "page" : "false");
    }
    switch (page) {
      case "chat":
        this.main.replaceChildren(this.chat.el);
        this.chat.focusComposer();
        return;
      case "audit": {
        const view = auditView({
          api: this.deps.api,
          i18n: this.i18n,
          sessions: () => this.sidebar.all,
          openSession: (id) => {
            const session = this.sidebar.all.find((s) => s.id === id);
            if (session) void this.open(session);
          },
        });
        this.main.replaceChildren(view.el);
        void view.load();
        return;
      }
      case "settings": {
        const view = settingsView({
          api: this.deps.api,
          i18n: this.i18n,
          onSaved: (saved) => this.applyAppearance(saved.appearance),
        });
        this.main.replaceChildren(view.el);
        void view.load();
        return;
      }
      case "first-run":
        if (element) this.main.replaceChildren(element);
        return;
    }
  }

  private async open(session: SessionInfo | null, switchToChat = true): Promise<void> {
    const token = ++this.openToken;
    this.sidebar.setCurrent(session?.id ?? null);
    if (!session) {
      this.chat.load(null);
      return;
    }
    try {
      const transcript = await this.deps.api.openSession(session.id);
      if (token !== this.openToken) return;
      this.chat.load(ChatLog.fromTranscript(transcript));
    } catch (error) {
      if (token !== this.openToken) return;
      this.chat.load(null);
      this.chat.showError(error);
    }
    if (switchToChat && this.page !== "chat") this.show("chat");
  }

  private closeRestoreNotice(): void {
    this.restored = [];
    this.deps.root.querySelector("[data-testid=restore-notice]")?.remove();
    this.chat.focusComposer();
  }

  private async ensureSession(): Promise<string> {
    // The handed first screen can be used before the page hears events.
    await this.subscription;
    const open = this.chat.sessionId;
    if (open) return open;
    const session = await this.sidebar.create();
    if (!session) throw new PageMessage(this.i18n.t("chat.noSession"));
    return session.id;
  }

  private systemLanguage(): string | undefined {
    return this.deps.systemLanguage ?? globalThis.navigator?.language;
  }

  /** The language and theme the core keeps: a language not chosen follows the system. */
  private applyAppearance(appearance: Appearance): void {
    applyTheme(appearance.theme);
    const lang = langFor(appearance.language, this.systemLanguage());
    if (lang !== this.i18n.lang) this.setLanguage(lang);
  }

  private setLanguage(lang: Lang): void {
    this.i18n = createI18n(lang);
    const sessions = [...this.sidebar.all];
    const current = this.chat.sessionId;
    this.build();
    this.sidebar.setSessions(sessions);
    const session = sessions.find((s) => s.id === current);
    if (session) void this.open(session, false);
  }
}
