//! PostgreSQL restarted while shoppers order through two shop instances
//! behind HAProxy:
//! the instances carry on without a restart of their own, a call in flight
//! fails cleanly (`UNAVAILABLE`, never half-done), and every order sent
//! again with its key is placed exactly once. The test binary has its own
//! cluster, so restarting it disturbs no other test.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

use support::IPHONE_17;
use support::client::{add_to_cart, http_client};
use support::ordering::{Outcome, order_until_answered, order_until_answered_saying_why};
use support::postgres::cluster;
use support::stack::Stack;
use test_support::sign_in::sign_in;

const SHOPPERS: usize = 8;
/// Each shopper's cart: one iPhone 17 per order they may place.
const IN_CART: i64 = 60;
const STOCK: i64 = 1_000;
/// Orders each shopper places after the database is back, at least.
const AFTER_RESTART: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_restarted_under_load_fails_calls_cleanly_and_each_order_sent_again_is_placed_once()
 {
    let mut stack = Stack::start(2, STOCK).await;
    let (lb, pg) = (stack.lb, cluster());
    let (auth, resource, database) = (
        &stack.auth,
        stack.resource.clone(),
        stack.database.to_string(),
    );
    let instance_pids: Vec<Option<u32>> = stack.instances.iter().map(|i| i.pid()).collect();

    let mut tokens = BTreeMap::new();
    for n in 0..SHOPPERS {
        let token = sign_in(&auth.issuer, &format!("shopper-{n:02}"), &resource)
            .await
            .access_token;
        let client = http_client(lb, Some(&token)).await;
        add_to_cart(&client, IPHONE_17, IN_CART as u32).await;
        tokens.insert(n, token);
    }

    // Every shopper orders one at a time, each order with a key of its own,
    // until the database has been restarted and they placed a few more.
    let restarted = Arc::new(AtomicBool::new(false));
    let placed_so_far = Arc::new(AtomicUsize::new(0));
    let under_load = Arc::new(Notify::new());
    let mut ordering = tokio::task::JoinSet::new();
    for (&n, token) in &tokens {
        let (token, restarted, placed_so_far, under_load) = (
            token.clone(),
            restarted.clone(),
            placed_so_far.clone(),
            under_load.clone(),
        );
        ordering.spawn(async move {
            let mut placed = Vec::new();
            let mut repeated_for = Vec::new();
            let mut after_restart = 0;
            for order in 0..IN_CART {
                let key = format!("shopper-{n}-order-{order}");
                let back = restarted.load(Ordering::SeqCst);
                let (outcome, why) = order_until_answered_saying_why(lb, &token, &key).await;
                match outcome {
                    Outcome::Placed { order_no, .. } => placed.push((key, order_no)),
                    refused => panic!("order {key} was refused: {refused:?}"),
                }
                repeated_for.extend(why);
                if placed_so_far.fetch_add(1, Ordering::SeqCst) + 1 == 2 * SHOPPERS {
                    under_load.notify_one();
                }
                if back {
                    after_restart += 1;
                    if after_restart == AFTER_RESTART {
                        break;
                    }
                }
            }
            assert_eq!(after_restart, AFTER_RESTART, "shopper {n} ran out of cart");
            (n, placed, repeated_for)
        });
    }

    // Under load: once two orders a shopper are in, restart the database.
    under_load.notified().await;
    let postmaster = pg.server_pid();
    tokio::task::spawn_blocking(|| cluster().restart())
        .await
        .expect("restarted");
    assert_ne!(pg.server_pid(), postmaster, "a new server process");
    restarted.store(true, Ordering::SeqCst);
    let shoppers = ordering.join_all().await;

    // The restart was felt, and felt cleanly: a lost answer or UNAVAILABLE,
    // never a failure inside the shop.
    let repeated: Vec<&String> = shoppers.iter().flat_map(|(_, _, why)| why).collect();
    eprintln!("orders sent again: {}: {repeated:?}", repeated.len());
    assert!(!repeated.is_empty(), "no call met the restart");
    for why in &repeated {
        assert!(
            why.starts_with("UNAVAILABLE")
                || why.starts_with("the answer was lost")
                || why.starts_with("connecting"),
            "{why}"
        );
    }

    // The instances were never restarted: the same processes, still serving.
    for (instance, pid) in stack.instances.iter_mut().zip(&instance_pids) {
        assert_eq!(&instance.pid(), pid);
        assert!(instance.child.try_wait().expect("status").is_none());
    }

    // Exactly once: every order a shopper was told of is stored, once, with
    // the cart and the stock down by as many; nothing half-applied.
    let told: BTreeSet<String> = shoppers
        .iter()
        .flat_map(|(_, placed, _)| placed.iter().map(|(_, order_no)| order_no.clone()))
        .collect();
    let told_count: usize = shoppers.iter().map(|(_, placed, _)| placed.len()).sum();
    assert_eq!(told.len(), told_count, "no two orders told alike");
    let stored: BTreeSet<String> = pg
        .psql(
            &database,
            "SELECT o.order_no FROM orders o JOIN users u ON u.id = o.user_id
             WHERE u.sub LIKE 'shopper-%'",
        )
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(stored, told);
    assert_eq!(
        pg.psql(
            &database,
            &format!("SELECT stock FROM sku WHERE sku_code = '{IPHONE_17}'")
        ),
        (STOCK - told_count as i64).to_string()
    );
    for (n, placed, _) in &shoppers {
        let in_cart = pg.psql(
            &database,
            &format!(
                "SELECT c.quantity FROM cart_item c JOIN users u ON u.id = c.user_id
                 WHERE u.sub = 'shopper-{n:02}' AND c.sku_code = '{IPHONE_17}'"
            ),
        );
        assert_eq!(in_cart, (IN_CART - placed.len() as i64).to_string());
    }

    // Each key sent again answers its first order and changes nothing.
    for (n, placed, _) in &shoppers {
        let (key, order_no) = placed.last().expect("an order");
        let again = order_until_answered(lb, &tokens[n], key).await;
        assert!(
            matches!(&again, Outcome::Placed { order_no: same, .. } if same == order_no),
            "{again:?}"
        );
    }
    assert_eq!(
        pg.psql(
            &database,
            "SELECT count(*) FROM orders o JOIN users u ON u.id = o.user_id
             WHERE u.sub LIKE 'shopper-%'"
        ),
        told_count.to_string()
    );
}
