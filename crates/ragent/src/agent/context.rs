//! Each session's recent conversation as the model reads it, kept between
//! turns: a turn reads from the store only the messages stored since the
//! previous one, so its cost does not grow with the session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::history::{Counted, Window};
use crate::llm::ChatMessage;
use crate::store::{Store, StoreError, messages};

/// Sessions whose windows are kept; past it they are read afresh.
const MAX_SESSIONS: usize = 16;

#[derive(Default)]
pub(crate) struct Windows {
    open: Mutex<HashMap<String, Window>>,
}

impl Windows {
    /// The newest messages of the session that a request of `budget`
    /// tokens can use, oldest first, each with its estimated tokens.
    pub(crate) fn conversation(
        &self,
        store: &Store,
        session_id: &str,
        budget: usize,
    ) -> Result<Vec<Counted<Arc<ChatMessage>>>, StoreError> {
        let mut open = self.lock();
        // Taken out while it is brought up to date: a failed read drops it.
        let kept = open
            .remove(session_id)
            .filter(|window| window.budget() >= budget);
        let window = store.with_conn(|conn| match kept {
            Some(mut window) => {
                window.narrow(budget);
                messages::visit_after(conn, session_id, window.last_id(), |record| {
                    window.take_newer(record)
                })?;
                Ok::<_, StoreError>(window)
            }
            None => {
                let mut window = Window::new(budget);
                messages::visit_newest_first(conn, session_id, |record| window.take_older(record))?;
                Ok(window)
            }
        })?;
        let conversation = window.counted();
        if open.len() >= MAX_SESSIONS {
            open.clear();
        }
        open.insert(session_id.to_string(), window);
        Ok(conversation)
    }

    /// Lets go of a deleted session's window.
    pub(crate) fn forget(&self, session_id: &str) {
        self.lock().remove(session_id);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Window>> {
        // Windows are rebuilt from the store if need be: usable after a panic.
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
