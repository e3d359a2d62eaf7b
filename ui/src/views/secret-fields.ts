// Write-only fields for secrets (the API key, headers, env values). The core
// never sends a stored value back, only that one is kept, so a field shows
// "set" as its placeholder: typing replaces the value, the clear button
// removes it, and leaving the field alone keeps it. Each field answers with
// what the core acts on: keep, set, or nothing (the secret is removed),
// never with a mask.

import { button, h } from "../dom";
import type { I18n } from "../i18n";
import type { Secret } from "../protocol";
import { parsePairs, textArea, type Parsed } from "./form";

export interface SecretField {
  el: HTMLElement;
  input: HTMLInputElement;
  /** Keep, set, or null: no value (a cleared one is removed). */
  intent(): Secret | null;
}

/** A password input for one secret that may already be set. */
export function secretField(isSet: boolean, i18n: I18n, label: string, testid?: string): SecretField {
  const { t } = i18n;
  let cleared = false;
  const input = h("input", {
    attrs: { type: "password", autocomplete: "off", spellcheck: "false", "aria-label": label, "data-testid": testid },
  });
  const showState = (): void => {
    const set = isSet && !cleared;
    input.placeholder = set ? t("settings.secretSet") : t("settings.secretNotSet");
    input.dataset.secret = set ? "set" : cleared ? "cleared" : "unset";
    clear.hidden = !set;
  };
  const clear = button(
    t("settings.clearSecret"),
    () => {
      cleared = true;
      input.value = "";
      showState();
    },
    { class: "btn btn-small", testid: testid ? `${testid}-clear` : undefined, aria: t("settings.clearNamed", { name: label }) },
  );
  showState();
  return {
    el: h("span", { class: "secret-field" }, input, clear),
    input,
    intent(): Secret | null {
      if (input.value !== "") return { action: "set", value: input.value };
      return isSet && !cleared ? { action: "keep" } : null;
    },
  };
}

export interface SecretMap {
  el: HTMLElement;
  /** Every entry as intent: stored names kept or replaced (a cleared one left out), new lines set. */
  collect(): Parsed<Record<string, Secret>>;
}

/**
 * A map of secrets (headers, env values): the stored names, each with a
 * write-only value, and a text area for new entries, one per line.
 */
export function secretMap(names: readonly string[], separator: string, i18n: I18n, placeholder: string, testid: string): SecretMap {
  const stored = names.map((name) => ({ name, field: secretField(true, i18n, name, `${testid}-value`) }));
  let added = "";
  const area = textArea("", (v) => (added = v), 2);
  area.placeholder = placeholder;
  area.dataset.testid = `${testid}-new`;
  const el = h(
    "div",
    { class: "secret-map", attrs: { "data-testid": testid } },
    ...stored.map(({ name, field }) =>
      h("div", { class: "secret-row", attrs: { "data-name": name } }, h("span", { class: "secret-name", text: name }), field.el),
    ),
    area,
  );
  return {
    el,
    collect() {
      const parsed = parsePairs(added, separator.trim());
      if (!parsed.ok) return parsed;
      const out: Record<string, Secret> = {};
      for (const { name, field } of stored) {
        const intent = field.intent();
        if (intent) out[name] = intent;
      }
      for (const [name, value] of Object.entries(parsed.value)) out[name] = { action: "set", value };
      return { ok: true, value: out };
    },
  };
}
