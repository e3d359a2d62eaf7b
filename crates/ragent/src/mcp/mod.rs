//! The MCP side: servers (stdio child processes, streamable HTTP, or any
//! [`Connect`] a test supplies), their tools under `server__tool` names,
//! and calls that carry an idempotency key in `_meta`.

pub mod asks;
pub mod client;
pub mod config;
pub mod connect;
pub mod env_refs;
pub mod export;
pub mod hub;
pub mod import;
pub mod login_path;
pub mod page_origins;
pub mod pin;
pub mod secret_args;
mod seen_tools;
pub mod sign_in;
pub mod stdio;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use crate::protocol::CallProgress;
use crate::ucp::binding::MerchantBinding;

pub use asks::LiveRequest;
pub use connect::{Connect, ConnectError, Connected};
pub use hub::McpHub;
pub use page_origins::PageOrigins;

/// Separates server and tool in the names the model sees.
pub const SEPARATOR: &str = "__";

/// The `_meta` key for idempotency keys, and the experimental capability
/// by which a server says it honours them.
pub const IDEMPOTENCY_KEY: &str = "ragent/idempotency_key";

/// The tool definition `_meta` key by which a server says a tool places an
/// order or moves money: such a tool can never skip its card.
pub const MOVES_MONEY: &str = "ragent/moves_money";

/// The tool definition `_meta` key by which a server says a write changes
/// the shopping cart. It only sorts the settings screen's tool list, so it
/// is neither pinned nor asked by the policy.
pub const CHANGES_CART: &str = "ragent/changes_cart";

/// The tool definition `_meta` key by which a server says a write can be
/// undone by another call of its own (a cart line put back, an address
/// changed again). It only softens the card's badge, so it is believed
/// only from a trusted server, and it is pinned.
pub const UNDOABLE: &str = "ragent/undoable";

/// The tool definition `_meta` key by which a write names the read-only
/// tool of the same server that previews its calls (same arguments).
pub const PREVIEW: &str = "ragent/preview";

/// `server__tool`.
pub fn qualified_name(server: &str, tool: &str) -> String {
    format!("{server}{SEPARATOR}{tool}")
}

/// The annotations a tool declares (hints: believed only for trusted servers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// A tool as the agent sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub server: String,
    pub name: String,
    pub qualified_name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Value,
    pub hints: ToolHints,
    /// The definition's `_meta` declares [`MOVES_MONEY`].
    pub moves_money: bool,
    /// The definition's `_meta` declares [`CHANGES_CART`].
    pub changes_cart: bool,
    /// The definition's `_meta` declares [`UNDOABLE`].
    pub undoable: bool,
    /// The tool the definition's `_meta` names under [`PREVIEW`] (a bare
    /// tool name of the same server), believed only as the policy says.
    pub preview: Option<String>,
    /// The definition as pinned: schema, annotations, description, title.
    pub definition: Value,
    pub definition_hash: String,
    pub trusted: bool,
    /// The merchant whose shopping service (UCP) lists it, if any.
    pub merchant: Option<MerchantBinding>,
}

/// A server that could not list its tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerProblem {
    pub server: String,
    pub message: String,
}

/// A server that failed `failures` times in a row, the last for `problem`:
/// it is tried again in `retry_in_secs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerPaused {
    pub server: String,
    pub failures: u32,
    pub retry_in_secs: u64,
    pub problem: String,
}

/// All servers' tools, and what went wrong on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolListing {
    pub tools: Vec<ToolInfo>,
    /// Servers that failed to start or list; their tools are missing.
    pub failures: Vec<ServerProblem>,
    /// Servers that had stopped and were started again.
    pub restarted: Vec<ServerProblem>,
    /// Servers that keep failing, not started again before a pause is over.
    pub paused: Vec<ServerPaused>,
    /// Servers that answered that the user must sign in first; their tools
    /// are missing until then.
    pub needs_sign_in: Vec<String>,
}

/// One call to send.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInvocation {
    pub server: String,
    pub tool: String,
    pub arguments: Map<String, Value>,
    /// Sent in the request `_meta` under [`IDEMPOTENCY_KEY`].
    pub idempotency_key: Option<String>,
    /// The user's answers to the server's last request for input, sent
    /// with the call again.
    pub retry: Option<InputRetry>,
}

/// What a call sent again after its server asked for input carries.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRetry {
    /// `inputResponses`: an answer for every request the server made.
    pub responses: Map<String, Value>,
    /// `requestState`, exactly as the server sent it.
    pub request_state: Option<String>,
}

/// A server's answer that it needs the user's input before the call can
/// finish (MCP `input_required`).
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequired {
    /// `inputRequests`, as JSON (a map from the server's key to a request).
    pub requests: Value,
    /// `requestState`, kept exactly as received.
    pub request_state: Option<String>,
}

/// What a call's server answered.
#[derive(Debug, Clone, PartialEq)]
pub enum CallAnswer {
    Done(ToolOutput),
    InputRequired(InputRequired),
}

/// A call's result as text for the model and the user.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    /// The result's structured content, when it had one.
    pub structured: Option<Value>,
    /// The server reported a tool error (a refusal the model can act on).
    pub is_error: bool,
}

/// The result of a call and whether its server had to be restarted first.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    pub answer: CallAnswer,
    pub restarted: Option<String>,
}

impl CallOutcome {
    /// The finished result, or what a caller that cannot ask the user
    /// makes of a request for input: an error naming it.
    pub fn into_output(self) -> ToolOutput {
        match self.answer {
            CallAnswer::Done(output) => output,
            CallAnswer::InputRequired(_) => ToolOutput {
                text: "the server asked for the user's input, which is not offered here".into(),
                structured: None,
                is_error: true,
            },
        }
    }
}

/// A server as the settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct ServerStatus {
    pub name: String,
    pub trusted: bool,
    pub connected: bool,
    pub pid: Option<u32>,
    pub restarts: u32,
    /// Failed starts since it last started: each makes the pause before
    /// the next try twice as long.
    pub failed_starts: u32,
    /// Times in a row it stopped within a minute of starting: from the
    /// second, each pauses its next start as a failed start does.
    pub stops_soon: u32,
    /// While its next start is paused: whole seconds until it is tried.
    pub retry_in_secs: Option<u64>,
    /// While paused: why it last failed to start or stopped.
    pub problem: Option<String>,
    pub honours_idempotency_keys: Option<bool>,
    /// Where the server asks the user to sign in; `None` for a server that
    /// never asked.
    pub sign_in: Option<SignInStatus>,
}

/// A server's sign-in as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SignInStatus {
    /// The server answered 401: "Sign in to <server>".
    Required,
    /// Tokens are kept for it; `identity` is the token's user name or `sub`.
    SignedIn { identity: String },
}

/// A server to run, with how to reach it.
#[derive(Clone)]
pub struct ServerEntry {
    pub name: String,
    pub trusted: bool,
    pub connector: Arc<dyn Connect>,
    /// How long one of its tool calls may take; the hub's `call_timeout`
    /// when unset.
    pub call_timeout: Option<Duration>,
    /// The web pages it may send the user to.
    pub pages: PageOrigins,
    /// A UCP merchant's shopping service: its calls carry the request
    /// metadata the binding requires.
    pub ucp: Option<MerchantBinding>,
}

impl std::fmt::Debug for ServerEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerEntry")
            .field("name", &self.name)
            .field("trusted", &self.trusted)
            .field("connector", &self.connector.describe())
            .field("call_timeout", &self.call_timeout)
            .field("pages", &self.pages.listed())
            .field("ucp", &self.ucp)
            .finish()
    }
}

/// What a running call's server says before it answers.
pub trait CallListener: Send + Sync {
    /// How far it has come (MCP progress).
    fn progress(&self, progress: CallProgress);

    /// It asks the user for input on the connection (`elicitation/create`,
    /// revisions before 2026-07-28). A call that cannot ask anyone
    /// declines, as this default does.
    fn asks(&self, request: LiveRequest) {
        tracing::info!("declined a server's request for input: this call cannot ask the user");
        request.decline();
    }
}

/// For a call whose news nobody shows (a preview): its server's
/// requests for input are declined.
pub struct Unwatched;

impl CallListener for Unwatched {
    fn progress(&self, _progress: CallProgress) {}
}

pub const UNWATCHED: &Unwatched = &Unwatched;

/// Why a call or a listing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("no MCP server is named {0:?}")]
    UnknownServer(String),
    #[error("MCP server {server:?} could not be started: {message}")]
    Start { server: String, message: String },
    /// The server failed to start, or stopped soon after starting,
    /// `failures` times in a row: it is not started again before the pause
    /// is over.
    #[error(
        "MCP server {server:?} failed {failures} times in a row ({problem}); next try in {retry_in_secs} s"
    )]
    Paused {
        server: String,
        failures: u32,
        retry_in_secs: u64,
        problem: String,
    },
    /// The connection broke while the request was out: for a write, the
    /// outcome is unknown.
    #[error("MCP server {server:?} stopped during the request: {message}")]
    Stopped { server: String, message: String },
    #[error("MCP server {server:?} did not answer within {seconds} s")]
    Timeout { server: String, seconds: u64 },
    #[error("MCP server {server:?} refused the request: {message}")]
    Refused { server: String, message: String },
    #[error("MCP server {server:?} asks you to sign in")]
    NeedsSignIn { server: String },
}

impl McpError {
    /// The request may have reached the server and done its work.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, McpError::Stopped { .. } | McpError::Timeout { .. })
    }
}

/// Where the agent gets its tools. [`McpHub`] is the real one; tests wrap
/// it to inject faults.
pub trait ToolSource: Send + Sync {
    /// Replaces the set of servers (settings changed); unchanged servers
    /// keep their connection.
    fn configure(&self, servers: Vec<ServerEntry>) -> BoxFuture<'_, ()>;
    fn list_tools(&self) -> BoxFuture<'_, ToolListing>;
    /// Sends the call; what its server tells of its progress meanwhile,
    /// and what it asks the user, goes to `listener`.
    fn call_tool<'a>(
        &'a self,
        call: ToolInvocation,
        listener: &'a dyn CallListener,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>>;
    /// Whether the server declared `capabilities.experimental["ragent/idempotency_key"]`.
    fn honours_idempotency_keys<'a>(
        &'a self,
        server: &'a str,
    ) -> BoxFuture<'a, Result<bool, McpError>>;
    fn status(&self) -> BoxFuture<'_, Vec<ServerStatus>>;
    /// Closes the server's connection (its sign-in was forgotten); the
    /// next use connects again.
    fn disconnect<'a>(&'a self, server: &'a str) -> BoxFuture<'a, ()>;
}
