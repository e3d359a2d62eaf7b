//! The store's connections to PostgreSQL wait in a pool between calls, and
//! the server may end one meanwhile (a restart, an administrator, an idle
//! timeout). Such a connection is never handed to a call: the call opens a
//! new one and succeeds.

use std::sync::Arc;

use bitselect::{FixedClock, Shop};

use crate::support::*;

#[test]
fn a_connection_the_server_ended_while_it_waited_in_the_pool_fails_no_call() {
    let database = postgres::seeded_database();
    let url = postgres::cluster().url(&database);
    let shop = Shop::open_postgres_with_clock(&url, Arc::new(FixedClock::new(T0))).unwrap();
    let before = stock(&shop, IPHONE_17);

    // Every connection of the shop's pool, ended by the server; each
    // termination waited for. Only clients: an autovacuum worker may be
    // at work on the database too.
    let ended = postgres::cluster().psql(
        &database,
        "WITH shop AS MATERIALIZED (
             SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND backend_type = 'client backend'
         )
         SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM shop",
    );
    assert_ne!(ended, "0", "the shop's idle connection was ended");

    for _ in 0..3 {
        assert_eq!(
            stock(&shop, IPHONE_17),
            before,
            "the read after it succeeds"
        );
    }
    let open = postgres::cluster().psql(
        &database,
        "SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND backend_type = 'client backend'",
    );
    assert_eq!(open, "1", "one new connection served the reads");
}
