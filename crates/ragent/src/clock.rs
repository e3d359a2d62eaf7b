//! Time as the agent sees it, injectable so expiry can be tested without
//! waiting, and kept from running backwards when the system clock is set
//! back ([`SteadyClock`]).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The two readings the agent takes of time.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch, as the system's clock says.
    fn now_ms(&self) -> i64;

    /// Milliseconds on a clock that only moves forward, at the real pace,
    /// whatever the system's clock is set to (the OS's monotonic clock).
    /// Only differences between two readings mean anything.
    fn elapsed_ms(&self) -> i64;
}

/// The system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }

    fn elapsed_ms(&self) -> i64 {
        static START: OnceLock<Instant> = OnceLock::new();
        let start = START.get_or_init(Instant::now);
        i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicI64,
    elapsed: AtomicI64,
}

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        ManualClock {
            now: AtomicI64::new(start_ms),
            elapsed: AtomicI64::new(0),
        }
    }

    /// Time passes: both readings move on by `ms`.
    pub fn advance_ms(&self, ms: i64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
        self.elapsed.fetch_add(ms.max(0), Ordering::SeqCst);
    }

    /// The system's clock is set by `ms` (back when negative); no time passes.
    pub fn set_wall_by_ms(&self, ms: i64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }

    fn elapsed_ms(&self) -> i64 {
        self.elapsed.load(Ordering::SeqCst)
    }
}

/// The agent's time: a wall clock that never runs backwards. Each reading is
/// the wall clock's, or, when that is earlier, the last reading moved on by
/// the time the monotonic clock measured since. Set back by hours, it goes
/// on from where it was at the real pace, so a card expires when it should
/// and never becomes approvable again; set forward, it follows the wall (a
/// card may expire early, never late). It starts no earlier than `floor`:
/// the last moment the store recorded, so a clock set back while the app
/// was closed does not reopen what had expired while it was open.
pub struct SteadyClock {
    source: Arc<dyn Clock>,
    last: Mutex<Reading>,
}

struct Reading {
    now: i64,
    elapsed: i64,
}

impl SteadyClock {
    pub fn new(source: Arc<dyn Clock>, floor: i64) -> Self {
        let last = Reading {
            now: source.now_ms().max(floor),
            elapsed: source.elapsed_ms(),
        };
        SteadyClock {
            source,
            last: Mutex::new(last),
        }
    }
}

impl Clock for SteadyClock {
    fn now_ms(&self) -> i64 {
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let wall = self.source.now_ms();
        let elapsed = self.source.elapsed_ms();
        let steady = last
            .now
            .saturating_add(elapsed.saturating_sub(last.elapsed).max(0));
        *last = Reading {
            now: wall.max(steady),
            elapsed,
        };
        last.now
    }

    fn elapsed_ms(&self) -> i64 {
        self.source.elapsed_ms()
    }
}

impl std::fmt::Debug for SteadyClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SteadyClock").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steady(start_ms: i64, floor: i64) -> (Arc<ManualClock>, SteadyClock) {
        let source = Arc::new(ManualClock::new(start_ms));
        let clock = SteadyClock::new(source.clone(), floor);
        (source, clock)
    }

    #[test]
    fn as_time_passes_it_reads_what_the_wall_clock_reads() {
        let (source, clock) = steady(10_000_000, 0);
        source.advance_ms(60_000);
        assert_eq!(clock.now_ms(), 10_060_000);
    }

    #[test]
    fn set_back_it_goes_on_from_where_it_was_at_the_real_pace() {
        let (source, clock) = steady(10_000_000, 0);
        source.advance_ms(60_000);
        assert_eq!(clock.now_ms(), 10_060_000);
        source.set_wall_by_ms(-3_600_000);
        assert_eq!(clock.now_ms(), 10_060_000, "the hour is not lived again");
        source.advance_ms(5_000);
        assert_eq!(clock.now_ms(), 10_065_000);
    }

    #[test]
    fn set_forward_it_follows_the_wall() {
        let (source, clock) = steady(10_000_000, 0);
        source.set_wall_by_ms(7_200_000);
        assert_eq!(clock.now_ms(), 17_200_000);
    }

    #[test]
    fn it_starts_no_earlier_than_the_last_moment_recorded() {
        assert_eq!(steady(10_000_000, 12_000_000).1.now_ms(), 12_000_000);
        assert_eq!(steady(10_000_000, 9_000_000).1.now_ms(), 10_000_000);
    }

    #[test]
    fn the_system_s_monotonic_clock_moves_on_while_the_wall_may_not() {
        let before = SystemClock.elapsed_ms();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(SystemClock.elapsed_ms() - before >= 20);
    }
}
