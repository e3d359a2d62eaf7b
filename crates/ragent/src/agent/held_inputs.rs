//! Requests for input a server makes on its connection while one of its
//! calls runs, held while they wait for the user: the call's watch puts
//! them here (`elicitation/live.rs`), the user's answer takes them out
//! (`elicitation/route.rs`). Nothing of them is stored but their audit
//! rows.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::time::Instant;

use crate::mcp::LiveRequest;
use crate::protocol::{AgentEvent, InputAskKind, InputCard, InputCardOutcome};
use crate::store::calls::CallRecord;

/// The key of a connection request's one ask (the protocol's request has
/// no name of its own for it).
pub(crate) const ASK_KEY: &str = "input";

pub(crate) struct Waiting {
    pub card: InputCard,
    pub call: CallRecord,
    pub request: LiveRequest,
    /// When the server is told `cancel`, on the runtime's clock (the
    /// card's `expires_at` is the same moment on the app's).
    pub due: Instant,
}

/// The requests that wait for the user on their server's connection.
#[derive(Default)]
pub(crate) struct LiveInputs {
    waiting: Mutex<HashMap<String, Waiting>>,
}

impl LiveInputs {
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<String, Waiting>> {
        // Never held across an await, and every change leaves it whole.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session's newest waiting request, as its card.
    pub(crate) fn card_of_session(&self, session_id: &str) -> Option<InputCard> {
        self.lock()
            .values()
            .filter(|w| w.card.session_id == session_id)
            .max_by_key(|w| w.card.created_at)
            .map(|w| w.card.clone())
    }

    pub(crate) fn take_where(&self, keep: impl Fn(&Waiting) -> bool) -> Vec<Waiting> {
        let mut waiting = self.lock();
        let ids: Vec<String> = waiting
            .iter()
            .filter(|(_, w)| !keep(w))
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter().filter_map(|id| waiting.remove(id)).collect()
    }

    /// When the call's first waiting request is due.
    pub(crate) fn next_due(&self, call_id: &str) -> Option<Instant> {
        self.lock()
            .values()
            .filter(|w| w.card.call_id == call_id)
            .map(|w| w.due)
            .min()
    }

    /// The page address of the session's waiting request's URL ask `key`.
    pub(crate) fn url(&self, session_id: &str, request_id: &str, key: &str) -> Option<String> {
        let held = self.lock();
        let waiting = held
            .get(request_id)
            .filter(|w| w.card.session_id == session_id)?;
        waiting.card.asks.iter().find_map(|ask| match &ask.kind {
            InputAskKind::Url { url, .. } if ask.key == key => Some(url.clone()),
            _ => None,
        })
    }
}

pub(crate) fn closed_event(card: &InputCard, outcome: InputCardOutcome) -> AgentEvent {
    AgentEvent::InputClosed {
        request_id: card.request_id.clone(),
        outcome,
    }
}
