//! Asking the model again after a failed turn: what the stored
//! conversation must look like for that to make sense.

use super::Inner;
use crate::error::AgentError;
use crate::store::StoreError;
use crate::store::calls::{self, BatchState};
use crate::store::messages::{self, Role};

/// Refuses a retry unless the conversation ends where the model has yet
/// to answer: a user message, a tool result, or a batch its failed run
/// left executing. A card that waits is answered first.
pub(crate) fn check(inner: &Inner, session_id: &str) -> Result<(), AgentError> {
    let (open, last) = inner.store.with_conn(|c| {
        let open = calls::open_batch(c, session_id)?;
        let mut last = None;
        messages::visit_newest_first(c, session_id, |message| {
            if message.role == Role::Notice {
                return true;
            }
            last = Some(message.role);
            false
        })?;
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
