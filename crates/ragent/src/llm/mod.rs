//! The model side: a [`ChatModel`] trait the agent loop talks to, and an
//! OpenAI-compatible streaming client ([`openai::OpenAiClient`]).

pub mod failure;
pub mod models;
pub mod openai;
pub mod sse;
pub mod turn;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: String,
        tool_calls: Vec<ToolCallRequest>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A tool call as the model proposed it: the id it chose, the function
/// name, and the arguments as the raw JSON text it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRequest {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A function the model may call.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The input schema as JSON text: written out once per run, copied
    /// as is into every request of the run.
    pub parameters: Box<RawValue>,
}

impl ToolSpec {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: &Value,
    ) -> Result<ToolSpec, serde_json::Error> {
        Ok(ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::value::to_raw_value(parameters)?,
        })
    }
}

impl PartialEq for ToolSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.parameters.get() == other.parameters.get()
    }
}

/// What one model turn is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// Shared with the session's window of recent messages: a turn does
    /// not copy the history it sends.
    pub messages: Vec<Arc<ChatMessage>>,
    /// Shared: a run offers the same tools on every turn.
    pub tools: Arc<[ToolSpec]>,
}

/// What one model turn produced, assembled from its stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssistantTurn {
    pub text: String,
    pub tool_calls: Vec<ToolCallRequest>,
    pub finish_reason: Option<String>,
    /// What the provider counted, when it says (the client asks for it).
    pub usage: Option<TokenUsage>,
}

/// The tokens a provider counted for one request and its answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct TokenUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
}

/// What a turn tells while it goes: its text as it streams in, and a
/// failed attempt that will be made again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnNews<'a> {
    Text(&'a str),
    Retrying(Retrying),
}

/// A request that failed and will be sent again after `delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retrying {
    /// Which retry comes next, from 1.
    pub attempt: u32,
    /// How many retries the client makes at most.
    pub retries: u32,
    pub delay: std::time::Duration,
    /// The failure's kind as the page would name it.
    pub kind: crate::protocol::ModelFailureKind,
}

/// Receives a turn's news as it happens.
pub type TurnSink<'a> = &'a (dyn Fn(TurnNews<'_>) + Send + Sync);

/// A chat model. Implementations stream text to `news` and return the
/// assembled turn; they stop early with [`LlmError::Cancelled`] when
/// `cancel` fires.
pub trait ChatModel: Send + Sync {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        news: TurnSink<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<AssistantTurn, LlmError>>;
}

/// Why a model turn failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("no model is configured: set a base URL and a model name in settings")]
    NotConfigured,
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Http {
        status: u16,
        /// The provider's error body, bounded, without the settings' secrets.
        body: String,
        /// From the response's headers or its body, when it names one.
        request_id: Option<String>,
        /// The response's `Retry-After`, when it has one.
        retry_after: Option<Duration>,
    },
    #[error("could not reach the model endpoint: {0}")]
    Connect(String),
    #[error("the model endpoint did not answer within {0:?}")]
    FirstByteTimeout(Duration),
    #[error("the model stream stalled for more than {0:?}")]
    IdleTimeout(Duration),
    #[error("the model stream ended before the turn was complete: {0}")]
    StreamInterrupted(String),
    #[error("the model sent something that is not a chat-completions stream: {0}")]
    Protocol(String),
    #[error("the model reported an error: {0}")]
    Api(String),
    #[error("the request could not be written as JSON: {0}")]
    Encode(String),
    #[error("cancelled")]
    Cancelled,
}
