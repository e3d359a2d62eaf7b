// What the settings page says of a server's process: running, waiting to
// be used, or failing and when it is tried again. The core's own words of
// the last failure follow as detail.

import { h } from "../dom";
import type { I18n } from "../i18n";
import type { ServerStatus } from "../protocol";

export function serverStatusLine(status: ServerStatus, i18n: I18n): HTMLElement {
  const failing = status.retry_in_secs !== null;
  const el = h("span", {
    class: failing ? "server-status server-status-failing" : "server-status",
    attrs: { "data-testid": "server-status" },
    text: statusText(status, i18n),
  });
  if (status.problem) el.append(" · ", h("code", { class: "server-status-detail", text: status.problem }));
  return el;
}

function statusText(status: ServerStatus, i18n: I18n): string {
  const { t } = i18n;
  if (status.retry_in_secs !== null) {
    return status.failed_starts > 0
      ? t("serverStatus.failedStarts", { count: status.failed_starts, seconds: status.retry_in_secs })
      : t("serverStatus.stopsSoon", { count: status.stops_soon, seconds: status.retry_in_secs });
  }
  if (status.connected) return status.restarts > 0 ? t("serverStatus.restarted", { count: status.restarts }) : t("serverStatus.running");
  return t("serverStatus.idle");
}
