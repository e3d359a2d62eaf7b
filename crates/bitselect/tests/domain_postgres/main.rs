//! The domain tests of `tests/domain`, the same bodies, each on a
//! PostgreSQL database of its own in a cluster this binary starts (see
//! `support/postgres.rs`). PostgreSQL missing fails them, naming
//! scripts/setup.

#[path = "../support/mod.rs"]
mod store_support;

/// The domain tests' support, with every shop opened on PostgreSQL.
mod support {
    pub use crate::store_support::*;

    pub fn open_shop() -> TestShop {
        open_shop_on(TestStore::Postgres)
    }
}

#[path = "../domain/addresses.rs"]
mod addresses;
#[path = "../domain/after_sale.rs"]
mod after_sale;
#[path = "../domain/cart.rs"]
mod cart;
#[path = "../domain/catalog.rs"]
mod catalog;
#[path = "../domain/checkout.rs"]
mod checkout;
#[path = "../domain/complete.rs"]
mod complete;
#[path = "../domain/coupons.rs"]
mod coupons;
#[path = "../domain/devices.rs"]
mod devices;
#[path = "../domain/idempotency.rs"]
mod idempotency;
#[path = "../domain/logistics.rs"]
mod logistics;
#[path = "../domain/money.rs"]
mod money;
#[path = "../domain/order_changes.rs"]
mod order_changes;
#[path = "../domain/order_events.rs"]
mod order_events;
#[path = "../domain/orders.rs"]
mod orders;
#[path = "../domain/previews.rs"]
mod previews;
#[path = "../domain/relevance.rs"]
mod relevance;
#[path = "../domain/seed.rs"]
mod seed;
#[path = "../domain/signing.rs"]
mod signing;
#[path = "../domain/tickets.rs"]
mod tickets;
// Only here: the pool of PostgreSQL connections.
mod connections;
// Only here: it reads both stores.
mod schemas;
// Only here: PostgreSQL's own planner.
mod statistics;
