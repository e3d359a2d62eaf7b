//! One seed for the property tests, printed, so a failure anywhere (on CI
//! too) can be replayed exactly: `PROPTEST_RNG_SEED=<the printed seed>`.
//! Without it every run uses the same fixed seed; `PROPTEST_NEW_SEED=1`
//! asks for a fresh one, printed the same way.

use proptest::test_runner::{Config, RngSeed};

/// The seed every run uses unless told otherwise.
pub const FIXED_SEED: u64 = 20_261_204;

/// The seed for this run, printed with how to replay it (the test harness
/// shows it when a test fails).
pub fn replayable_seed() -> u64 {
    let asked = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|seed| seed.trim().parse().ok());
    let fresh = std::env::var_os("PROPTEST_NEW_SEED").is_some_and(|v| v == "1");
    let seed = match asked {
        Some(seed) => seed,
        None if fresh => fresh_seed(),
        None => FIXED_SEED,
    };
    eprintln!("proptest seed {seed}: replay with PROPTEST_RNG_SEED={seed}");
    seed
}

/// A proptest configuration on [`replayable_seed`], with nothing written
/// beside the sources (the printed seed is what replays a failure).
pub fn replayable(config: Config) -> Config {
    Config {
        rng_seed: RngSeed::Fixed(replayable_seed()),
        failure_persistence: None,
        ..config
    }
}

/// The cases per property: `PROPTEST_CASES` when set (the long fuzz runs
/// set it), else `default`.
pub fn cases_or(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.trim().parse().ok())
        .unwrap_or(default)
}

fn fresh_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // The low bits of the clock, mixed with the process id: new each run.
    (now.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32)
}
