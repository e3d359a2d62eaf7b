// Generated from crates/ragent (protocol, settings) by ts-rs. Do not edit:
// run `RAGENT_WRITE_TS=1 cargo test -p ragent typescript` after changing the Rust types.

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]?: JsonValue } | null;

/** What a secret value in a server's args or URL is shown as. */
export const SECRET_MASK = "••••••";

export type CallDecision = { call_id: string, decision: Decision, };

export type Decision = { "type": "approve" } | { "type": "approve_edited", arguments: JsonValue, } | { "type": "deny", reason: string | null, };

export type EventEnvelope = { session_id: string, 
/**
 * The run that produced the event; `None` for events outside a run
 * (a card that expired when a reply came too late).
 */
run_id: string | null, event: AgentEvent, };

export type AgentEvent = { "type": "run_started" } | { "type": "model_retrying", 
/**
 * Which retry comes next, from 1, of at most `retries`.
 */
attempt: number, retries: number, delay_ms: number, kind: ModelFailureKind, } | { "type": "text_delta", text: string, } | { "type": "answer_withdrawn", message_id: number, } | { "type": "assistant_message", message_id: number, text: string, } | { "type": "tool_call_started", call: ToolCallView, } | { "type": "tool_call_progress", call_id: string, progress: CallProgress, } | { "type": "tool_call_finished", call: ToolCallView, } | { "type": "confirmation_requested", card: ConfirmationCard, } | { "type": "call_status_changed", call_id: string, status: CallStatus, } | { "type": "tool_call_approved_edited", call: ToolCallView, } | { "type": "input_requested", card: InputCard, } | { "type": "input_closed", request_id: string, outcome: InputCardOutcome, } | { "type": "server_restarted", server: string, reason: string, } | { "type": "server_paused", server: string, failures: number, retry_in_secs: number, problem: string, } | { "type": "sign_in_required", server: string, run_waits: boolean, } | { "type": "sign_in_ended", server: string, identity: string | null, } | { "type": "run_stopped", reason: StopReason, } | { "type": "error", error: ErrorInfo, };

export type StopReason = { "type": "completed" } | { "type": "awaiting_confirmation", reply_id: string, } | { "type": "awaiting_input", request_id: string, } | { "type": "max_turns", limit: number, } | { "type": "cancelled" } | { "type": "failed" };

export type ErrorInfo = { code: ErrorCode, message: string, 
/**
 * For a model that failed a turn (`code` is `model` or
 * `model_not_configured`): what kind of failure, for the page to say
 * in the user's language, and what the provider answered.
 */
model_failure?: ModelFailure, };

export type ErrorCode = "session_not_found" | "run_in_progress" | "empty_message" | "no_pending_confirmation" | "stale_reply" | "unknown_call" | "already_decided" | "duplicate_decision" | "confirmation_expired" | "invalid_arguments" | "unknown_tool" | "definition_changed_again" | "preview_changed" | "edit_previewed" | "not_payable" | "invalid_settings" | "auto_approve_not_allowed" | "nothing_to_retry" | "nothing_to_regenerate" | "confirmation_pending" | "no_pending_input" | "invalid_input" | "input_expired" | "import_refused" | "import_changed" | "merchant_profile" | "merchant_already_added" | "model" | "model_not_configured" | "model_unauthorized" | "model_unreachable" | "model_timeout" | "model_list_malformed" | "mcp" | "sign_in" | "sign_in_cancelled" | "no_sign_in_pending" | "not_a_web_page" | "disk_full" | "store" | "internal";

export type ModelFailure = { kind: ModelFailureKind, 
/**
 * For a bug report: never shown unless asked for.
 */
details: ModelFailureDetails, };

export type ModelFailureKind = { "type": "unreachable" } | { "type": "timeout" } | { "type": "unauthorized" } | { "type": "rate_limited", retry_after_secs: number | null, } | { "type": "server_error" } | { "type": "rejected" } | { "type": "bad_response" } | { "type": "not_configured" };

export type ModelFailureDetails = { 
/**
 * The HTTP status, when there was a response.
 */
status: number | null, 
/**
 * The provider's error body or the client's own description.
 */
raw: string, 
/**
 * From `x-request-id` / `request-id`, or the error body's id.
 */
request_id: string | null, };

export type InputOutcome = { "type": "run_started", run_id: string, } | { "type": "awaiting_decisions", remaining: Array<string>, } | { "type": "run_continues", run_id: string, };

export type InputCard = { request_id: string, session_id: string, call_id: string, server: string, tool: string, 
/**
 * The tool's title, when the server gives one.
 */
title: string | null, 
/**
 * Whether the server is trusted; an untrusted one's request is marked.
 */
trusted: boolean, 
/**
 * Which round of asking this is, from 1 (a server may ask again
 * after an answer, a few times at most).
 */
round: number, max_rounds: number, created_at: number, expires_at: number, 
/**
 * Kept across a restart (an `input_required` result); `false` for a
 * request that lives on the server's connection only.
 */
durable: boolean, asks: Array<InputAsk>, };

export type InputAsk = { 
/**
 * The server's name for the request; an answer names it.
 */
key: string, 
/**
 * The server's own words: untrusted text.
 */
message: string, kind: InputAskKind, };

export type InputAskKind = { "type": "form", schema: JsonValue, } | { "type": "url", url: string, origin: string, elicitation_id: string, };

export type KeyedReply = { key: string, reply: InputReply, };

export type InputReply = { "type": "accept", content: JsonValue | null, } | { "type": "decline" } | { "type": "cancel" };

export type InputCardOutcome = "accepted" | "declined" | "cancelled" | "expired" | "superseded";

export type ConfirmationCard = { reply_id: string, session_id: string, 
/**
 * Milliseconds since the Unix epoch.
 */
created_at: number, expires_at: number, 
/**
 * Every call of the batch in the model's order. Calls with status
 * `asking` need a decision; `allowed` ones run with the batch.
 */
calls: Array<CardCall>, };

export type CardCall = { call_id: string, 
/**
 * `server__tool`, as the model named it.
 */
qualified_name: string, server: string, tool: string, 
/**
 * The tool's human-readable title, when the server gives one.
 */
title: string | null, description: string | null, 
/**
 * Exactly the arguments that will be sent.
 */
arguments: JsonValue, 
/**
 * The same arguments as the JSON text they are sent as. A page that
 * parses `arguments` into floating-point numbers loses digits of an
 * integer beyond 2^53; this text keeps every one.
 */
arguments_text: string, 
/**
 * The tool's input schema; property `title`s label the arguments.
 */
input_schema: JsonValue, destructive: boolean, 
/**
 * Whether the server is trusted: an untrusted server's claims about
 * its tool (that it only reads, that it is harmless) are not believed.
 */
trusted: boolean, 
/**
 * The tool declares it only reads (believed only when `trusted`).
 */
declares_read_only: boolean, 
/**
 * The tool's definition differs from the one pinned when first seen.
 */
definition_changed: boolean, 
/**
 * What the card's badge says the call risks, from one table of the
 * tool's facts ([`crate::policy::ToolFacts::risk`]).
 */
risk: CallRisk, status: CallStatus, 
/**
 * What the call would do, as its trusted server computed it; `None`
 * when the tool has no preview.
 */
preview: CallPreview | null, };

export type CallRisk = "moves_money" | "reaches_out" | "irreversible" | "undoable" | "adds" | "reads";

export type CallPreview = { 
/**
 * The preview tool, `server__tool`.
 */
tool: string, 
/**
 * Milliseconds since the Unix epoch.
 */
computed_at: number, outcome: PreviewOutcome, };

export type PreviewOutcome = { "type": "computed", content: JsonValue, } | { "type": "refused", message: string, } | { "type": "unavailable", message: string, } | { "type": "not_payable", problem: CheckoutProblem, };

export type CheckoutProblem = { "kind": "signature_invalid", detail: string, } | { "kind": "currency", currency: string, } | { "kind": "merchant_unreadable", detail: string, } | { "kind": "not_trusted" } | { "kind": "checkout_unreadable", detail: string, } | { "kind": "device_not_bound", detail: string, };

export type KeptMandate = { call_id: string, session_id: string, 
/**
 * The merchant's origin.
 */
merchant: string, checkout_id: string, 
/**
 * The amount to pay the shopper approved, in the checkout's minor
 * unit (fen), when the checkout states one.
 */
total: number | null, currency: string | null, 
/**
 * Milliseconds since the Unix epoch.
 */
signed_at: number, completed_at: number | null, 
/**
 * The order the merchant's receipt names, once completed.
 */
order: string | null, evidence: Evidence, };

export type DatabaseRestored = { database: Database, 
/**
 * Where the damaged file was moved.
 */
damagedKeptAt: string, 
/**
 * What SQLite found wrong with it.
 */
problem: string, 
/**
 * When the copy put in its place was made (ms since the Unix epoch);
 * `None`: no usable copy, the app started with an empty database.
 */
restoredFrom: number | null, };

export type Database = "assistant" | "shop";

export type Evidence = { 
/**
 * The device's signatures and key binding hold, made out to the
 * merchant and the checkout, over exactly the checkout kept.
 */
mandate: Check, 
/**
 * The merchant's signature on the checkout holds with its keys.
 */
merchant_signature: Check, 
/**
 * The receipt's signature holds (none while not completed).
 */
receipt: Check | null, };

export type Check = { "outcome": "holds" } | { "outcome": "fails", reason: string, };

export type Rejection = { "type": "unknown_tool" } | { "type": "invalid_arguments", details: Array<string>, } | { "type": "policy_denied" };

export type CallStatus = "proposed" | "asking" | "allowed" | "approved" | "rejected" | "running" | "succeeded" | "failed" | "denied" | "expired" | "superseded" | "interrupted" | "awaiting_input";

export type ToolCallView = { call_id: string, qualified_name: string, server: string, tool: string, title: string | null, arguments: JsonValue, status: CallStatus, 
/**
 * The result text (or the reason it did not run), once known.
 */
output: string | null, is_error: boolean, destructive: boolean, 
/**
 * The card the call was on, if it needed one.
 */
reply_id: string | null, 
/**
 * The result's structured content, when the tool gave one.
 */
structured_output: JsonValue | null, 
/**
 * Why code refused it (status `rejected`).
 */
rejection: Rejection | null, 
/**
 * The reason the user gave when denying it.
 */
deny_reason: string | null, 
/**
 * What it would do, as its card showed (calls with a preview).
 */
preview: CallPreview | null, 
/**
 * Its tool's input schema cut down to the titles and choices that
 * label the arguments in the user's words.
 */
labels_schema: JsonValue | null, };

export type CallProgress = { progress: number, total: number | null, 
/**
 * The server's words, cut to 120 characters.
 */
message: string | null, };

export type SessionInfo = { id: string, title: string, created_at: number, updated_at: number, };

export type SignInStarted = { server: string, authorization_url: string, };

export type Transcript = { session: SessionInfo, items: Array<TranscriptItem>, 
/**
 * The card still waiting for decisions, if any.
 */
pending: ConfirmationCard | null, 
/**
 * A server's request for input still waiting for the user, if any.
 */
pending_input: InputCard | null, 
/**
 * A run is answering in the session now (the window was switched to
 * another session and back while it ran): its events follow.
 */
running: boolean, 
/**
 * How the session's last run failed, when it did and no run has
 * started since: the page shows it as the live `error` event was.
 */
failure: ErrorInfo | null, };

export type TranscriptItem = { "type": "user", id: number, text: string, at: number, } | { "type": "assistant", id: number, text: string, at: number, } | { "type": "tool_call", call: ToolCallView, } | { "type": "input", card: InputCard, outcome: InputCardOutcome, replies: Array<KeyedReply>, } | { "type": "notice", id: number, text: string, at: number, };

export type AuditEntry = { id: number, at: number, session_id: string, call_id: string, server: string, tool: string, 
/**
 * SHA-256 of the canonical JSON of the arguments decided on.
 */
arguments_hash: string, decision: AuditDecision, reason: string | null, 
/**
 * For an accepted definition: the pinned definition's hash before.
 */
old_definition_hash: string | null, 
/**
 * For an accepted definition: the hash of the one accepted.
 */
new_definition_hash: string | null, 
/**
 * The preview the decision was taken on, when the tool has one.
 */
preview: CallPreview | null, 
/**
 * The call as it is now (what became of it); `None` for a row that is
 * not about a call, or once the call's chat was deleted.
 */
call: ToolCallView | null, };

export type AuditDecision = "policy_allowed" | "auto_approved_by_user_setting" | "policy_denied" | "user_approved" | "user_approved_edited" | "user_denied" | "expired" | "superseded" | "user_accepted_definition" | "preview_changed" | "server_requested_input" | "input_request_refused" | "user_accepted_input" | "user_declined_input" | "user_cancelled_input";

export type SettingsWith<S> = { model: ModelSettingsWith<S>, 
/**
 * Servers the user added, in the `mcpServers` shape. The built-in
 * shop is not listed here: the app supplies it, trusted.
 */
mcp_servers: { [key in string]: ServerConfigWith<S> }, 
/**
 * Per-tool policy, keyed by `server__tool`.
 */
tool_overrides: { [key in string]: ToolOverride }, 
/**
 * How long a confirmation card may wait before it expires. A day by
 * default, so a card outlives closing the app for the evening.
 */
card_expiry_secs: number, 
/**
 * How many model turns one run may take.
 */
max_turns_per_run: number, 
/**
 * Estimated tokens of history sent to the model.
 */
history_token_budget: number, 
/**
 * How the page looks; kept here, in the data directory, so each
 * `--data-dir` remembers its own.
 */
appearance: Appearance, 
/**
 * Which shop the built-in shop server is: the local demo the app
 * starts, or the online shop at a URL. Either is trusted as the shop.
 */
shop: ShopConnection, 
/**
 * Where the app's platform profile under the commerce standard is
 * hosted (`ucp::platform::platform_profile` is its document): every
 * request to a UCP merchant names it.
 */
ucp_platform_profile: string, };

export type ModelSettingsWith<S> = { 
/**
 * For example `https://api.deepseek.com/v1`; `/chat/completions` is appended.
 */
base_url: string, model: string, api_key: S | null, extra_headers: { [key in string]: S }, };

export type Appearance = { 
/**
 * `None` until the user chooses: the page follows the system's language.
 */
language: Language | null, theme: Theme, };

export type ShopConnection = { "kind": "local" } | { "kind": "online", url: string, };

export type Language = "zh-CN" | "en";

export type Theme = "system" | "light" | "dark";

export type ServerConfigWith<S> = { 
/**
 * Whether the server's tool annotations are believed. Off unless set.
 */
trusted: boolean, 
/**
 * Kept in the settings but not started; its tools are not offered.
 */
disabled: boolean, 
/**
 * How long one tool call may take, in seconds; the hub's default
 * when unset.
 */
timeout_secs: number | null, 
/**
 * For an HTTP server whose authorization server registers no clients
 * itself: the client id to sign in with, as its operator gave it.
 */
oauth_client_id?: string | null, 
/**
 * Origins besides its own address whose pages it may send the user
 * to (`https://pay.example.com`), as the user declared them.
 */
page_origins?: Array<string>, 
/**
 * The server is a merchant's shopping service under the commerce
 * standard (UCP): its checkouts are signed by the merchant at this
 * origin and completed only with the shopper's mandate.
 */
ucp?: UcpMerchant | null, } & ({ command: string, args: Array<string>, env: { [key in string]: S }, } | { url: string, headers: { [key in string]: S }, });

export type ServerTransportWith<S> = { command: string, args: Array<string>, env: { [key in string]: S }, } | { url: string, headers: { [key in string]: S }, };

export type UcpMerchant = { 
/**
 * Where its business profile (`/.well-known/ucp`) and keys are:
 * `https://shop.example`, no path.
 */
origin: string, };

export type SettingsView = { 
/**
 * The servers reached by plain `http` on another computer: what the
 * app sends them and what they answer cross the network unencrypted
 * (the page marks them so, and the app does not sign in there).
 */
unencrypted: Array<string>, model: ModelSettingsWith<Secret>, 
/**
 * Servers the user added, in the `mcpServers` shape. The built-in
 * shop is not listed here: the app supplies it, trusted.
 */
mcp_servers: { [key in string]: ServerConfigWith<Secret> }, 
/**
 * Per-tool policy, keyed by `server__tool`.
 */
tool_overrides: { [key in string]: ToolOverride }, 
/**
 * How long a confirmation card may wait before it expires. A day by
 * default, so a card outlives closing the app for the evening.
 */
card_expiry_secs: number, 
/**
 * How many model turns one run may take.
 */
max_turns_per_run: number, 
/**
 * Estimated tokens of history sent to the model.
 */
history_token_budget: number, 
/**
 * How the page looks; kept here, in the data directory, so each
 * `--data-dir` remembers its own.
 */
appearance: Appearance, 
/**
 * Which shop the built-in shop server is: the local demo the app
 * starts, or the online shop at a URL. Either is trusted as the shop.
 */
shop: ShopConnection, 
/**
 * Where the app's platform profile under the commerce standard is
 * hosted (`ucp::platform::platform_profile` is its document): every
 * request to a UCP merchant names it.
 */
ucp_platform_profile: string, };

export type SettingsEdit = { 
/**
 * Servers renamed in this edit, new name to the name they were saved
 * under: a kept value is looked up there.
 */
renamed?: { [key in string]: string }, model: ModelSettingsWith<Secret>, 
/**
 * Servers the user added, in the `mcpServers` shape. The built-in
 * shop is not listed here: the app supplies it, trusted.
 */
mcp_servers: { [key in string]: ServerConfigWith<Secret> }, 
/**
 * Per-tool policy, keyed by `server__tool`.
 */
tool_overrides: { [key in string]: ToolOverride }, 
/**
 * How long a confirmation card may wait before it expires. A day by
 * default, so a card outlives closing the app for the evening.
 */
card_expiry_secs: number, 
/**
 * How many model turns one run may take.
 */
max_turns_per_run: number, 
/**
 * Estimated tokens of history sent to the model.
 */
history_token_budget: number, 
/**
 * How the page looks; kept here, in the data directory, so each
 * `--data-dir` remembers its own.
 */
appearance: Appearance, 
/**
 * Which shop the built-in shop server is: the local demo the app
 * starts, or the online shop at a URL. Either is trusted as the shop.
 */
shop: ShopConnection, 
/**
 * Where the app's platform profile under the commerce standard is
 * hosted (`ucp::platform::platform_profile` is its document): every
 * request to a UCP merchant names it.
 */
ucp_platform_profile: string, };

export type Secret = { "action": "keep" } | { "action": "set", value: string, };

export type ToolOverride = "ask" | "deny" | "auto_approve";

export type ServerStatus = { name: string, trusted: boolean, connected: boolean, pid: number | null, restarts: number, 
/**
 * Failed starts since it last started: each makes the pause before
 * the next try twice as long.
 */
failed_starts: number, 
/**
 * Times in a row it stopped within a minute of starting: from the
 * second, each pauses its next start as a failed start does.
 */
stops_soon: number, 
/**
 * While its next start is paused: whole seconds until it is tried.
 */
retry_in_secs: number | null, 
/**
 * While paused: why it last failed to start or stopped.
 */
problem: string | null, honours_idempotency_keys: boolean | null, 
/**
 * Where the server asks the user to sign in; `None` for a server that
 * never asked.
 */
sign_in: SignInStatus | null, };

export type SignInStatus = { "type": "required" } | { "type": "signed_in", identity: string, };

export type ModelStatus = { state: ModelState, 
/**
 * What went wrong, in words, when the state is not `ok`.
 */
message: string | null, };

export type ModelInfo = { id: string, 
/**
 * Its context window in tokens, when the provider says.
 */
context_tokens: number | null, 
/**
 * The history budget that leaves room in that window for the tools
 * and the answer ([`history_budget_for`]), when the window is known.
 */
history_budget: number | null, };

export type ModelState = "ok" | "not_configured" | "unreachable";

export type ToolPolicyView = { qualified_name: string, server: string, tool: string, title: string | null, read_only: boolean, destructive: boolean, trusted: boolean, definition_changed: boolean, user_override: ToolOverride | null, 
/**
 * What a call of it gets now.
 */
verdict: PolicyVerdict, 
/**
 * Whether the user may turn asking off for it (see
 * `policy::ToolFacts::auto_approve_possible`).
 */
auto_approve_allowed: boolean, 
/**
 * It places an order or moves money: never without a card.
 */
moves_money: boolean, 
/**
 * What it can do, as the settings screen groups tools.
 */
group: ToolGroup, };

export type ToolGroup = "read" | "cart" | "money" | "other_write";

export type PolicyVerdict = "allow" | "ask" | "deny";

export type DefinitionChange = { qualified_name: string, old_hash: string, new_hash: string, old: ToolDefinitionView, new: ToolDefinitionView, 
/**
 * The fields that differ, in the order above.
 */
changed: Array<DefinitionField>, };

export type ToolDefinitionView = { title: string | null, description: string | null, input_schema: JsonValue, annotations: JsonValue, };

export type DefinitionField = "title" | "description" | "input_schema" | "annotations";

export type ImportPreview = { "outcome": "plan", plan: ImportPlan, } | { "outcome": "refused", problems: Array<ImportProblem>, };

export type ImportPlan = { format: ImportFormat, servers: Array<PlannedServer>, notes: Array<ImportNote>, 
/**
 * Names this plan: applying it is refused if the same text would now
 * give another plan (a server was added or renamed meanwhile).
 */
fingerprint: string, };

export type ImportFormat = "mcp_servers" | "vs_code";

export type PlannedServer = { 
/**
 * The name it will have here.
 */
name: string, 
/**
 * The name in the pasted text.
 */
original_name: string, 
/**
 * Why `name` differs from `original_name`, when it does.
 */
rename: RenameReason | null, 
/**
 * What will be saved; `trusted` is always false, and `disabled`
 * always true: nothing pasted runs until the user turns it on.
 */
server: ServerConfigWith<Secret>, 
/**
 * Whether the pasted text had it turned off already.
 */
was_disabled: boolean, 
/**
 * Each env value (stdio) or header (HTTP), in order: what it is made
 * of, never a value written in the text.
 */
values: Array<PlannedValue>, 
/**
 * The `${env:NAME}` it uses, and whether each is set now.
 */
variables: Array<VariableUse>, };

export type PlannedValue = { 
/**
 * The variable's or header's name.
 */
name: string, 
/**
 * The `${env:NAME}` variables it is filled in from, in order.
 */
from_variables: Array<string>, 
/**
 * It also holds text written in the config (shown hidden: it may be
 * a secret).
 */
has_written_text: boolean, };

export type RenameReason = "invalid_name" | "builtin" | "existing";

export type VariableUse = { name: string, 
/**
 * Set in the app's environment now; an unset one makes the server
 * fail to start, naming the variable.
 */
set: boolean, };

export type ImportNote = { "kind": "ignored_key", server: string, key: string, } | { "kind": "ignored_top_level_key", key: string, };

export type ImportProblem = { "kind": "json", line: number, column: number, message: string, } | { "kind": "no_servers" } | { "kind": "not_an_object", server: string, } | { "kind": "unknown_key", server: string, key: string, } | { "kind": "wrong_value", server: string, key: string, expected: Expected, } | { "kind": "no_transport", server: string, } | { "kind": "two_transports", server: string, } | { "kind": "misplaced", server: string, key: string, server_type: string, } | { "kind": "unknown_type", server: string, value: string, } | { "kind": "sse", server: string, } | { "kind": "bad_url", server: string, url: string, } | { "kind": "variable", server: string, reference: string, };

export type Expected = "text" | "text_list" | "text_map" | "true_or_false" | "seconds";

export type McpExport = { text: string, withheld: Array<WithheldSecret>, };

export type WithheldSecret = { server: string, kind: SecretKind, 
/**
 * The env value's or header's name; the flag (without dashes) or the
 * query parameter; `password` for a URL's user info.
 */
name: string, 
/**
 * The environment variable written in its place (args and URL only;
 * an env value or header is written empty).
 */
variable: string | null, };

export type SecretKind = "env" | "header" | "arg" | "query" | "url_password";
