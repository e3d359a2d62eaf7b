//! Time: an injectable clock and the formatting of stored instants.
//!
//! Instants are stored as unix milliseconds (UTC). Results show them as
//! RFC 3339 in China Standard Time (UTC+08:00, no daylight saving), the shop's
//! local time, so a model can quote them to the shopper as they are.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the unix epoch, UTC.
pub type Millis = i64;

pub const MINUTE_MS: Millis = 60_000;
pub const DAY_MS: Millis = 24 * 60 * MINUTE_MS;

/// Where the shop reads "now". Tests inject a [`FixedClock`] so windows and
/// expiry are deterministic.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now_ms(&self) -> Millis;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        let elapsed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Millis::try_from(elapsed.as_millis()).unwrap_or(Millis::MAX)
    }
}

/// A clock that stands still until told to move.
#[derive(Debug, Default)]
pub struct FixedClock(AtomicI64);

impl FixedClock {
    pub fn new(now_ms: Millis) -> Self {
        Self(AtomicI64::new(now_ms))
    }

    pub fn set(&self, now_ms: Millis) {
        self.0.store(now_ms, Ordering::SeqCst);
    }

    pub fn advance(&self, by_ms: Millis) {
        self.0.fetch_add(by_ms, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}

/// The shop's display offset: China Standard Time.
const OFFSET_MS: Millis = 8 * 60 * MINUTE_MS;

/// Formats an instant as RFC 3339 with the +08:00 offset, to the second:
/// `2026-11-29T20:43:00+08:00`.
pub fn format_rfc3339(at: Millis) -> String {
    let local = at + OFFSET_MS;
    let days = local.div_euclid(DAY_MS);
    let secs_of_day = local.rem_euclid(DAY_MS) / 1000;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}+08:00",
        secs_of_day / 3600,
        secs_of_day % 3600 / 60,
        secs_of_day % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day);
/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Whole days left until `deadline`, counting a started day as a day, and 0
/// once it has passed: 3 days and 1 hour left -> 4.
pub fn days_left(now: Millis, deadline: Millis) -> i64 {
    if deadline <= now {
        0
    } else {
        (deadline - now + DAY_MS - 1) / DAY_MS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn formats_instants_in_china_standard_time() {
        assert_eq!(format_rfc3339(0), "1970-01-01T08:00:00+08:00");
        // 2024-02-29T15:59:59Z is leap day, 23:59:59 in Shanghai.
        assert_eq!(
            format_rfc3339(1_709_222_399_000),
            "2024-02-29T23:59:59+08:00"
        );
        assert_eq!(
            format_rfc3339(1_709_222_400_000),
            "2024-03-01T00:00:00+08:00"
        );
        assert_eq!(format_rfc3339(-DAY_MS), "1969-12-31T08:00:00+08:00");
    }

    #[test]
    fn days_left_counts_started_days() {
        assert_eq!(days_left(0, 4 * DAY_MS), 4);
        assert_eq!(days_left(1, 4 * DAY_MS), 4);
        assert_eq!(days_left(0, 3 * DAY_MS + 1), 4);
        assert_eq!(days_left(4 * DAY_MS, 4 * DAY_MS), 0);
        assert_eq!(days_left(5 * DAY_MS, 4 * DAY_MS), 0);
    }

    #[test]
    fn fixed_clock_moves_only_when_told() {
        let clock = FixedClock::new(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(DAY_MS);
        assert_eq!(clock.now_ms(), 1_000 + DAY_MS);
        clock.set(5);
        assert_eq!(clock.now_ms(), 5);
    }
}
