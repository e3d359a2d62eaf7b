// One call on a confirmation card: what it would do (its server's preview,
// when it has one), what will be sent (labelled arguments, raw JSON on
// demand, an argument editor) and its approve / deny controls. It decides
// nothing itself: its buttons hand a decision to the card.

import { button, disclosure, h, replace } from "../dom";
import { parseExact, stringifyExact, type ExactJson } from "../exact-json";
import type { Outcome } from "../call-outcome";
import { DenyDrafts } from "../deny-drafts";
import type { I18n } from "../i18n";
import type { CallDecision, CallStatus, CardCall, JsonValue, ToolCallView } from "../protocol";
import { argumentList } from "./args";
import { Editor } from "./card-editor";
import { previewView } from "./card-preview";
import { riskBadge } from "./risk-badge";
import { readPreview } from "../preview-content";
import { sameSequence, type Sequence } from "../card-sequence";

export interface CallHost {
  i18n: I18n;
  /** Sends decisions for this card; ignored while another is in flight. */
  decide(decisions: CallDecision[]): void;
  /** What changed in the tool's definition, with a way to accept it. */
  definitionChange?(qualifiedName: string): HTMLElement;
  /** Where a deny reason being typed is kept until the call is decided. */
  drafts?: DenyDrafts;
  /**
   * A mark for a server reached over plain http on another computer: an
   * element shown once the settings say so (empty until then).
   */
  serverMark?(server: string): HTMLElement;
}

/**
 * The arguments exactly as they will be sent, read from the text the core
 * sends beside them: every digit of every number, every key as its own.
 */
export function exactArguments(call: CardCall): ExactJson {
  try {
    return parseExact(call.arguments_text);
  } catch {
    return call.arguments as ExactJson;
  }
}

export class CardCallView {
  readonly el: HTMLLIElement;
  private call: CardCall;
  private readonly host: CallHost;
  private readonly status = h("span", { class: "status-badge", attrs: { "data-testid": "call-status" } });
  private readonly reasonLine = h("p", { class: "card-call-reason", attrs: { "data-testid": "call-reason", hidden: true } });
  private readonly drafts: DenyDrafts;
  private readonly argsSlot = h("div", { class: "card-args" });
  private readonly rawJson = h("pre", { class: "raw-json" });
  private readonly previewSlot = h("div", { class: "card-preview" });
  private readonly badge = h("span", { class: "badge", attrs: { "data-testid": "risk", hidden: true } });
  private readonly blockerLine = h("p", { class: "card-blocker", attrs: { "data-testid": "blocker", role: "alert", hidden: true } });
  private readonly detailsSlot = h("div", { class: "card-details" });
  private readonly rawDisclosure: HTMLDetailsElement;
  private readonly argsDisclosure: HTMLDetailsElement;
  private readonly actions = h("div", { class: "card-actions" });
  private readonly reason: HTMLInputElement;
  private readonly buttons: HTMLButtonElement[] = [];
  private editor: Editor | null = null;
  /** The shop says the call cannot run: approving takes a second click. */
  private blockedBy: string | null = null;
  /** A merchant's checkout no mandate can be made for: approve is not offered. */
  private notPayable = false;
  /** The first click on a blocked call's approve was made. */
  private armed = false;
  private readonly approve: HTMLButtonElement;
  private readonly editButton: HTMLButtonElement;
  /** How the preview stands to the calls above on the card. */
  private sequence: Sequence | null = null;
  /** The arguments the core says the call went with, when not the card's (`showSent`). */
  private sent: JsonValue | null = null;

  constructor(call: CardCall, host: CallHost) {
    this.call = call;
    this.host = host;
    this.drafts = host.drafts ?? new DenyDrafts();
    const { t } = host.i18n;
    const name = this.title();
    this.rawDisclosure = disclosure(t("card.rawJson"), [this.rawJson], { class: "raw-json-disclosure", attrs: { "data-testid": "raw-json" } });
    this.argsDisclosure = disclosure(t("card.arguments"), [], { class: "args-disclosure", attrs: { "data-testid": "arguments" } });
    this.reason = h("input", {
      class: "deny-reason",
      attrs: {
        type: "text",
        "data-testid": "deny-reason",
        placeholder: t("card.denyReason"),
        title: t("card.reasonHint"),
        "aria-label": t("card.denyReasonAria", { title: name }),
        maxlength: 500,
      },
      on: {
        input: () => this.drafts.save(this.call.call_id, this.reason.value),
        keydown: (event) => {
          // Enter alone never denies: the deny shortcut or the button does (card-keys.ts).
          if (event.key === "Enter" && !event.ctrlKey && !event.metaKey) {
            event.preventDefault();
          } else if (event.key === "Escape") {
            event.preventDefault();
            event.stopPropagation();
            this.reason.value = "";
            this.drafts.clear(this.call.call_id);
          }
        },
      },
    });
    const approve = button(t("card.approve"), () => this.approveOrArm(), {
      class: "btn btn-suggested",
      testid: "approve",
      aria: t("card.approveAria", { title: name }),
    });
    const deny = button(t("card.deny"), () => this.host.decide([this.denyDecision()]), {
      class: "btn btn-destructive-outline",
      testid: "deny",
      aria: t("card.denyAria", { title: name }),
    });
    const edit = button(t("card.edit"), () => this.openEditor(), {
      class: "btn btn-flat",
      testid: "edit-arguments",
      aria: t("card.editAria", { title: name }),
    });
    this.approve = approve;
    this.editButton = edit;
    this.buttons.push(approve, deny, edit);
    this.actions.append(this.reason, deny, edit, approve);

    // An untrusted server's "I only read" is not believed: the call is
    // marked for that, not as destructive, whose flag only reflects doubt.
    const claimsReadOnly = !call.trusted && call.declares_read_only;
    this.el = h(
      "li",
      {
        class: "card-call",
        attrs: { "data-testid": "card-call", "data-call-id": call.call_id },
      },
      h(
        "div",
        { class: "card-call-head" },
        // The tool's name is for the curious (developer tools), not the shopper's words.
        h("h3", { class: "card-call-title", text: name, attrs: { "data-tool": call.qualified_name } }),
        this.badge,
        !call.trusted &&
          h("span", {
            class: "badge badge-unverified",
            text: t("card.unverified"),
            attrs: { title: t("card.unverifiedHelp"), "data-testid": "unverified" },
          }),
        h("span", { class: "card-server", text: t("card.server", { server: call.server }) }),
        host.serverMark?.(call.server),
        this.status,
      ),
      this.reasonLine,
      this.blockerLine,
      claimsReadOnly && h("p", { class: "card-unverified-note", text: t("card.unverifiedReadOnly"), attrs: { role: "note" } }),
      call.definition_changed &&
        h("p", { class: "card-warning", text: t("card.definitionChanged"), attrs: { role: "note" } }),
      call.definition_changed && host.definitionChange?.(call.qualified_name),
      this.previewSlot,
      this.detailsSlot,
      this.actions,
    );
    this.el.classList.toggle("card-call-unverified", !call.trusted);
    this.el.classList.toggle("card-call-changed", call.definition_changed);
    this.reason.value = this.drafts.load(call.call_id);
    this.renderArguments();
    this.renderPreview();
    this.update(call);
  }

  get callId(): string {
    return this.call.call_id;
  }

  get currentStatus(): CallStatus {
    return this.call.status;
  }

  get asking(): boolean {
    return this.call.status === "asking";
  }

  /** The call as the card shows it now, with its current status. */
  get current(): CardCall {
    return this.call;
  }

  /** Says whether the preview counts the calls above it on the card. */
  setSequence(sequence: Sequence): void {
    if (this.sequence !== null && sameSequence(this.sequence, sequence)) return;
    this.sequence = sequence;
    if (this.call.preview !== null) replace(this.previewSlot, previewView(this.call.preview, this.host.i18n, null, sequence));
  }

  /** The call as the core sends it again (same card): a new preview, or edited arguments proposed. */
  update(call: CardCall): void {
    const argumentsChanged = call.arguments_text !== this.call.arguments_text;
    const previewChanged = JSON.stringify(call.preview) !== JSON.stringify(this.call.preview);
    this.call = { ...call, status: this.call.status };
    if (argumentsChanged) {
      // What the editor was editing is now what the card proposes: the
      // next step is to approve it, so focus goes there, not to Edit.
      this.closeEditor(this.approve);
      this.renderArguments();
    }
    if (previewChanged) this.renderPreview();
    this.setStatus(call.status);
  }

  setStatus(status: CallStatus): void {
    this.call = { ...this.call, status };
    if (this.asking && this.sent !== null) {
      // Asked again: what it proposes now is the card's.
      this.sent = null;
      this.renderArguments();
    }
    this.el.dataset.status = status;
    this.status.dataset.status = status;
    this.status.textContent = this.host.i18n.status(status);
    this.actions.hidden = !this.asking;
    if (!this.asking) {
      // The card moves focus on to the next call that asks.
      this.closeEditor(null);
      this.drafts.clear(this.call.call_id);
    }
  }

  /** What became of the call, as its card line and chip say it too. */
  showOutcome(outcome: Outcome): void {
    this.el.dataset.tone = outcome.tone;
    this.status.dataset.tone = outcome.tone;
    this.status.textContent = outcome.label;
    this.reasonLine.textContent = outcome.reason ?? "";
    this.reasonLine.hidden = outcome.reason === null;
  }

  setBusy(busy: boolean): void {
    for (const b of this.buttons) b.disabled = busy;
    this.reason.disabled = busy;
    this.editor?.setBusy(busy);
  }

  /** Whether the shop's preview says the call cannot run as it stands. */
  get blocked(): boolean {
    return this.blockedBy !== null || this.notPayable;
  }

  /**
   * Approves the call, or, when the shop says it cannot run, only arms the
   * approve button: the first click (or shortcut) says what will happen and
   * the second approves. Returns whether it decided.
   */
  approveOrArm(): boolean {
    if (this.notPayable) return false;
    if (this.blockedBy !== null && !this.armed) {
      this.armed = true;
      this.renderApprove();
      this.approve.focus();
      return false;
    }
    this.host.decide([this.approveDecision()]);
    return true;
  }

  approveDecision(): CallDecision {
    return { call_id: this.call.call_id, decision: { type: "approve" } };
  }

  denyDecision(): CallDecision {
    const reason = this.reason.value.trim();
    return { call_id: this.call.call_id, decision: { type: "deny", reason: reason === "" ? null : reason } };
  }

  /**
   * The core's view of the call (from its events). Once the call no longer
   * asks, the arguments it went with are shown when they are not the ones
   * the card proposed: the user approved them edited. Its arguments are
   * always an object then; anything else (a rejected call's unparsed text)
   * leaves the card's own.
   */
  showSent(view: ToolCallView): void {
    const sent = !this.asking && isObject(view.arguments) && !sameJson(view.arguments, this.call.arguments) ? view.arguments : null;
    if (sameJson(sent, this.sent)) return;
    this.sent = sent;
    this.renderArguments();
  }

  /** Where keyboard focus goes when this call is next to decide: approve, never the reason field. */
  approveButton(): HTMLButtonElement {
    return this.approve;
  }

  get name(): string {
    return this.title();
  }

  isReason(node: Node): boolean {
    return node === this.reason;
  }

  isEditing(node: Node): boolean {
    return this.editor?.el.contains(node) ?? false;
  }

  /** Escape inside the call: closes the editor, nothing else. */
  escape(): boolean {
    if (!this.editor) return false;
    this.closeEditor(this.editButton);
    return true;
  }

  private title(): string {
    return this.call.title ?? this.call.tool;
  }

  private renderArguments(): void {
    // An edited approval sent only numbers a JavaScript number holds exactly.
    const exact = this.sent === null ? exactArguments(this.call) : parseExact(JSON.stringify(this.sent));
    replace(this.argsSlot, argumentList(exact, this.call.input_schema, this.host.i18n));
    this.rawJson.textContent = stringifyExact(exact);
  }

  /** With a preview, the shopper's view leads and the arguments are one click away. */
  /** The risk badge; its amount follows the preview, so it is drawn with it. */
  private renderBadge(): void {
    const badge = riskBadge(this.call, this.host.i18n);
    this.badge.hidden = badge === null;
    this.badge.textContent = badge?.text ?? "";
    this.badge.className = badge ? `badge badge-${badge.tone}` : "badge";
    this.badge.dataset.risk = this.call.risk;
    if (badge) this.badge.title = badge.help;
    else this.badge.removeAttribute("title");
    this.el.classList.toggle("card-call-destructive", badge?.tone === "danger");
  }

  /** The approve button as the call's state says: bright, or demoted
   * behind the blocker, or armed for the second click. */
  private renderApprove(): void {
    const { t } = this.host.i18n;
    // No mandate can be made: approving could only be refused.
    this.approve.hidden = this.notPayable;
    const blocked = this.blockedBy !== null;
    this.approve.className = blocked ? "btn btn-flat approve-blocked" : "btn btn-suggested";
    this.approve.dataset.blocked = String(blocked);
    this.approve.dataset.armed = String(blocked && this.armed);
    if (!blocked) {
      this.approve.textContent = t("card.approve");
      this.approve.setAttribute("aria-label", t("card.approveAria", { title: this.name }));
      this.blockerLine.hidden = true;
      return;
    }
    this.approve.textContent = t(this.armed ? "card.approveArmed" : "card.approveAnyway");
    this.approve.setAttribute(
      "aria-label",
      t(this.armed ? "card.approveArmedAria" : "card.approveAnywayAria", { title: this.name, reason: this.blockedBy ?? "" }),
    );
    this.blockerLine.hidden = false;
    this.blockerLine.textContent = t("card.blocked", { reason: this.blockedBy ?? "" });
  }

  private renderPreview(): void {
    this.renderBadge();
    const outcome = this.call.preview?.outcome;
    const blocker =
      outcome?.type === "computed" ? readPreview(outcome.content).warnings.find((w) => w.blocking) : undefined;
    const blockedBy = blocker?.message ?? null;
    if (blockedBy !== this.blockedBy) this.armed = false;
    this.blockedBy = blockedBy;
    this.notPayable = outcome?.type === "not_payable";
    this.renderApprove();
    const preview = this.call.preview;
    this.el.classList.toggle("card-call-previewed", preview !== null);
    if (preview === null) {
      replace(this.previewSlot);
      replace(this.detailsSlot, this.argsSlot, this.rawDisclosure);
      return;
    }
    replace(this.previewSlot, previewView(preview, this.host.i18n, null, this.sequence));
    this.argsDisclosure.append(this.argsSlot, this.rawDisclosure);
    replace(this.detailsSlot, this.argsDisclosure);
  }

  private openEditor(): void {
    if (this.editor) {
      this.editor.focus();
      return;
    }
    this.editor = new Editor(exactArguments(this.call), this.call.input_schema, this.host.i18n, {
      approve: (args) => this.host.decide([{ call_id: this.call.call_id, decision: { type: "approve_edited", arguments: args } }]),
      cancel: () => this.closeEditor(this.editButton),
    });
    this.actions.before(this.editor.el);
    this.actions.hidden = true;
    this.editor.focus();
    this.editor.reveal();
  }

  /**
   * Removes the editor; when it had focus, focus goes to `next` (Edit after a
   * cancel, approve once the card proposes the edit) so it is not lost.
   */
  private closeEditor(next: HTMLButtonElement | null): void {
    if (!this.editor) return;
    const hadFocus = this.editor.el.contains(document.activeElement);
    this.editor.el.remove();
    this.editor = null;
    this.actions.hidden = !this.asking;
    if (hadFocus && this.asking) next?.focus();
  }
}

function isObject(value: JsonValue): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The same JSON, whatever the order of keys. */
function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => has(b, key) && sameJson((a as Record<string, JsonValue>)[key], (b as Record<string, JsonValue>)[key]))
  );
}
