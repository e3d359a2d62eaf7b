// Signing in to a server, as the chat and the settings show it: "Sign in
// to <server>"; while the system browser is open, that the app waits, with
// cancel; then who signed in, or why not with a way to try again. The
// shell opens the page the core gives: this view never names an address.

import type { Api } from "../api";
import { button, h, replace } from "../dom";
import type { I18n } from "../i18n";
import type { ErrorInfo } from "../protocol";
import type { Notice } from "../state";
import type { MessageView } from "./messages";
import { errorDetail } from "./error-text";

export interface SignInDeps {
  api: Api;
  i18n: I18n;
  /** The user signed in as `identity`. */
  onSignedIn?(identity: string): void;
}

/** A "Sign in to <server>" button that follows the sign-in to its end. */
export function signInControl(server: string, deps: SignInDeps): HTMLElement {
  const { api, i18n } = deps;
  const { t } = i18n;
  const el = h("div", { class: "sign-in", attrs: { "data-testid": "sign-in", "data-server": server } });

  const idle = (failure?: ErrorInfo): void => {
    const start = button(failure ? t("signIn.retry") : t("signIn.button", { server }), () => void begin(), {
      class: "btn btn-primary btn-small",
      testid: "sign-in-start",
    });
    const said =
      failure && failure.code !== "sign_in_cancelled"
        ? h("span", { class: "sign-in-error", attrs: { role: "alert", title: errorDetail(failure, i18n) }, text: i18n.error(failure) })
        : null;
    replace(el, said, start);
  };

  const begin = async (): Promise<void> => {
    const cancel = button(t("signIn.cancel"), () => void api.cancelSignIn(server), {
      class: "btn btn-small",
      testid: "sign-in-cancel",
    });
    replace(el, h("span", { class: "sign-in-waiting", attrs: { role: "status", "data-testid": "sign-in-waiting" }, text: t("signIn.waiting") }), cancel);
    try {
      const status = await api.signIn(server);
      const identity = status.type === "signed_in" ? status.identity : server;
      replace(el, h("span", { class: "sign-in-done", attrs: { "data-testid": "signed-in" }, text: t("signIn.signedIn", { identity }) }));
      deps.onSignedIn?.(identity);
    } catch (error) {
      idle(error as ErrorInfo);
    }
  };

  idle();
  return el;
}

type SignInNotice = Extract<Notice, { type: "sign_in_required" }>;

/**
 * The chat's notice of a server that asks for a sign-in. While the run
 * waits it offers signing in and going on without the server; once the
 * wait ends it says how. A run that went on at once still offers signing
 * in, for the next message.
 */
export function signInNoticeView(notice: SignInNotice, deps: SignInDeps): MessageView<SignInNotice> {
  const { api, i18n } = deps;
  const { t } = i18n;
  const text = h("span", { class: "notice-text" });
  const controls = h("div", { class: "notice-actions" });
  const el = h("div", { class: "notice notice-sign-in", attrs: { role: "status", "data-testid": "notice" } }, text, controls);
  let shownControls: "waiting" | "offer" | "none" | null = null;

  const update = (next: SignInNotice): void => {
    const { server } = next;
    if (next.ended) {
      text.textContent =
        next.ended.identity === null
          ? t("chat.signInSkipped", { server })
          : t("chat.signInEnded", { server, identity: next.ended.identity });
    } else {
      text.textContent = next.runWaits ? t("chat.signInWaits", { server }) : t("chat.signInRequired", { server });
    }
    const wanted = next.ended ? "none" : next.runWaits ? "waiting" : "offer";
    if (wanted === shownControls) return;
    shownControls = wanted;
    if (wanted === "none") {
      replace(controls);
      return;
    }
    const goOn =
      wanted === "waiting"
        ? button(t("signIn.goOn"), () => void api.goOnWithout(server), { class: "btn btn-small", testid: "sign-in-go-on" })
        : null;
    replace(controls, signInControl(server, deps), goOn);
  };
  update(notice);
  return { el, update };
}
