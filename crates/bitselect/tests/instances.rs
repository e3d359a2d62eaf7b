//! Several shop instances on one PostgreSQL database, behind HAProxy, each
//! request signed in with its shopper's token: the stack a merchant runs.
//! The test starts all of it on loopback ports (a private PostgreSQL
//! cluster, the authorization server, three `bitselect-mcp` processes and
//! HAProxy with a configuration written here) and stops it at the end.

mod support;

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use bitselect::Shop;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Barrier, mpsc};

use support::IPHONE_17;
use support::asking::{
    Shows, answered, asked, call_once, completed, http_modern, keyed_request, question,
};
use support::client::{add_to_cart, http_client, text};
use support::oauth::AuthServer;
use support::ordering::{Outcome, order_until_answered};
use support::postgres::cluster;
use support::shop_process::{spawn_shop, start_instance};
use support::stack::Stack;
use test_support::ports::HeldPort;
use test_support::sign_in::sign_in;

const SHOPPERS: usize = 50;
const STOCK: i64 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_shoppers_over_three_instances_buy_exactly_the_five_in_stock_though_one_instance_is_killed()
 {
    // The whole stack lives as long as `stack`.
    let mut stack = Stack::start(3, STOCK).await;
    let (database, lb, resource) = (stack.database.to_string(), stack.lb, stack.resource.clone());
    let (auth, instances) = (&stack.auth, &mut stack.instances);
    let pg = cluster();

    // Each shopper signs in and puts one iPhone 17 in their cart.
    let mut signing_in = tokio::task::JoinSet::new();
    for n in 1..=SHOPPERS {
        let (issuer, resource) = (auth.issuer.clone(), resource.clone());
        signing_in.spawn(async move {
            let token = sign_in(&issuer, &format!("shopper-{n:02}"), &resource)
                .await
                .access_token;
            let client = http_client(lb, Some(&token)).await;
            add_to_cart(&client, IPHONE_17, 1).await;
            (n, token)
        });
    }
    let shoppers = signing_in.join_all().await;
    let tokens: std::collections::BTreeMap<usize, String> = shoppers.iter().cloned().collect();

    // All order at once; the first answer is the moment to kill an instance.
    let start = Arc::new(Barrier::new(SHOPPERS + 1));
    let (answered, mut answers) = mpsc::unbounded_channel();
    let mut ordering = tokio::task::JoinSet::new();
    for (n, token) in shoppers {
        let (start, answered) = (start.clone(), answered.clone());
        ordering.spawn(async move {
            start.wait().await;
            let outcome = order_until_answered(lb, &token, &format!("order-of-shopper-{n}")).await;
            let _ = answered.send(());
            (n, outcome)
        });
    }
    start.wait().await;
    answers.recv().await.expect("a first answer");
    let killed = &mut instances[1];
    killed.child.start_kill().expect("SIGKILL instance 2");
    killed.child.wait().await.expect("instance 2 exited");
    let outcomes = ordering.join_all().await;

    let placed: Vec<(&String, usize)> = outcomes
        .iter()
        .filter_map(|(_, outcome)| match outcome {
            Outcome::Placed { order_no, attempts } => Some((order_no, *attempts)),
            Outcome::Refused { .. } => None,
        })
        .collect();
    let refused: Vec<(&String, &String)> = outcomes
        .iter()
        .filter_map(|(_, outcome)| match outcome {
            Outcome::Refused { code, message, .. } => Some((code, message)),
            Outcome::Placed { .. } => None,
        })
        .collect();
    let resent = outcomes
        .iter()
        .filter(|(_, o)| {
            matches!(o, Outcome::Placed { attempts, .. } | Outcome::Refused { attempts, .. } if *attempts > 1)
        })
        .count();
    eprintln!(
        "placed {placed:?}; shoppers who sent their order again after a lost answer: {resent}"
    );
    assert_eq!(placed.len(), STOCK as usize, "exactly the stock is sold");
    assert_eq!(refused.len(), SHOPPERS - STOCK as usize);
    for (code, message) in &refused {
        assert_eq!(code.as_str(), "OUT_OF_STOCK", "{message}");
        assert!(message.contains("暂时无货"), "{message}");
    }

    // Each placed order's key sent again, to whichever instance is left,
    // returns the first result and changes nothing.
    for (n, outcome) in &outcomes {
        if let Outcome::Placed { order_no, .. } = outcome {
            let token = &tokens[n];
            let again = order_until_answered(lb, token, &format!("order-of-shopper-{n}")).await;
            match again {
                Outcome::Placed { order_no: same, .. } => assert_eq!(&same, order_no),
                other => panic!("the repeat of {order_no} answered {other:?}"),
            }
        }
    }

    // The database agrees: five orders, one per shopper who was told of one,
    // none lost or made twice, and no stock left.
    let stored: BTreeSet<String> = pg
        .psql(
            &database,
            "SELECT o.order_no FROM orders o JOIN users u ON u.id = o.user_id
             WHERE u.sub LIKE 'shopper-%' ORDER BY 1",
        )
        .lines()
        .map(str::to_owned)
        .collect();
    let told: BTreeSet<String> = placed.iter().map(|(no, _)| (*no).clone()).collect();
    assert_eq!(stored, told);
    assert_eq!(
        pg.psql(
            &database,
            &format!("SELECT stock FROM sku WHERE sku_code = '{IPHONE_17}'")
        ),
        "0"
    );
    assert_eq!(
        pg.psql(
            &database,
            "SELECT count(*) FROM idempotency i JOIN users u ON u.id = i.user_id
             WHERE u.sub LIKE 'shopper-%'"
        ),
        STOCK.to_string(),
        "one stored result per placed order; a refusal stores none"
    );
}

/// SIGTERM to a running process, as a service manager stops it.
fn send_sigterm(child: &Child) {
    let pid = child.id().expect("running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("run kill");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_an_instance_cleanly_after_answering() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut child, addr, mut lines) =
        spawn_shop(&["--data-dir".as_ref(), dir.path().as_os_str()]).await;
    let client = http_client(addr, None).await;
    add_to_cart(&client, IPHONE_17, 1).await;

    send_sigterm(&child);
    let mut said = Vec::new();
    while let Some(line) = lines.next_line().await.expect("read stderr") {
        said.push(line);
    }
    let exit = child.wait().await.expect("it exits");
    assert!(exit.success(), "{exit:?}: {said:?}");
    assert!(
        said.iter()
            .any(|line| line.contains("shutting down") && line.contains("SIGTERM")),
        "{said:?}"
    );
    // One line for the call, the shop's own; the MCP library's
    // per-request lines (a session made and ended for every stateless
    // request) stay out of a merchant's log unless asked for.
    let calls: Vec<&String> = said
        .iter()
        .filter(|line| line.contains("tool call"))
        .collect();
    assert_eq!(calls.len(), 1, "{said:?}");
    assert!(calls[0].contains("update_cart_item"), "{said:?}");
    assert!(!said.iter().any(|line| line.contains("rmcp")), "{said:?}");
}

#[test]
fn two_instances_racing_with_one_idempotency_key_place_one_order() {
    let database = support::postgres::seeded_database();
    let url = cluster().url(&database);
    let clock = Arc::new(bitselect::FixedClock::new(support::T0));
    let open = || Shop::open_postgres_with_clock(&url, clock.clone()).expect("open on PostgreSQL");
    let (first, second) = (open(), open());
    first
        .update_cart_item(&support::add(IPHONE_17, 1), None)
        .expect("one in the cart");
    let order = support::order(&[(IPHONE_17, 1)]);
    for round in 0..10 {
        let key = format!("the-same-order-{round}");
        let racing = std::sync::Barrier::new(2);
        let run = |shop: &Shop| {
            racing.wait();
            shop.create_order(&order, Some(&key))
        };
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| run(&first));
            let b = scope.spawn(|| run(&second));
            (a.join().expect("no panic"), b.join().expect("no panic"))
        });
        let (a, b) = (a.expect("an answer"), b.expect("an answer"));
        assert_eq!(a.value.order_no, b.value.order_no, "round {round}");
        assert!(a.replayed != b.replayed, "one placed it, one replayed it");
        // Cancel it (stock and cart line come back) for the next round.
        first
            .cancel_order(
                &bitselect::params::CancelOrderParams {
                    order_no: a.value.order_no.clone(),
                    reason: None,
                },
                None,
            )
            .expect("cancel");
        first
            .update_cart_item(&support::add(IPHONE_17, 1), None)
            .expect("back in the cart");
    }
    let orders = cluster().psql(
        &database,
        "SELECT count(*) FROM orders WHERE user_id = 1 AND order_no > '88238'",
    );
    assert_eq!(orders, "10", "one order per key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_call_answers_it_refuses_new_connections_and_exits_0() {
    let database = tokio::task::spawn_blocking(support::postgres::seeded_database)
        .await
        .expect("a seeded database");
    let pg = cluster();
    let url = pg.url(&database);
    let (mut child, addr, mut lines) = spawn_shop(&["--database-url".as_ref(), url.as_ref()]).await;
    let client = http_client(addr, None).await;

    // A psql session holds the cart locked, so the next cart write waits.
    let mut holder = Command::new(pg.psql_binary())
        .args(["-X", "-q", "-t", "-A", "-d", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start psql");
    let mut holder_in = holder.stdin.take().expect("piped stdin");
    let mut holder_out = BufReader::new(holder.stdout.take().expect("piped stdout")).lines();
    holder_in
        .write_all(b"BEGIN; LOCK TABLE cart_item IN ACCESS EXCLUSIVE MODE; SELECT 'locked';\n")
        .await
        .expect("send the lock");
    assert_eq!(
        holder_out
            .next_line()
            .await
            .expect("psql answers")
            .as_deref(),
        Some("locked")
    );

    let in_flight = tokio::spawn(async move {
        let answer = support::client::call(
            &client,
            "update_cart_item",
            json!({"skuCode": IPHONE_17, "action": "add", "quantity": 1}),
        )
        .await;
        (client, answer)
    });
    // The call is in flight once the shop's session waits on the lock:
    // PostgreSQL shows that only when asked.
    let waiting = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = '{database}' AND wait_event_type = 'Lock'"
    );
    let mut seen_waiting = false;
    for _ in 0..400 {
        let (pg, waiting) = (cluster(), waiting.clone());
        let count = tokio::task::spawn_blocking(move || pg.psql("postgres", &waiting))
            .await
            .expect("ask PostgreSQL");
        if count != "0" {
            seen_waiting = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(seen_waiting, "the cart write never waited on the lock");

    send_sigterm(&child);
    let mut said = Vec::new();
    while let Some(line) = lines.next_line().await.expect("read stderr") {
        let stopping = line.contains("shutting down");
        said.push(line);
        if stopping {
            break;
        }
    }
    // The listener closes just after the signal is logged; the call still
    // waits on the lock meanwhile, so a refusal here is one made while a
    // call is in flight.
    let mut refused = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        refused,
        "new connections are refused once shutting down: {said:?}"
    );
    assert!(!in_flight.is_finished(), "the call was still in flight");

    holder_in
        .write_all(b"COMMIT;\n")
        .await
        .expect("release the lock");
    drop(holder_in);
    let (_client, answer) = in_flight.await.expect("the call's task");
    assert_eq!(answer.is_error, Some(false), "{}", text(&answer));
    while let Some(line) = lines.next_line().await.expect("read stderr") {
        said.push(line);
    }
    let exit = child.wait().await.expect("it exits");
    assert!(exit.success(), "{exit:?}: {said:?}");
    let _ = holder.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_instance_serves_the_payment_page_and_pays_the_call_sent_back_from_it() {
    let database = tokio::task::spawn_blocking(support::postgres::seeded_database)
        .await
        .expect("a seeded database");
    let pg = cluster();
    let database_url = pg.url(&database);
    // The public origin is the balancer's; each request below goes to
    // another instance, as a balancer may send them.
    let lb_port = HeldPort::bind();
    let origin = format!("http://{}", lb_port.addr());
    let resource = format!("{origin}{}", bitselect::MCP_PATH);
    let auth = AuthServer::start(&[&resource], 600).await;
    let mut instances = Vec::new();
    for _ in 0..3 {
        instances.push(start_instance(&database_url, &auth.issuer, &resource).await);
    }
    let (a, b, c) = (instances[0].addr, instances[1].addr, instances[2].addr);
    let token = sign_in(&auth.issuer, "page-shopper", &resource)
        .await
        .access_token;

    let shopper = http_client(a, Some(&token)).await;
    add_to_cart(&shopper, IPHONE_17, 1).await;
    let placed = support::client::call(
        &shopper,
        "create_order",
        json!({
            "items": [{"skuCode": IPHONE_17, "quantity": 1}],
            "receiverName": "李雷", "receiverPhone": "13700137000",
            "receiverAddress": "北京市海淀区中关村大街 1 号"
        }),
    )
    .await;
    let order_no = support::client::ok(&placed)["orderNo"]
        .as_str()
        .expect("an order number")
        .to_owned();

    // Instance A opens the page.
    let on_a = http_modern(a, Some(&token), Shows::FormsAndPages).await;
    let pay = keyed_request("pay_order", json!({"orderNo": order_no}), "pay-1");
    let sent = asked(call_once(&on_a, pay.clone()).await);
    let url = question(&sent, "confirm_payment")["url"]
        .as_str()
        .expect("a page")
        .to_owned();
    let path = url
        .strip_prefix(&origin)
        .unwrap_or_else(|| panic!("the page is at the public origin: {url}"));

    // Instance B shows it, instance C takes the press of "pay".
    let page = reqwest::get(format!("http://{b}{path}")).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains(&order_no));
    let pressed = reqwest::Client::new()
        .post(format!("http://{c}{path}"))
        .send()
        .await
        .unwrap();
    assert_eq!(pressed.status(), 200);

    // Instance B answers the call sent back.
    let on_b = http_modern(b, Some(&token), Shows::FormsAndPages).await;
    let back = answered(&pay, &sent, "confirm_payment", json!({"action": "accept"}));
    let paid = completed(call_once(&on_b, back).await);
    assert_eq!(
        support::client::ok(&paid)["order"]["status"],
        "已支付待发货"
    );
    let stored = pg.psql(
        &database,
        &format!("SELECT status FROM orders WHERE order_no = '{order_no}'"),
    );
    assert_eq!(stored, "已支付待发货");
}

/// Reads sent to one instance at once, more than it runs and queues.
const BURST: usize = 120;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_instance_on_a_slow_database_sheds_load_clearly_and_haproxy_takes_it_out_and_back() {
    let slow_link = test_support::slow_link::SlowLink::to_unix_socket(cluster().socket()).await;
    let slow_addr = slow_link.addr();
    // Instance 1 reaches the database through the slow link, instance 2
    // directly.
    let stack = Stack::start_each(10, |database| {
        vec![
            cluster().url_through(slow_addr, database),
            cluster().url(database),
        ]
    })
    .await;
    stack.balancer.until(1, true, Duration::from_secs(10)).await;
    stack.balancer.until(2, true, Duration::from_secs(10)).await;
    let token = sign_in(&stack.auth.issuer, "patient-shopper", &stack.resource)
        .await
        .access_token;
    let slow = stack.instances[0].addr;
    // The shopper is known to the shop before the database slows down.
    let first = http_client(slow, Some(&token)).await;
    add_to_cart(&first, IPHONE_17, 1).await;

    // A second per answer: a read takes some nine seconds, so none is done
    // before all have arrived, however busy the machine.
    slow_link.set_delay(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..BURST {
        let token = token.clone();
        burst.spawn(async move {
            let client = http_client(slow, Some(&token)).await;
            let sent = std::time::Instant::now();
            let result = support::client::call(&client, "query_cart", json!({})).await;
            let code = result
                .structured_content
                .as_ref()
                .and_then(|s| s["error"]["code"].as_str().map(str::to_owned));
            (code, text(&result), sent.elapsed())
        });
    }
    // While it sheds, HAProxy's health check takes it out; the other
    // instance serves what comes through the balancer meanwhile.
    stack
        .balancer
        .until(1, false, Duration::from_secs(10))
        .await;
    let through = http_client(stack.lb, Some(&token)).await;
    let served = std::time::Instant::now();
    for _ in 0..5 {
        let cart = support::client::call(&through, "query_cart", json!({})).await;
        assert_ne!(cart.is_error, Some(true), "{}", text(&cart));
    }
    assert!(
        served.elapsed() < Duration::from_secs(2),
        "served by the fast instance: {:?}",
        served.elapsed()
    );
    let answers = burst.join_all().await;
    eprintln!("burst answered in {:?}", started.elapsed());

    // Every read was answered: done, or shed with a clear error. Past what
    // the instance runs and queues, reads were shed at once.
    let shed: Vec<&(Option<String>, String, Duration)> = answers
        .iter()
        .filter(|(code, _, _)| code.is_some())
        .collect();
    for (code, message, waited) in &shed {
        assert_eq!(code.as_deref(), Some("UNAVAILABLE"), "{message}");
        assert!(message.contains("商城繁忙"), "{message}");
        // At once, or after the 5 s a call waits for a connection at most.
        assert!(*waited < Duration::from_secs(12), "shed after {waited:?}");
    }
    let at_once = shed
        .iter()
        .filter(|(_, _, waited)| *waited < Duration::from_secs(2))
        .count();
    assert!(
        at_once >= BURST - bitselect::POOL_CONNECTIONS - bitselect::MAX_WAITING_CALLS,
        "at most a pool and a queue's worth waited: {at_once} of {BURST} shed at once"
    );

    // The database is quick again: the instance stops shedding and HAProxy
    // puts it back.
    slow_link.set_delay(Duration::ZERO);
    stack.balancer.until(1, true, Duration::from_secs(10)).await;
    let cart = support::client::call(
        &http_client(slow, Some(&token)).await,
        "query_cart",
        json!({}),
    )
    .await;
    assert_ne!(cart.is_error, Some(true), "{}", text(&cart));
}
