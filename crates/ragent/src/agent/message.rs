//! A new message from the user: a card or a request for input that waits
//! is superseded (its calls never run, and the model is told so before it
//! reads the message), the message is stored, and a run answers it.

use crate::agent::batch::{announce_statuses, close_pending, expire_card_if_due};
use crate::agent::elicitation::stored::{announce_superseded, supersede_waiting};
use crate::agent::inner::Inner;
use crate::agent::start::Start;
use crate::error::AgentError;
use crate::instructions::results;
use crate::protocol::AuditDecision;
use crate::store::calls::{self, BatchState};
use crate::store::messages::{self, NewMessage, Role};
use crate::store::{StoreError, sessions};
use crate::toolcall::CallStatus;

/// The title a session has until its first message names it.
pub const DEFAULT_SESSION_TITLE: &str = "新对话";

/// Stores the message (superseding what waits) for the run `run_id` that
/// will answer it.
pub(crate) fn send(
    inner: &Inner,
    session_id: &str,
    run_id: &str,
    text: &str,
) -> Result<Start, AgentError> {
    expire_card_if_due(inner, session_id)?;
    supersede_and_append(inner, session_id, run_id, text)?;
    Ok(Start::Fresh)
}

/// Supersedes a pending card and appends the user's new message, in one
/// transaction: the model reads why the calls did not run, then the message.
fn supersede_and_append(
    inner: &Inner,
    session_id: &str,
    run_id: &str,
    text: &str,
) -> Result<(), AgentError> {
    let now = inner.now();
    let (changed, input_closed) = inner.store.with_tx(|tx| {
        let input_closed = supersede_waiting(tx, session_id, now)?;
        let changed = match calls::open_batch(tx, session_id)? {
            Some(batch) if batch.state == BatchState::Pending => close_pending(
                tx,
                &batch,
                CallStatus::Superseded,
                &results::superseded(),
                AuditDecision::Superseded,
                BatchState::Superseded,
                now,
            )?,
            _ => Vec::new(),
        };
        messages::append(
            tx,
            &NewMessage {
                session_id,
                run_id: Some(run_id),
                role: Role::User,
                content: text,
                tool_calls: &[],
                tool_call_id: None,
                call_id: None,
            },
            now,
        )?;
        let session = sessions::get(tx, session_id)?;
        if session.title == DEFAULT_SESSION_TITLE {
            let title: String = text.chars().take(24).collect();
            sessions::rename(tx, session_id, &title, now)?;
        }
        Ok::<_, StoreError>((changed, input_closed))
    })?;
    announce_superseded(inner, session_id, run_id, input_closed);
    announce_statuses(inner, session_id, Some(run_id), changed);
    Ok(())
}
