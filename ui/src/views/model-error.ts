// A turn the model failed: what happened and its likely cause in the
// user's language, "Retry" (asks the model again on the stored
// conversation) and "Open settings", and behind "Details" what the
// provider answered, for a bug report. Provider text is only set as text.

import type { Api } from "../api";
import { button, h } from "../dom";
import type { I18n, MessageKey } from "../i18n";
import type { ErrorInfo, ModelFailure, ModelFailureKind } from "../protocol";
import { showFailure } from "./error-text";
import type { MessageView } from "./messages";

export interface ModelErrorDeps {
  api: Api;
  i18n: I18n;
  sessionId: string;
  openSettings(): void;
}

const KEYS: Record<Exclude<ModelFailureKind["type"], "rate_limited">, MessageKey> = {
  unreachable: "modelError.unreachable",
  timeout: "modelError.timeout",
  unauthorized: "modelError.unauthorized",
  server_error: "modelError.serverError",
  rejected: "modelError.rejected",
  bad_response: "modelError.badResponse",
  not_configured: "modelError.notConfigured",
};

/** What happened and the likely cause, in the page's language. */
export function modelFailureText(kind: ModelFailureKind, i18n: I18n): string {
  if (kind.type === "rate_limited") {
    return kind.retry_after_secs === null
      ? i18n.t("modelError.rateLimited")
      : i18n.t("modelError.rateLimitedAfter", { seconds: kind.retry_after_secs });
  }
  return i18n.t(KEYS[kind.type]);
}

export function modelErrorView(failure: ModelFailure, deps: ModelErrorDeps): MessageView<ErrorInfo> {
  const { i18n } = deps;
  const { t } = i18n;
  const message = h("p", { class: "model-error-text", attrs: { "data-testid": "model-error-message" } });
  const problem = h("p", { class: "field-error", attrs: { role: "alert", "data-testid": "model-error-problem" } });
  problem.hidden = true;
  const retry = button(t("modelError.retry"), () => void onRetry(), {
    class: "btn btn-suggested btn-small",
    testid: "model-error-retry",
  });
  const settings = button(t("modelError.openSettings"), () => deps.openSettings(), {
    class: "btn btn-small",
    testid: "model-error-settings",
  });
  const actions = h("div", { class: "model-error-actions" }, retry, settings);
  const details = h("dl", { class: "model-error-facts" });
  const el = h(
    "div",
    { class: "notice-error model-error", attrs: { role: "alert", "data-testid": "model-error" } },
    message,
    actions,
    problem,
    h(
      "details",
      { class: "model-error-details", attrs: { "data-testid": "model-error-details" } },
      h("summary", { text: t("error.details") }),
      details,
    ),
  );

  const onRetry = async (): Promise<void> => {
    retry.disabled = true;
    showFailure(problem, null, i18n);
    try {
      await deps.api.retryRun(deps.sessionId);
      // The new run answers below; this turn's buttons are spent.
      actions.hidden = true;
    } catch (error) {
      retry.disabled = false;
      showFailure(problem, error, i18n);
    }
  };

  const update = (next: ErrorInfo): void => {
    const current = next.model_failure ?? failure;
    message.textContent = modelFailureText(current.kind, i18n);
    const { status, request_id, raw } = current.details;
    details.replaceChildren(
      h("dt", { text: t("modelError.status") }),
      h("dd", { text: status === null ? t("modelError.none") : String(status), attrs: { "data-testid": "model-error-status" } }),
      h("dt", { text: t("modelError.requestId") }),
      h("dd", { text: request_id ?? t("modelError.none"), attrs: { "data-testid": "model-error-request-id" } }),
      h("dt", { text: t("modelError.raw") }),
      h("dd", {}, h("pre", { class: "model-error-raw", text: raw, attrs: { "data-testid": "model-error-raw" } })),
    );
  };
  update({ code: "model", message: "", model_failure: failure });
  return { el, update };
}
