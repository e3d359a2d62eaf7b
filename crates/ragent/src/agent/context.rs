//! Each session's recent conversation as the model reads it, kept between
//! turns: a turn reads from the store only the messages stored since the
//! previous one, so its cost does not grow with the session. Also how the
//! provider counted the session's last request, to correct the budget's
//! estimate for the next one. And the system prompt every request starts
//! with: one message for all, so its JSON is written once
//! (`llm::wire::MessageTexts`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::history::{self, Counted, Window};
use crate::instructions::system_prompt;
use crate::llm::ChatMessage;
use crate::store::{Store, StoreError, messages};

/// Sessions whose windows are kept; past it they are read afresh.
const MAX_SESSIONS: usize = 16;

pub(crate) struct Windows {
    system: Arc<ChatMessage>,
    open: Mutex<HashMap<String, Window>>,
    /// Per session, the last request's estimated tokens and the
    /// provider's count of them.
    counts: Mutex<HashMap<String, (usize, u64)>>,
}

impl Default for Windows {
    fn default() -> Self {
        Windows {
            system: Arc::new(ChatMessage::System {
                content: system_prompt().to_string(),
            }),
            open: Mutex::default(),
            counts: Mutex::default(),
        }
    }
}

impl Windows {
    /// The system prompt, the first message of every request.
    pub(crate) fn system(&self) -> Arc<ChatMessage> {
        Arc::clone(&self.system)
    }

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

    /// Gives the session's window the messages a run stored itself, as the
    /// run held them ([`Window::take_stored`]): the next turn need not read
    /// back from the store what it sent a turn ago.
    pub(crate) fn take_stored(
        &self,
        session_id: &str,
        after: i64,
        last_id: i64,
        messages: &[Counted<Arc<ChatMessage>>],
    ) {
        if let Some(window) = self.lock().get_mut(session_id) {
            window.take_stored(after, last_id, messages);
        }
    }

    /// Notes how the provider counted a request of the session that was
    /// estimated at `estimated` tokens.
    pub(crate) fn note_count(&self, session_id: &str, estimated: usize, counted: u64) {
        let mut counts = lock(&self.counts);
        if counts.len() >= MAX_SESSIONS && !counts.contains_key(session_id) {
            counts.clear();
        }
        counts.insert(session_id.to_string(), (estimated, counted));
    }

    /// `budget` corrected by how the provider counted the session's last
    /// request ([`history::corrected_budget`]); as set when it never said.
    pub(crate) fn corrected_budget(&self, session_id: &str, budget: usize) -> usize {
        match lock(&self.counts).get(session_id) {
            Some(&(estimated, counted)) => history::corrected_budget(budget, estimated, counted),
            None => budget,
        }
    }

    /// Lets go of a deleted session's window.
    pub(crate) fn forget(&self, session_id: &str) {
        self.lock().remove(session_id);
        lock(&self.counts).remove(session_id);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Window>> {
        lock(&self.open)
    }
}

/// Windows are rebuilt from the store if need be, and a count is only a
/// correction: both usable after a panic.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
