//! The test binary's PostgreSQL cluster (`test_support::postgres`), with
//! its databases seeded as the shop seeds itself at [`T0`].

use std::sync::Arc;

use bitselect::{FixedClock, Shop};
pub use test_support::postgres::{Database, cluster};

use super::T0;

/// A new database holding the shop as seeded at [`T0`], dropped with the
/// value.
pub fn seeded_database() -> Database {
    cluster().seeded_database(|url| {
        let shop = Shop::open_postgres_with_clock(url, Arc::new(FixedClock::new(T0)))
            .expect("seed the template database");
        drop(shop);
    })
}
