//! Part 6 runs: the whole stack (PostgreSQL, the authorization server,
//! shop instances, HAProxy) started, shoppers signed in, every measurement
//! made and written, at the smallest size. No figure is judged: this is
//! no timed test.

mod support;

#[test]
fn the_service_part_runs_the_stack_and_writes_every_measurement() {
    let part = support::run_part(
        "shop-service",
        &[
            "shop-service",
            "--shoppers",
            "2",
            "--calls",
            "4",
            "--concurrency",
            "1,2",
            "--instances",
            "1,2",
            "--search-repeats",
            "2",
        ],
    );
    let value = |metric: &str| {
        part.rows
            .iter()
            .find(|row| row.metric == metric)
            .map(|row| row.value.clone())
            .unwrap_or_else(|| panic!("no row {metric:?} in {:#?}", part.rows))
    };
    for instances in ["1 instance", "2 instances"] {
        for shoppers in ["1 shopper", "2 shoppers"] {
            for read in [
                "search_product by keyword",
                "search_product by SKU code",
                "query_cart",
            ] {
                let figure = value(&format!("{instances}, {shoppers}: {read}"));
                assert!(figure.contains("calls/s; p50 "), "{figure}");
            }
        }
        assert!(value(&format!("{instances}: CPU per 1,000 calls")).contains("PostgreSQL"));
        assert!(
            value(&format!(
                "{instances}: RSS per instance, started -> after the calls"
            ))
            .contains("MiB")
        );
    }
    // The goals' reads again on one instance, each call on a new
    // connection as the shoppers of the report the goals compare with.
    for read in ["search_product by keyword", "query_cart"] {
        let figure = value(&format!(
            "1 instance, 2 shoppers, a connection a call, as in the report of 2026-12-02: {read}"
        ));
        assert!(figure.contains("calls/s; p50 "), "{figure}");
    }
    assert!(
        value("2 shoppers, query_cart: throughput gained per added instance").ends_with("calls/s")
    );
    for store in ["SQLite", "PostgreSQL"] {
        let figure = value(&format!(
            "{store}, keyword “iPhone 17” beside a lookup by SKU code"
        ));
        assert!(figure.contains(" vs "), "{figure}");
    }
    assert_eq!(value("shoppers signed in"), "2");
}
