//! How many calls may wait for a database connection. When the database
//! is slow every connection stays busy and calls queue for one; past
//! [`MAX_WAITING`] a call is shed at once with a clear error rather than
//! queued, so the queue of an instance never grows without bound. An
//! instance that shed a call in the last [`OVERLOADED_FOR`] says it is
//! overloaded, and its health check asks the balancer to send its work
//! elsewhere until it is not.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::ShopError;

/// Calls that may wait for a connection at once, besides those running.
pub const MAX_WAITING: usize = 64;

/// How long after shedding a call an instance counts as overloaded.
pub(crate) const OVERLOADED_FOR: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub(crate) struct LoadGate {
    waiting: AtomicUsize,
    last_shed: Mutex<Option<Instant>>,
}

/// A call's place in the queue for a connection, given back when dropped.
pub(crate) struct Waiting<'a>(&'a LoadGate);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl LoadGate {
    /// A place in the queue, or the call shed when the queue is full.
    pub(crate) fn wait_turn(&self) -> Result<Waiting<'_>, ShopError> {
        let ahead = self.waiting.fetch_add(1, Ordering::SeqCst);
        let place = Waiting(self);
        if ahead >= MAX_WAITING {
            drop(place);
            return Err(self.shed(format!(
                "商城繁忙：已有 {ahead} 个请求在等数据库，这个请求没有排队"
            )));
        }
        Ok(place)
    }

    /// Notes a call shed for `reason` (the queue was full, or no connection
    /// came in time) and gives the caller's error.
    pub(crate) fn shed(&self, reason: String) -> ShopError {
        *self.last_shed.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        tracing::warn!(%reason, "shed a call");
        ShopError::Unavailable(reason)
    }

    /// A call was shed within the last [`OVERLOADED_FOR`].
    pub(crate) fn overloaded(&self) -> bool {
        self.last_shed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|at| at.elapsed() < OVERLOADED_FOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_queue_s_length_a_call_is_shed_and_the_instance_is_overloaded_for_a_moment() {
        let gate = LoadGate::default();
        let queue: Vec<Waiting<'_>> = (0..MAX_WAITING)
            .map(|_| gate.wait_turn().unwrap())
            .collect();
        assert!(!gate.overloaded());
        let shed = gate.wait_turn().err().expect("shed");
        assert!(
            matches!(&shed, ShopError::Unavailable(why) if why.contains("商城繁忙")),
            "{shed}"
        );
        assert!(gate.overloaded());
        drop(queue);
        assert!(gate.wait_turn().is_ok(), "the queue emptied: room again");
    }
}
