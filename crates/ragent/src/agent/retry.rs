//! Asking the model again, after a failed turn or for another answer:
//! what the stored conversation must look like for that to make sense.

use crate::agent::inner::Inner;
use crate::error::AgentError;
use crate::store::StoreError;
use crate::store::calls::{self, BatchState};
use crate::store::messages::{self, MessageRecord, Role};
use rusqlite::Connection;

/// Refuses a retry unless the conversation ends where the model has yet
/// to answer: a user message, a tool result, or a batch its failed run
/// left executing. A card that waits is answered first.
pub(crate) fn check(inner: &Inner, session_id: &str) -> Result<(), AgentError> {
    let (open, last) = inner.store.with_conn(|c| {
        // A server's request for input waits like a card.
        if crate::store::inputs::waiting_in_session(c, session_id)?.is_some() {
            return Ok((Some(BatchState::Pending), None));
        }
        let open = calls::open_batch(c, session_id)?;
        let last = last_message(c, session_id)?.map(|m| m.role);
        Ok::<_, StoreError>((open.map(|b| b.state), last))
    })?;
    match (open, last) {
        (Some(BatchState::Pending), _) => {
            Err(AgentError::ConfirmationPending(session_id.to_string()))
        }
        (Some(BatchState::Executing), _) | (_, Some(Role::User | Role::Tool)) => Ok(()),
        _ => Err(AgentError::NothingToRetry(session_id.to_string())),
    }
}

/// Withdraws the session's final answer so the model can write it again,
/// and returns its id. Only an answer that ends the conversation and asked
/// for no call can be written again: calls it made have run or been
/// decided, and asking again from before them could repeat a write.
pub(crate) fn withdraw_final_answer(inner: &Inner, session_id: &str) -> Result<i64, AgentError> {
    inner.store.with_tx(|c| {
        if let Some(open) = calls::open_batch(c, session_id)? {
            if open.state == BatchState::Pending {
                return Err(AgentError::ConfirmationPending(session_id.to_string()));
            }
            return Err(AgentError::NothingToRegenerate(session_id.to_string()));
        }
        match last_message(c, session_id)? {
            Some(answer) if answer.role == Role::Assistant && answer.tool_calls.is_empty() => {
                messages::withdraw(c, answer.id, inner.now())?;
                Ok(answer.id)
            }
            _ => Err(AgentError::NothingToRegenerate(session_id.to_string())),
        }
    })
}

/// The conversation's last message the model sees (notices are the user's alone).
fn last_message(conn: &Connection, session_id: &str) -> Result<Option<MessageRecord>, StoreError> {
    let mut last = None;
    messages::visit_newest_first(conn, session_id, |message| {
        if message.role == Role::Notice {
            return true;
        }
        last = Some(message);
        false
    })?;
    Ok(last)
}
