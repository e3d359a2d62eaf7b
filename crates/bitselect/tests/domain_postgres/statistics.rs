//! PostgreSQL plans a statement from its tables' statistics, which its
//! autovacuum gathers only some time after a bulk load. The shop gathers
//! them itself once it has seeded a new database, so that its first calls
//! read SKUs through their indexes rather than the whole table.

use std::sync::Arc;

use bitselect::{FixedClock, Shop};

use crate::support::*;

/// How many rows the planner believes `table` holds, and how many it holds.
fn believed_and_held(database: &str, table: &str) -> (i64, i64) {
    let believed = postgres::cluster().psql(
        database,
        &format!("SELECT reltuples::bigint FROM pg_class WHERE relname = '{table}'"),
    );
    let held = postgres::cluster().psql(database, &format!("SELECT count(*) FROM {table}"));
    (believed.parse().unwrap(), held.parse().unwrap())
}

/// A shop opened on a new, empty database: it seeds it.
fn shop_seeding_a_new_database() -> (postgres::Database, Shop) {
    let database = postgres::cluster().empty_database();
    let url = postgres::cluster().url(&database);
    let shop = Shop::open_postgres_with_clock(&url, Arc::new(FixedClock::new(T0))).unwrap();
    (database, shop)
}

#[test]
fn a_shop_seeding_a_new_database_leaves_the_planner_knowing_its_skus() {
    let (database, _shop) = shop_seeding_a_new_database();

    let (believed, held) = believed_and_held(&database, "sku");
    assert!(held > 1000, "the catalogue was seeded: {held} SKUs");
    assert_eq!(believed, held, "the planner counts the seeded SKUs");
}

#[test]
fn load_test_users_are_counted_once_made() {
    let (database, shop) = shop_seeding_a_new_database();

    shop.seed_users(40).unwrap();

    let (believed, held) = believed_and_held(&database, "cart_item");
    assert!(held >= 120, "each user has cart lines: {held}");
    assert_eq!(believed, held, "the planner counts the users' cart lines");
}
