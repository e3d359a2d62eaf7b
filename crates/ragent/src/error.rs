//! The errors the shell sees. Each has a code a front end can match on and
//! serializes as [`ErrorInfo`], so a Tauri command can return it as is.

use serde::{Serialize, Serializer};

use crate::llm::LlmError;
use crate::llm::models::ModelListError;
use crate::mcp::McpError;
use crate::mcp::import::ImportProblem;
use crate::mcp::sign_in::SignInError;
use crate::protocol::{ErrorCode, ErrorInfo};
use crate::secrets::SecretError;
use crate::settings::SettingsError;
use crate::store::StoreError;
use crate::toolcall::CallStatus;
use crate::web_page::NotAWebPage;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("session {0} not found")]
    SessionNotFound(String),
    #[error("a run is already in progress in session {0}; cancel it or wait for it to end")]
    RunInProgress(String),
    #[error("the message is empty")]
    EmptyMessage,
    #[error("there is no confirmation waiting in this session")]
    NoPendingConfirmation,
    #[error("reply {given} is not the confirmation waiting in this session")]
    StaleReply { given: String },
    #[error("call {0} is not on this confirmation card")]
    UnknownCall(String),
    #[error("call {call_id} was already decided: it is {status}")]
    AlreadyDecided { call_id: String, status: CallStatus },
    #[error("call {0} appears more than once in this reply")]
    DuplicateDecision(String),
    #[error("the confirmation {reply_id} expired before it was answered; nothing was executed")]
    ConfirmationExpired { reply_id: String },
    #[error("the edited arguments of call {call_id} do not fit the tool's input schema: {}", details.join("; "))]
    InvalidArguments {
        call_id: String,
        details: Vec<String>,
    },
    #[error("no server lists a tool named {0}")]
    UnknownTool(String),
    #[error(
        "the definition of {qualified_name} changed again since it was shown; look at it again before accepting it"
    )]
    DefinitionChangedAgain { qualified_name: String },
    #[error(
        "what call {call_id} would do changed since its card was shown; the card shows it now: decide again (nothing was run)"
    )]
    PreviewChanged { call_id: String },
    #[error(
        "the arguments of call {call_id} were edited; the card shows what the edit would do: approve it there (nothing was run)"
    )]
    EditPreviewed { call_id: String },
    /// An approved completion for which no mandate could be made: the
    /// checkout the card showed is not payable, or the device could not
    /// sign. Nothing was recorded or sent.
    #[error("call {call_id} cannot be approved: no mandate could be made for it ({reason})")]
    NotPayable { call_id: String, reason: String },
    #[error("there is nothing to retry in session {0}: the model has answered its last message")]
    NothingToRetry(String),
    #[error(
        "there is no final answer to write again in session {0}: the model has not answered its last message, or its answer asked for tools"
    )]
    NothingToRegenerate(String),
    #[error("a confirmation waits in session {0}; answer it before retrying")]
    ConfirmationPending(String),
    #[error("there is no request for input {0} waiting in this session")]
    NoPendingInput(String),
    #[error("the answer was not sent: {0}")]
    InvalidInput(#[from] crate::elicitation::AnswerRefusal),
    #[error("the request for input {0} expired before it was answered; nothing was sent")]
    InputExpired(String),
    #[error("the settings cannot be saved: {0}")]
    InvalidSettings(#[from] SettingsError),
    #[error("the MCP configuration cannot be imported: {}", problems_text(.0))]
    ImportRefused(Vec<ImportProblem>),
    #[error(
        "the servers this import would add changed since it was previewed; look at the new preview before adding them"
    )]
    ImportChanged,
    /// A merchant's profile that could not be read or used; nothing added.
    #[error("the merchant cannot be added: {0}")]
    MerchantProfile(#[from] crate::ucp::profile::ProfileError),
    /// The merchant is a server of the settings already.
    #[error("this merchant is already added, as server {server:?}")]
    MerchantAlreadyAdded { server: String },
    #[error(transparent)]
    Model(#[from] LlmError),
    #[error("the models could not be listed: {0}")]
    ModelList(#[from] ModelListError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error("signing in to {server:?} failed: {error}")]
    SignIn { server: String, error: SignInError },
    #[error("no sign-in to {0:?} is under way")]
    NoSignInPending(String),
    #[error("the page was not opened: {0}")]
    NotAWebPage(#[from] NotAWebPage),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secrets(#[from] SecretError),
}

fn problems_text(problems: &[ImportProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl AgentError {
    pub fn code(&self) -> ErrorCode {
        match self {
            AgentError::SessionNotFound(_) => ErrorCode::SessionNotFound,
            AgentError::RunInProgress(_) => ErrorCode::RunInProgress,
            AgentError::EmptyMessage => ErrorCode::EmptyMessage,
            AgentError::NoPendingConfirmation => ErrorCode::NoPendingConfirmation,
            AgentError::StaleReply { .. } => ErrorCode::StaleReply,
            AgentError::UnknownCall(_) => ErrorCode::UnknownCall,
            AgentError::AlreadyDecided { .. } => ErrorCode::AlreadyDecided,
            AgentError::DuplicateDecision(_) => ErrorCode::DuplicateDecision,
            AgentError::ConfirmationExpired { .. } => ErrorCode::ConfirmationExpired,
            AgentError::InvalidArguments { .. } => ErrorCode::InvalidArguments,
            AgentError::UnknownTool(_) => ErrorCode::UnknownTool,
            AgentError::DefinitionChangedAgain { .. } => ErrorCode::DefinitionChangedAgain,
            AgentError::PreviewChanged { .. } => ErrorCode::PreviewChanged,
            AgentError::EditPreviewed { .. } => ErrorCode::EditPreviewed,
            AgentError::NotPayable { .. } => ErrorCode::NotPayable,
            AgentError::NothingToRetry(_) => ErrorCode::NothingToRetry,
            AgentError::NothingToRegenerate(_) => ErrorCode::NothingToRegenerate,
            AgentError::ConfirmationPending(_) => ErrorCode::ConfirmationPending,
            AgentError::NoPendingInput(_) => ErrorCode::NoPendingInput,
            AgentError::InvalidInput(_) => ErrorCode::InvalidInput,
            AgentError::InputExpired(_) => ErrorCode::InputExpired,
            AgentError::InvalidSettings(SettingsError::AutoApproveNotAllowed { .. }) => {
                ErrorCode::AutoApproveNotAllowed
            }
            AgentError::InvalidSettings(_) => ErrorCode::InvalidSettings,
            AgentError::ImportRefused(_) => ErrorCode::ImportRefused,
            AgentError::ImportChanged => ErrorCode::ImportChanged,
            AgentError::MerchantProfile(_) => ErrorCode::MerchantProfile,
            AgentError::MerchantAlreadyAdded { .. } => ErrorCode::MerchantAlreadyAdded,
            AgentError::Model(LlmError::NotConfigured) => ErrorCode::ModelNotConfigured,
            AgentError::Model(_) => ErrorCode::Model,
            AgentError::ModelList(error) => match error {
                ModelListError::NotConfigured => ErrorCode::ModelNotConfigured,
                ModelListError::Unauthorized { .. } => ErrorCode::ModelUnauthorized,
                ModelListError::Unreachable { .. } => ErrorCode::ModelUnreachable,
                ModelListError::Timeout(_) => ErrorCode::ModelTimeout,
                ModelListError::Malformed(_) => ErrorCode::ModelListMalformed,
                ModelListError::Http { .. } => ErrorCode::Model,
                ModelListError::Header(_) => ErrorCode::InvalidSettings,
            },
            AgentError::Mcp(_) => ErrorCode::Mcp,
            AgentError::SignIn {
                error: SignInError::Cancelled,
                ..
            } => ErrorCode::SignInCancelled,
            AgentError::NotAWebPage(_)
            | AgentError::SignIn {
                error: SignInError::NotAWebPage(_),
                ..
            } => ErrorCode::NotAWebPage,
            AgentError::SignIn { .. } => ErrorCode::SignIn,
            AgentError::NoSignInPending(_) => ErrorCode::NoSignInPending,
            AgentError::Store(error) if error.is_disk_full() => ErrorCode::DiskFull,
            AgentError::Store(_) | AgentError::Secrets(_) => ErrorCode::Store,
        }
    }

    pub fn info(&self) -> ErrorInfo {
        ErrorInfo {
            code: self.code(),
            message: self.to_string(),
            model_failure: match self {
                AgentError::Model(error) => error.failure(),
                _ => None,
            },
        }
    }
}

impl Serialize for AgentError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.info().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_serialize_with_a_code_and_a_message() {
        let error = AgentError::AlreadyDecided {
            call_id: "c1".into(),
            status: CallStatus::Approved,
        };
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"code": "already_decided", "message": "call c1 was already decided: it is approved"})
        );
        assert_eq!(
            AgentError::Model(LlmError::NotConfigured).code(),
            ErrorCode::ModelNotConfigured
        );
    }

    #[test]
    fn a_model_error_carries_its_failure_and_other_errors_none() {
        let error = AgentError::Model(LlmError::Http {
            status: 429,
            body: "slow down".into(),
            request_id: Some("r-9".into()),
            retry_after: Some(std::time::Duration::from_secs(3)),
        });
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({
                "code": "model",
                "message": "the model endpoint answered HTTP 429: slow down",
                "model_failure": {
                    "kind": {"type": "rate_limited", "retry_after_secs": 3},
                    "details": {"status": 429, "raw": "slow down", "request_id": "r-9"}
                }
            })
        );
        assert_eq!(AgentError::EmptyMessage.info().model_failure, None);
    }

    #[test]
    fn a_refused_auto_approve_reaches_the_page_with_its_own_code_naming_the_tool() {
        let error = AgentError::from(SettingsError::AutoApproveNotAllowed {
            tool: "shop__pay_order".into(),
            reason: crate::policy::AutoApproveRefusal::MovesMoney,
        });
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({
                "code": "auto_approve_not_allowed",
                "message": "the settings cannot be saved: asking cannot be turned off for shop__pay_order: it places an order or moves money"
            })
        );
    }
}
