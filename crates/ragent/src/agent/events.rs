//! The core's events, in the order the page must see them. A turn of
//! reads is stored on a thread of its own while the next request goes out
//! (`reads_first.rs`), and tells of itself once stored: until then its
//! session's later events wait here, so the page never sees a turn before
//! the one it follows. Other sessions' events go straight out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;

use crate::protocol::{AgentEvent, EventEnvelope};

pub(crate) struct Events {
    sender: broadcast::Sender<EventEnvelope>,
    /// Per session whose turn is being stored: the events held behind it.
    held: Mutex<HashMap<String, Vec<EventEnvelope>>>,
}

impl Events {
    pub(crate) fn new(capacity: usize) -> Events {
        let (sender, _) = broadcast::channel(capacity);
        Events {
            sender,
            held: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<EventEnvelope> {
        self.sender.subscribe()
    }

    pub(crate) fn send(&self, envelope: EventEnvelope) {
        let mut held = self.lock();
        match held.get_mut(&envelope.session_id) {
            Some(waiting) => waiting.push(envelope),
            // Sent under the lock: a release on another thread cannot
            // slip its events in between.
            None => {
                // No subscriber is fine: the store has everything.
                let _ = self.sender.send(envelope);
            }
        }
    }

    /// Holds the session's events until the hold is released: one hold
    /// at a time per session.
    pub(crate) fn hold(self: &Arc<Self>, session_id: &str, run_id: &str) -> Hold {
        self.lock().entry(session_id.to_string()).or_default();
        Hold {
            events: Arc::clone(self),
            session_id: session_id.to_string(),
            run_id: run_id.to_string(),
            released: false,
        }
    }

    fn release(&self, session_id: &str, run_id: &str, first: Vec<AgentEvent>) {
        let mut held = self.lock();
        let waiting = held.remove(session_id).unwrap_or_default();
        let first = first.into_iter().map(|event| EventEnvelope {
            session_id: session_id.to_string(),
            run_id: Some(run_id.to_string()),
            event,
        });
        for envelope in first.chain(waiting) {
            let _ = self.sender.send(envelope);
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<EventEnvelope>>> {
        // Plain data: usable after a panic elsewhere.
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A session's events held back; dropped unreleased (the turn failed to
/// store, or its thread panicked), it lets them go as they are.
pub(crate) struct Hold {
    events: Arc<Events>,
    session_id: String,
    run_id: String,
    released: bool,
}

impl Hold {
    /// Sends `first` (the run's), then what was held, and lets the
    /// session's events go straight out again.
    pub(crate) fn release(mut self, first: Vec<AgentEvent>) {
        self.released = true;
        self.events.release(&self.session_id, &self.run_id, first);
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if !self.released {
            self.events
                .release(&self.session_id, &self.run_id, Vec::new());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(session_id: &str, text: &str) -> EventEnvelope {
        EventEnvelope {
            session_id: session_id.to_string(),
            run_id: Some("run".to_string()),
            event: AgentEvent::TextDelta {
                text: text.to_string(),
            },
        }
    }

    fn texts(received: &mut broadcast::Receiver<EventEnvelope>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(envelope) = received.try_recv() {
            if let AgentEvent::TextDelta { text } = envelope.event {
                out.push(format!("{}:{text}", envelope.session_id));
            }
        }
        out
    }

    #[test]
    fn a_held_session_hears_the_stored_turn_first_and_then_what_came_meanwhile() {
        let events = Arc::new(Events::new(16));
        let mut received = events.subscribe();
        let hold = events.hold("s", "run");
        events.send(envelope("s", "next turn"));
        events.send(envelope("other", "elsewhere"));
        assert_eq!(texts(&mut received), ["other:elsewhere"]);

        hold.release(vec![AgentEvent::TextDelta {
            text: "stored turn".into(),
        }]);
        events.send(envelope("s", "after"));
        assert_eq!(
            texts(&mut received),
            ["s:stored turn", "s:next turn", "s:after"]
        );
    }

    #[test]
    fn a_hold_dropped_unreleased_lets_the_held_events_go() {
        let events = Arc::new(Events::new(16));
        let mut received = events.subscribe();
        let hold = events.hold("s", "run");
        events.send(envelope("s", "waiting"));
        drop(hold);
        events.send(envelope("s", "after"));
        assert_eq!(texts(&mut received), ["s:waiting", "s:after"]);
    }
}
