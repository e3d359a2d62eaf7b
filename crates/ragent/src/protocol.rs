//! The vocabulary shared with every front end: what the user decides
//! ([`CallDecision`]) and what became of it ([`InputOutcome`]), what the
//! core reports ([`AgentEvent`] inside an
//! [`EventEnvelope`]), and the views a reopened window needs to draw itself
//! ([`Transcript`], [`ConfirmationCard`]). TypeScript types for `ui/` are
//! generated from these (see `typescript.rs`); nothing else crosses over.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::toolcall::CallStatus;

/// The user's decision on one call of a confirmation card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CallDecision {
    pub call_id: String,
    pub decision: Decision,
}

/// What the user decided for one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Decision {
    /// Run the call with the arguments shown on the card.
    Approve,
    /// Run the call with these arguments instead; they are validated
    /// against the tool's input schema first.
    ApproveEdited { arguments: Value },
    /// Do not run the call; the model is told so, with the reason if any.
    Deny { reason: Option<String> },
}

/// One event of a session, as the core streams it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct EventEnvelope {
    pub session_id: String,
    /// The run that produced the event; `None` for events outside a run
    /// (a card that expired when a reply came too late).
    pub run_id: Option<String>,
    pub event: AgentEvent,
}

/// What happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A run began (after a message or a reply to a card).
    RunStarted,
    /// The model's request failed and is sent again after `delay_ms`
    /// (429, 5xx, no connection): the page says so instead of waiting in
    /// silence.
    ModelRetrying {
        /// Which retry comes next, from 1, of at most `retries`.
        attempt: u32,
        retries: u32,
        #[ts(type = "number")]
        delay_ms: u64,
        kind: ModelFailureKind,
    },
    /// A piece of the assistant's text, as the model streams it.
    TextDelta { text: String },
    /// A final answer was taken out of the conversation, to be written
    /// again by the run that follows (`regenerate_answer`).
    AnswerWithdrawn {
        #[ts(type = "number")]
        message_id: i64,
    },
    /// The assistant's text of one model turn, complete and stored.
    AssistantMessage {
        #[ts(type = "number")]
        message_id: i64,
        text: String,
    },
    /// A call was sent to its server.
    ToolCallStarted { call: ToolCallView },
    /// A running call's server told how far it has come (MCP progress).
    /// Not stored: it only shows that a long call is alive.
    ToolCallProgress {
        call_id: String,
        progress: CallProgress,
    },
    /// A call reached a final state (succeeded, failed, denied, rejected...).
    ToolCallFinished { call: ToolCallView },
    /// The run stopped to ask the user; decide with `respond_confirmation`.
    ConfirmationRequested { card: ConfirmationCard },
    /// A call on a card changed state (approved, denied, expired, superseded).
    CallStatusChanged { call_id: String, status: CallStatus },
    /// A call not sent yet was approved with the arguments the user edited:
    /// `call` is its view now, with what will be sent.
    ToolCallApprovedEdited { call: ToolCallView },
    /// A call's server asked the user for input before it can finish; the
    /// run stopped. Answer with `answer_input`.
    InputRequested { card: InputCard },
    /// The request was answered (or closed): the card shows the outcome.
    InputClosed {
        request_id: String,
        outcome: InputCardOutcome,
    },
    /// An MCP server had stopped and was started again.
    ServerRestarted { server: String, reason: String },
    /// An MCP server keeps failing to start, or stopping soon after it
    /// starts (`failures` times in a row, the last for `problem`): its
    /// tools are missing until it is tried again in `retry_in_secs`.
    ServerPaused {
        server: String,
        failures: u32,
        retry_in_secs: u64,
        problem: String,
    },
    /// An MCP server asks the user to sign in before its tools can be
    /// used (`begin_sign_in`). When `run_waits`, the run waits until the
    /// user signs in or goes on without it (`go_on_without`); otherwise
    /// (the user went on without it before) the run goes on without its
    /// tools at once.
    SignInRequired { server: String, run_waits: bool },
    /// The run's wait for a sign-in ended: signed in as `identity`, or,
    /// without one, the user went on without the server.
    SignInEnded {
        server: String,
        identity: Option<String>,
    },
    /// The run ended.
    RunStopped { reason: StopReason },
    /// Something went wrong; the session itself is intact.
    Error { error: ErrorInfo },
}

/// How far a running call has come, as its server said: `progress` out
/// of `total` when the server knows the total, and what it is doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    /// The server's words, cut to 120 characters.
    pub message: Option<String>,
}

impl CallProgress {
    /// A progress line is a few words on a chip, not a log.
    pub const MESSAGE_CHARS: usize = 120;
}

/// Why a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without proposing more calls.
    Completed,
    /// A confirmation card waits for the user.
    AwaitingConfirmation { reply_id: String },
    /// A server's request for input waits for the user.
    AwaitingInput { request_id: String },
    /// The run used its allowed number of model turns.
    MaxTurns { limit: u32 },
    /// The user cancelled the run.
    Cancelled,
    /// An error ended the run (an `error` event says which).
    Failed,
}

/// A machine-readable error code and a sentence for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ErrorInfo {
    pub code: ErrorCode,
    pub message: String,
    /// For a model that failed a turn (`code` is `model` or
    /// `model_not_configured`): what kind of failure, for the page to say
    /// in the user's language, and what the provider answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model_failure: Option<ModelFailure>,
}

impl ErrorInfo {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorInfo {
        ErrorInfo {
            code,
            message: message.into(),
            model_failure: None,
        }
    }
}

/// Why a model turn failed, and what the provider said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelFailure {
    pub kind: ModelFailureKind,
    /// For a bug report: never shown unless asked for.
    pub details: ModelFailureDetails,
}

/// The kinds of model failure, each with its own likely cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelFailureKind {
    /// The endpoint could not be reached, or the connection broke.
    Unreachable,
    /// No answer, or a stream that went silent, within the time allowed.
    Timeout,
    /// 401 or 403: the key was refused.
    Unauthorized,
    /// 429, with how long the provider asked to wait when it said.
    RateLimited {
        #[ts(type = "number | null")]
        retry_after_secs: Option<u64>,
    },
    /// 5xx after the client's own retries.
    ServerError,
    /// Another 4xx, or an error the provider sent in place of an answer
    /// (a wrong model name, no balance left).
    Rejected,
    /// An answer that is not a chat-completions stream.
    BadResponse,
    /// No base URL or model name in the settings.
    NotConfigured,
}

/// What the provider answered, bounded and without the settings' secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelFailureDetails {
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The provider's error body or the client's own description.
    pub raw: String,
    /// From `x-request-id` / `request-id`, or the error body's id.
    pub request_id: Option<String>,
}

/// The kinds of error a front end may want to tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    SessionNotFound,
    RunInProgress,
    EmptyMessage,
    NoPendingConfirmation,
    StaleReply,
    UnknownCall,
    AlreadyDecided,
    DuplicateDecision,
    ConfirmationExpired,
    InvalidArguments,
    UnknownTool,
    DefinitionChangedAgain,
    /// What a call would do changed between its card and the approval;
    /// the card shows the new preview and waits for a fresh decision.
    PreviewChanged,
    /// Arguments the user edited on the card: the card shows what the
    /// edit would do and waits for its approval. Nothing else changed.
    EditPreviewed,
    /// An approved completion of a merchant's checkout that no mandate can
    /// be made for; the card says why.
    NotPayable,
    InvalidSettings,
    /// The settings asked to skip the card for a tool that may never skip
    /// it; nothing was saved.
    AutoApproveNotAllowed,
    /// `retry_run` found nothing the model has yet to answer.
    NothingToRetry,
    /// `regenerate_answer` found no final answer to write again.
    NothingToRegenerate,
    /// `retry_run` while a card waits: the card is answered first.
    ConfirmationPending,
    /// `answer_input` names no request waiting in the session.
    NoPendingInput,
    /// An answer that does not fit the request's form; nothing was sent.
    InvalidInput,
    /// The request was not answered in time.
    InputExpired,
    /// An MCP configuration that cannot be imported; nothing was added.
    ImportRefused,
    /// The servers an import would add changed since its preview; nothing
    /// was added.
    ImportChanged,
    /// A UCP merchant's profile could not be read or used; nothing added.
    MerchantProfile,
    /// The UCP merchant is a server of the settings already.
    MerchantAlreadyAdded,
    Model,
    ModelNotConfigured,
    /// The provider refused the key (401, 403) when listing its models.
    ModelUnauthorized,
    /// The provider's address did not answer.
    ModelUnreachable,
    /// The provider did not answer in time.
    ModelTimeout,
    /// The provider answered something that is not a model list.
    ModelListMalformed,
    Mcp,
    /// A sign-in to a server did not finish; the message says why, and
    /// nothing of it was kept.
    SignIn,
    /// The user cancelled a sign-in.
    SignInCancelled,
    /// No sign-in to that server is under way.
    NoSignInPending,
    /// An address that is not a web page (`https`, or `http` on this
    /// computer) was not opened.
    NotAWebPage,
    /// The disk the app keeps its data on is full: what was asked was not
    /// recorded, and so not done. Everything stored before is kept.
    DiskFull,
    Store,
    Internal,
}

/// A sign-in under way: the page opens `authorization_url` in the
/// system browser, then waits for `finish_sign_in`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SignInStarted {
    pub server: String,
    pub authorization_url: String,
}

/// A confirmation card: the calls of one model turn that wait for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConfirmationCard {
    pub reply_id: String,
    pub session_id: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub expires_at: i64,
    /// Every call of the batch in the model's order. Calls with status
    /// `asking` need a decision; `allowed` ones run with the batch.
    pub calls: Vec<CardCall>,
}

/// One call on a confirmation card, with everything needed to show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CardCall {
    pub call_id: String,
    /// `server__tool`, as the model named it.
    pub qualified_name: String,
    pub server: String,
    pub tool: String,
    /// The tool's human-readable title, when the server gives one.
    pub title: Option<String>,
    pub description: Option<String>,
    /// Exactly the arguments that will be sent.
    pub arguments: Value,
    /// The same arguments as the JSON text they are sent as. A page that
    /// parses `arguments` into floating-point numbers loses digits of an
    /// integer beyond 2^53; this text keeps every one.
    pub arguments_text: String,
    /// The tool's input schema; property `title`s label the arguments.
    pub input_schema: Value,
    pub destructive: bool,
    /// Whether the server is trusted: an untrusted server's claims about
    /// its tool (that it only reads, that it is harmless) are not believed.
    pub trusted: bool,
    /// The tool declares it only reads (believed only when `trusted`).
    pub declares_read_only: bool,
    /// The tool's definition differs from the one pinned when first seen.
    pub definition_changed: bool,
    /// What the card's badge says the call risks, from one table of the
    /// tool's facts ([`crate::policy::ToolFacts::risk`]).
    pub risk: CallRisk,
    pub status: CallStatus,
    /// What the call would do, as its trusted server computed it; `None`
    /// when the tool has no preview.
    pub preview: Option<CallPreview>,
}

/// What a confirmation card's badge tells the user a call risks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallRisk {
    /// It places an order or moves money (pays, refunds).
    MovesMoney,
    /// It hands something to a person or service outside the shop.
    ReachesOut,
    /// It cannot be undone, as declared, or as not declared otherwise.
    Irreversible,
    /// A change another call can undo (a cart line, an address).
    Undoable,
    /// A write that only adds, as its trusted server declares.
    Adds,
    /// It only reads (a card shows it only when the user asked for one).
    Reads,
}

impl CallRisk {
    /// The stored name, as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallRisk::MovesMoney => "moves_money",
            CallRisk::ReachesOut => "reaches_out",
            CallRisk::Irreversible => "irreversible",
            CallRisk::Undoable => "undoable",
            CallRisk::Adds => "adds",
            CallRisk::Reads => "reads",
        }
    }

    /// The risk stored under `name`; an unknown or missing one (a call
    /// stored before risks were) from whether it was shown destructive.
    pub fn parse(name: Option<&str>, destructive: bool) -> CallRisk {
        let all = [
            CallRisk::MovesMoney,
            CallRisk::ReachesOut,
            CallRisk::Irreversible,
            CallRisk::Undoable,
            CallRisk::Adds,
            CallRisk::Reads,
        ];
        match all.into_iter().find(|r| Some(r.as_str()) == name) {
            Some(risk) => risk,
            None if destructive => CallRisk::Irreversible,
            None => CallRisk::Adds,
        }
    }
}

/// What a write would do, computed by a read-only preview tool of its own
/// trusted server (named by the write's `_meta["ragent/preview"]`) with
/// the same arguments. Computed when the card is made and again at
/// approval; the approval is refused when the two differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CallPreview {
    /// The preview tool, `server__tool`.
    pub tool: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub computed_at: i64,
    pub outcome: PreviewOutcome,
}

/// What the preview tool answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PreviewOutcome {
    /// Its structured content: summary, lines, totals, address, warnings
    /// (the shape is described in docs/previews.md).
    Computed { content: Value },
    /// The server says the call would be refused, and why.
    Refused { message: String },
    /// No preview could be had (the server did not answer, or answered
    /// without structured content, or can no longer be trusted).
    Unavailable { message: String },
    /// A merchant's checkout that cannot be approved: the card shows why,
    /// and offers no approval, since no mandate can be made for it.
    NotPayable { problem: CheckoutProblem },
}

/// Why a merchant's checkout is not payable, for the page to say in the
/// shopper's language (`detail`: the technical reason, as it was found).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CheckoutProblem {
    /// The merchant's signature is missing or does not hold: the terms may
    /// have been changed on the way.
    SignatureInvalid { detail: String },
    /// The checkout is in a currency the card cannot show.
    Currency { currency: String },
    /// The merchant's profile (and so its keys) could not be read.
    MerchantUnreadable { detail: String },
    /// The app may not read the checkout: its server is not trusted.
    NotTrusted,
    /// The call names no checkout, or the checkout could not be read.
    CheckoutUnreadable { detail: String },
    /// This device's key is not bound to the shopper at the merchant.
    DeviceNotBound { detail: String },
}

impl PreviewOutcome {
    /// Whether two previews promise the same consequences. Two failures to
    /// get a preview are alike whatever their wording.
    pub fn same_consequences(&self, other: &PreviewOutcome) -> bool {
        match (self, other) {
            (PreviewOutcome::Computed { content: a }, PreviewOutcome::Computed { content: b }) => {
                crate::ucp::checkout_card::consequences(a)
                    == crate::ucp::checkout_card::consequences(b)
            }
            (PreviewOutcome::Refused { message: a }, PreviewOutcome::Refused { message: b }) => {
                a == b
            }
            (PreviewOutcome::Unavailable { .. }, PreviewOutcome::Unavailable { .. }) => true,
            (
                PreviewOutcome::NotPayable { problem: a },
                PreviewOutcome::NotPayable { problem: b },
            ) => a == b,
            _ => false,
        }
    }
}

/// What became of a reply to a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputOutcome {
    /// A run started: a message is being answered, or a fully decided
    /// card's calls run and the loop goes on. Its events carry this id.
    RunStarted { run_id: String },
    /// Decisions recorded; these calls on the card still wait for one.
    AwaitingDecisions { remaining: Vec<String> },
    /// The answer went to a server that waits for it on its connection;
    /// the run holding its call goes on (its events carry this id).
    RunContinues { run_id: String },
}

/// A server's request for the user's input during a call (an MCP
/// elicitation), as its card shows it. One in an `input_required` result
/// is stored with its call, so it is shown again after a restart and can
/// still be answered; one an older server sends on its connection lives
/// only while the app runs (`durable` is false).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InputCard {
    pub request_id: String,
    pub session_id: String,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    /// The tool's title, when the server gives one.
    pub title: Option<String>,
    /// Whether the server is trusted; an untrusted one's request is marked.
    pub trusted: bool,
    /// Which round of asking this is, from 1 (a server may ask again
    /// after an answer, a few times at most).
    pub round: u32,
    pub max_rounds: u32,
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub expires_at: i64,
    /// Kept across a restart (an `input_required` result); `false` for a
    /// request that lives on the server's connection only.
    pub durable: bool,
    pub asks: Vec<InputAsk>,
}

/// One thing a server asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InputAsk {
    /// The server's name for the request; an answer names it.
    pub key: String,
    /// The server's own words: untrusted text.
    pub message: String,
    pub kind: InputAskKind,
}

/// A form to fill, or a page to visit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputAskKind {
    /// A form generated from this schema (the restricted subset MCP
    /// allows: a flat object of strings, numbers, booleans and enums).
    Form { schema: Value },
    /// A page the user opens in the browser; `origin` is what the card
    /// shows plainly (scheme, host and port).
    Url {
        url: String,
        origin: String,
        elicitation_id: String,
    },
}

/// The user's answer to one request of an [`InputCard`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct KeyedReply {
    pub key: String,
    pub reply: InputReply,
}

/// Accept (with the form's content; none for a page), decline, or cancel,
/// as MCP elicitation defines them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputReply {
    Accept { content: Option<Value> },
    Decline,
    Cancel,
}

/// What became of an input card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum InputCardOutcome {
    Accepted,
    Declined,
    Cancelled,
    Expired,
    Superseded,
}

/// A stored session, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionInfo {
    pub id: String,
    pub title: String,
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
}

/// A session as a window shows it after reopening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Transcript {
    pub session: SessionInfo,
    pub items: Vec<TranscriptItem>,
    /// The card still waiting for decisions, if any.
    pub pending: Option<ConfirmationCard>,
    /// A server's request for input still waiting for the user, if any.
    pub pending_input: Option<InputCard>,
    /// A run is answering in the session now (the window was switched to
    /// another session and back while it ran): its events follow.
    pub running: bool,
    /// How the session's last run failed, when it did and no run has
    /// started since: the page shows it as the live `error` event was.
    pub failure: Option<ErrorInfo>,
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TranscriptItem {
    User {
        #[ts(type = "number")]
        id: i64,
        text: String,
        #[ts(type = "number")]
        at: i64,
    },
    Assistant {
        #[ts(type = "number")]
        id: i64,
        text: String,
        #[ts(type = "number")]
        at: i64,
    },
    ToolCall {
        // Boxed: a call is far larger than a message.
        call: Box<ToolCallView>,
    },
    /// A server's request for input that the user answered, after its
    /// call: the form as it was asked, and what the user sent.
    Input {
        card: Box<InputCard>,
        outcome: InputCardOutcome,
        replies: Vec<KeyedReply>,
    },
    /// Something the user should know that is not a chat message (a call
    /// whose outcome is unknown after a crash, say).
    Notice {
        #[ts(type = "number")]
        id: i64,
        text: String,
        #[ts(type = "number")]
        at: i64,
    },
}

/// Why code refused a call before anyone was asked (status `rejected`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Rejection {
    /// No server lists a tool of that name.
    UnknownTool,
    /// The arguments are not JSON, or do not fit the tool's input schema.
    InvalidArguments { details: Vec<String> },
    /// The user's per-tool setting refuses the tool.
    PolicyDenied,
}

/// A tool call as the UI shows it (activity chip, card status).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolCallView {
    pub call_id: String,
    pub qualified_name: String,
    pub server: String,
    pub tool: String,
    pub title: Option<String>,
    pub arguments: Value,
    pub status: CallStatus,
    /// The result text (or the reason it did not run), once known.
    pub output: Option<String>,
    pub is_error: bool,
    pub destructive: bool,
    /// The card the call was on, if it needed one.
    pub reply_id: Option<String>,
    /// The result's structured content, when the tool gave one.
    pub structured_output: Option<Value>,
    /// Why code refused it (status `rejected`).
    pub rejection: Option<Rejection>,
    /// The reason the user gave when denying it.
    pub deny_reason: Option<String>,
    /// What it would do, as its card showed (calls with a preview).
    pub preview: Option<CallPreview>,
    /// Its tool's input schema cut down to the titles and choices that
    /// label the arguments in the user's words.
    pub labels_schema: Option<Arc<Value>>,
}

/// One row of the audit log: a decision on a call and who made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AuditEntry {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub at: i64,
    pub session_id: String,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    /// SHA-256 of the canonical JSON of the arguments decided on.
    pub arguments_hash: String,
    pub decision: AuditDecision,
    pub reason: Option<String>,
    /// For an accepted definition: the pinned definition's hash before.
    pub old_definition_hash: Option<String>,
    /// For an accepted definition: the hash of the one accepted.
    pub new_definition_hash: Option<String>,
    /// The preview the decision was taken on, when the tool has one.
    pub preview: Option<CallPreview>,
    /// The call as it is now (what became of it); `None` for a row that is
    /// not about a call, or once the call's chat was deleted.
    pub call: Option<Box<ToolCallView>>,
}

/// The decisions the audit log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AuditDecision {
    /// Run without a card: trusted server, read-only tool.
    PolicyAllowed,
    /// Run without a card because the user turned asking off for this tool.
    AutoApprovedByUserSetting,
    /// Refused by a per-tool "deny" setting.
    PolicyDenied,
    UserApproved,
    UserApprovedEdited,
    UserDenied,
    Expired,
    Superseded,
    /// The user accepted a tool's changed definition (no call: the row
    /// names the tool and the definition hashes before and after).
    UserAcceptedDefinition,
    /// An approval was refused because what the call would do changed
    /// since its card was shown; the row holds the new preview.
    PreviewChanged,
    /// A call's server asked the user for input (the row's reason holds
    /// what it asked); the hash is of the request.
    ServerRequestedInput,
    /// Code refused a server's request for input before anyone saw it
    /// (a secret asked for in a form, a schema or URL outside the rules).
    InputRequestRefused,
    /// The user answered a request: accepted (the hash is of what was sent).
    UserAcceptedInput,
    UserDeclinedInput,
    UserCancelledInput,
}

/// The parts of a tool's definition a user compares when it changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolDefinitionView {
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Value,
    pub annotations: Value,
}

/// One part of a definition that can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionField {
    Title,
    Description,
    InputSchema,
    Annotations,
}

/// A tool whose definition differs from the one pinned: the pinned one
/// (`old`), the one the server lists now (`new`), and which parts differ.
/// Accepting names `new_hash`, so a definition that changes again after it
/// was shown is not accepted unseen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DefinitionChange {
    pub qualified_name: String,
    pub old_hash: String,
    pub new_hash: String,
    pub old: ToolDefinitionView,
    pub new: ToolDefinitionView,
    /// The fields that differ, in the order above.
    pub changed: Vec<DefinitionField>,
}

/// Whether the configured model answers, for the first-run screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelStatus {
    pub state: ModelState,
    /// What went wrong, in words, when the state is not `ok`.
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    Ok,
    NotConfigured,
    Unreachable,
}

/// One tool as the per-tool policy screen shows it: what it declares and
/// what the policy makes of it with the user's current setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolPolicyView {
    pub qualified_name: String,
    pub server: String,
    pub tool: String,
    pub title: Option<String>,
    pub read_only: bool,
    pub destructive: bool,
    pub trusted: bool,
    pub definition_changed: bool,
    pub user_override: Option<crate::policy::ToolOverride>,
    /// What a call of it gets now.
    pub verdict: PolicyVerdict,
    /// Whether the user may turn asking off for it (see
    /// `policy::ToolFacts::auto_approve_possible`).
    pub auto_approve_allowed: bool,
    /// It places an order or moves money: never without a card.
    pub moves_money: bool,
    /// What it can do, as the settings screen groups tools.
    pub group: ToolGroup,
}

/// What a tool can do, as the settings screen groups tools: money first,
/// then the cart, so each tool is in one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolGroup {
    /// It declares it only reads.
    Read,
    /// It changes the shopping cart (`_meta["ragent/changes_cart"]`).
    Cart,
    /// It places an order or moves money.
    Money,
    /// Any other write.
    OtherWrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PolicyVerdict {
    Allow,
    Ask,
    Deny,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn decisions_are_tagged_in_snake_case() {
        let decisions = vec![
            CallDecision {
                call_id: "a".into(),
                decision: Decision::Approve,
            },
            CallDecision {
                call_id: "b".into(),
                decision: Decision::Deny {
                    reason: Some("太贵".into()),
                },
            },
            CallDecision {
                call_id: "c".into(),
                decision: Decision::ApproveEdited {
                    arguments: json!({"quantity": 1}),
                },
            },
        ];
        let wire = serde_json::to_value(&decisions).unwrap();
        assert_eq!(
            wire,
            json!([
                {"call_id": "a", "decision": {"type": "approve"}},
                {"call_id": "b", "decision": {"type": "deny", "reason": "太贵"}},
                {"call_id": "c", "decision": {"type": "approve_edited", "arguments": {"quantity": 1}}}
            ])
        );
        let back: Vec<CallDecision> = serde_json::from_value(wire).unwrap();
        assert_eq!(back, decisions);
    }

    #[test]
    fn run_stopped_carries_its_reason() {
        let event = AgentEvent::RunStopped {
            reason: StopReason::AwaitingConfirmation {
                reply_id: "r1".into(),
            },
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "run_stopped", "reason": {"type": "awaiting_confirmation", "reply_id": "r1"}})
        );
    }
}
