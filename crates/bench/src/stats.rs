//! Summaries of timed samples: median, 95th percentile, mean.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub median: Duration,
    pub p95: Duration,
    pub mean: Duration,
    pub max: Duration,
}

/// The sample at quantile `q` (nearest rank) of sorted samples.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn summarize(samples: &[Duration]) -> Summary {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let total: Duration = sorted.iter().sum();
    let count = sorted.len();
    Summary {
        count,
        median: quantile(&sorted, 0.5),
        p95: quantile(&sorted, 0.95),
        mean: if count == 0 {
            Duration::ZERO
        } else {
            total / u32::try_from(count).unwrap_or(u32::MAX)
        },
        max: sorted.last().copied().unwrap_or(Duration::ZERO),
    }
}

/// Milliseconds with three decimals, e.g. `0.412 ms`.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

impl Summary {
    /// `median 0.412 ms, p95 0.630 ms`.
    pub fn median_p95(&self) -> String {
        format!("median {}, p95 {}", ms(self.median), ms(self.p95))
    }
}

/// Signed difference in a duration, floored at zero (a remainder can
/// come out a few microseconds negative from clock granularity).
pub fn remainder(total: Duration, parts: &[Duration]) -> Duration {
    let used: Duration = parts.iter().sum();
    total.saturating_sub(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p95_are_nearest_ranks() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let s = summarize(&samples);
        assert_eq!(s.median, Duration::from_millis(50));
        assert_eq!(s.p95, Duration::from_millis(95));
        assert_eq!(s.max, Duration::from_millis(100));
        assert_eq!(s.count, 100);
    }

    #[test]
    fn no_samples_give_zeros() {
        assert_eq!(summarize(&[]).median, Duration::ZERO);
    }
}
