//! Users and isolation, through the MCP tools: each server acts for one
//! user, another user's order, parcel, after-sale or coupon answers exactly as
//! one that does not exist and is left as it was, idempotency keys are each
//! user's own, and stock is shared.
//!
//! User B is the demo user (the seed's orders, parcels, after-sales and
//! coupons); user A is the load-test user `load-00001`.

mod support;

use std::net::SocketAddr;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use bitselect::load_users::{load_coupon, load_sub};
use bitselect::{Callers, Shop, Subject, http_service, serve_http};
use pretty_assertions::assert_eq;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use serde_json::{Value, json};
use support::client::*;
use support::isolation::{answers_as_missing, dump};
use support::*;
use tokio_util::sync::CancellationToken;

/// B's pending order, a delivered one (with parcel and after-sales), and a
/// shipped one.
const B_PENDING: &str = "88236";
const B_DELIVERED: &str = "88231";
const B_SHIPPED: &str = "88234";
const B_TRACKING: &str = "BIT9100000231";
const B_AFTER_SALE: &str = "AS88232001";
const B_AFTER_SALE_ORDER: &str = "88232";
const B_COUPON: &str = "SHOP-5000-300";

/// A shop with load-test users, and A's handle on it.
fn shop_with_user_a() -> (TestShop, Shop) {
    let t = open_shop();
    t.shop.seed_users(2).unwrap();
    let a = t.shop.find_user(&load_sub(1)).unwrap().expect("user A");
    let shop_a = t.shop.acting_for(a);
    (t, shop_a)
}

/// An order of A's, who has no earlier order to take the receiver from.
fn order_by_a(sku: &str, quantity: u32, coupon: Option<&str>) -> Value {
    let mut order = json!({"items": [{"skuCode": sku, "quantity": quantity}],
                           "receiverName": "王五", "receiverPhone": "13900139000",
                           "receiverAddress": "上海市浦东新区世纪大道 100 号"});
    if let Some(code) = coupon {
        order["couponCode"] = json!(code);
    }
    order
}

#[tokio::test]
async fn another_users_orders_parcels_and_after_sales_answer_as_missing_and_stay_as_they_were() {
    let (t, shop_a) = shop_with_user_a();
    let a = connect(shop_a).await;
    let before = dump(&t.shop);

    let pending_tools = [
        "query_order",
        "pay_order",
        "preview_pay_order",
        "cancel_order",
        "preview_cancel_order",
    ];
    for tool in pending_tools {
        let arguments = json!({"orderNo": B_PENDING});
        answers_as_missing(&a, tool, arguments, B_PENDING, "99236").await;
    }
    let delivered = json!({"orderNo": B_DELIVERED});
    let receiver = json!({"orderNo": B_PENDING, "receiverName": "李四"});
    let after_sale = json!({"orderNo": B_DELIVERED, "skuCode": IPHONE_17, "type": "换货",
                            "reason": "屏幕有坏点，想换一台"});
    let ticket = json!({"orderNo": B_PENDING, "description": "这个订单一直没有发货"});
    let tracking = json!({"trackingNo": B_TRACKING});
    let shipped = json!({"orderNo": B_SHIPPED});
    let after_sale_no = json!({"afterSaleNo": B_AFTER_SALE});
    let after_sale_order = json!({"orderNo": B_AFTER_SALE_ORDER});
    let cases = [
        ("query_order", delivered, B_DELIVERED, "99231"),
        ("change_address", receiver.clone(), B_PENDING, "99236"),
        ("preview_change_address", receiver, B_PENDING, "99236"),
        ("apply_after_sale", after_sale.clone(), B_DELIVERED, "99231"),
        ("preview_apply_after_sale", after_sale, B_DELIVERED, "99231"),
        ("query_logistics", tracking, B_TRACKING, "BIT9199999231"),
        ("query_logistics", shipped, B_SHIPPED, "99234"),
        (
            "query_after_sale",
            after_sale_no,
            B_AFTER_SALE,
            "AS99232001",
        ),
        (
            "query_after_sale",
            after_sale_order,
            B_AFTER_SALE_ORDER,
            "99232",
        ),
        ("submit_ticket", ticket, B_PENDING, "99236"),
    ];
    for (tool, arguments, theirs, missing) in cases {
        answers_as_missing(&a, tool, arguments, theirs, missing).await;
    }
    assert_eq!(
        dump(&t.shop),
        before,
        "nothing of B's, or anyone's, changed"
    );

    // B still sees and acts on their own order.
    let b = connect(t.shop.clone()).await;
    let paid = call(&b, "pay_order", json!({"orderNo": B_PENDING})).await;
    assert_eq!(ok(&paid)["order"]["status"], "已支付待发货");
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test]
async fn another_users_coupon_answers_as_missing_and_stays_unused() {
    let (t, shop_a) = shop_with_user_a();
    let a = connect(shop_a).await;
    add_to_cart(&a, IPHONE_17, 1).await;
    let before = dump(&t.shop);

    let order = order_by_a(IPHONE_17, 1, Some(B_COUPON));
    for tool in ["create_order", "preview_create_order"] {
        answers_as_missing(&a, tool, order.clone(), B_COUPON, "SHOP-5999-399").await;
    }
    assert_eq!(dump(&t.shop), before);
    assert_eq!(
        coupon_status(&t.shop, B_COUPON),
        ("未使用".to_owned(), None),
        "B's coupon is B's, unused"
    );

    // A's own coupon works for A, and B cannot use it.
    let own = order_by_a(IPHONE_17, 1, Some(load_coupon(1).as_str()));
    let b = connect(t.shop.clone()).await;
    let by_b = call(&b, "preview_create_order", own.clone()).await;
    let warned: Vec<&Value> = ok(&by_b)["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["code"])
        .collect();
    assert!(warned.contains(&&json!("COUPON_NOT_HELD")), "{warned:?}");
    let placed = call(&a, "create_order", own).await;
    assert_eq!(ok(&placed)["discountAmountFen"], 5000);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test]
async fn a_user_lists_only_their_own_cart_coupons_orders_and_after_sales() {
    let (t, shop_a) = shop_with_user_a();
    let a = connect(shop_a).await;

    let orders = call(&a, "query_order", json!({})).await;
    assert_eq!(ok(&orders)["matched"], 0);
    assert_eq!(ok(&orders)["orders"], json!([]));
    let after_sales = call(&a, "query_after_sale", json!({})).await;
    assert_eq!(ok(&after_sales)["afterSales"], json!([]));
    let coupons = call(&a, "query_coupons", json!({})).await;
    let codes: Vec<&Value> = ok(&coupons)["coupons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["code"])
        .collect();
    assert_eq!(codes, [&json!(load_coupon(1))]);
    let cart = call(&a, "query_cart", json!({})).await;
    let lines = ok(&cart)["lines"].as_array().unwrap().len();
    assert_eq!(lines, 3, "A's seeded lines, none of B's");

    let b_cart = t.shop.query_cart().unwrap();
    assert_eq!(b_cart.lines.len(), 5, "B's cart is the seed's");
    a.cancel().await.unwrap();
}

#[tokio::test]
async fn the_same_idempotency_key_from_two_users_gives_each_their_own_result() {
    let (t, shop_a) = shop_with_user_a();
    let a = connect(shop_a).await;
    let b = connect(t.shop.clone()).await;
    add_to_cart(&a, IPHONE_17, 1).await;
    add_to_cart(&b, IPHONE_17, 1).await;

    let for_a = order_by_a(IPHONE_17, 1, None);
    let for_b = json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]});
    let key = json!("call_same");
    let placed_a = call_keyed(&a, "create_order", for_a.clone(), key.clone()).await;
    let placed_b = call_keyed(&b, "create_order", for_b.clone(), key.clone()).await;
    let (no_a, no_b) = (
        ok(&placed_a)["orderNo"].clone(),
        ok(&placed_b)["orderNo"].clone(),
    );
    assert_ne!(no_a, no_b, "two orders, one each");
    assert_eq!(ok(&placed_a)["receiver"]["name"], "王五");
    assert_eq!(ok(&placed_b)["receiver"]["name"], "张明");

    // Each user's repeat returns their own first result.
    let again_a = call_keyed(&a, "create_order", for_a, key.clone()).await;
    let again_b = call_keyed(&b, "create_order", for_b, key).await;
    assert_eq!(ok(&again_a)["orderNo"], no_a);
    assert_eq!(ok(&again_b)["orderNo"], no_b);
    assert_eq!(t.shop.stats().unwrap().orders, 8 + 2);
    assert_eq!(stock(&t.shop, IPHONE_17), 10 - 2);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test]
async fn stock_is_shared_so_what_one_user_buys_another_cannot() {
    let (t, shop_a) = shop_with_user_a();
    let a = connect(shop_a).await;
    let b = connect(t.shop.clone()).await;
    add_to_cart(&a, VISION_PRO_3_LEFT, 3).await;
    let bought = call(&a, "create_order", order_by_a(VISION_PRO_3_LEFT, 3, None)).await;
    ok(&bought);
    // B has one in the cart since the seed.
    let too_late = call(
        &b,
        "create_order",
        json!({"items": [{"skuCode": VISION_PRO_3_LEFT, "quantity": 1}]}),
    )
    .await;
    assert!(
        ["INSUFFICIENT_STOCK", "OUT_OF_STOCK"].contains(&refused(&too_late).as_str()),
        "{}",
        text(&too_late)
    );
    assert_eq!(stock(&t.shop, VISION_PRO_3_LEFT), 0);
    assert_eq!(
        cart_quantity(&t.shop, VISION_PRO_3_LEFT),
        1,
        "B's cart kept"
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test]
async fn users_ordering_the_last_units_at_once_never_oversell() {
    let t = open_shop();
    t.shop.seed_users(6).unwrap();
    let mut calls = tokio::task::JoinSet::new();
    for n in 1..=6 {
        let user = t.shop.find_user(&load_sub(n)).unwrap().unwrap();
        let shop = t.shop.acting_for(user);
        shop.update_cart_item(&add(VISION_PRO_3_LEFT, 2), None)
            .unwrap();
        let client = connect(shop).await;
        calls.spawn(async move {
            let result = call(
                &client,
                "create_order",
                order_by_a(VISION_PRO_3_LEFT, 2, None),
            )
            .await;
            client.cancel().await.unwrap();
            result
        });
    }
    let results = calls.join_all().await;
    let placed = results.iter().filter(|r| r.is_error == Some(false)).count();
    assert_eq!(placed, 1, "3 units make one order of 2");
    assert_eq!(stock(&t.shop, VISION_PRO_3_LEFT), 1);
}

// ---- choosing the caller over HTTP ----------------------------------------------

/// For these tests only: takes the bearer token as the subject, as the JWT
/// layer of a later step will take a verified token's `sub`.
async fn bearer_is_subject(mut request: Request, next: Next) -> Response {
    let subject = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(|sub| Subject(sub.to_owned()));
    if let Some(subject) = subject {
        request.extensions_mut().insert(subject);
    }
    next.run(request).await
}

async fn serve_per_request(shop: Shop) -> SocketAddr {
    let service = http_service(
        shop,
        Callers::PerRequest,
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new()
        .nest_service(bitselect::MCP_PATH, service)
        .layer(axum::middleware::from_fn(bearer_is_subject));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

async fn cart_lines(client: &Client) -> usize {
    let cart = call(client, "query_cart", json!({})).await;
    ok(&cart)["lines"].as_array().unwrap().len()
}

#[tokio::test]
async fn a_server_serving_each_request_acts_for_the_subject_its_layer_set() {
    let t = open_shop();
    t.shop.seed_users(1).unwrap();
    let addr = serve_per_request(t.shop.clone()).await;

    let a = http_client(addr, Some(&load_sub(1))).await;
    let b = http_client(addr, Some("demo")).await;
    assert_eq!(cart_lines(&a).await, 3);
    assert_eq!(cart_lines(&b).await, 5);
    let from_a = call(&a, "query_order", json!({"orderNo": B_PENDING})).await;
    assert_eq!(refused(&from_a), "UNKNOWN_ORDER");

    // A subject seen for the first time becomes a user with nothing yet.
    let newcomer = http_client(addr, Some("oauth|newcomer")).await;
    assert_eq!(cart_lines(&newcomer).await, 0);
    assert!(t.shop.find_user("oauth|newcomer").unwrap().is_some());

    let nobody = http_client(addr, None).await;
    let refused_call = call(&nobody, "query_cart", json!({})).await;
    assert_eq!(refused(&refused_call), "UNAUTHENTICATED");
    for client in [a, b, newcomer, nobody] {
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn the_default_http_mode_acts_for_the_demo_user_whatever_the_request_says() {
    let t = open_shop();
    t.shop.seed_users(1).unwrap();
    let shutdown = CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let served = tokio::spawn(serve_http(
        t.shop.clone(),
        "127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap(),
        bitselect::HttpAccess::default(),
        shutdown.clone(),
        move |bound| {
            let _ = ready_tx.send(bound);
        },
    ));
    let addr = ready_rx.await.unwrap();
    let client = http_client(addr, Some(&load_sub(1))).await;
    assert_eq!(cart_lines(&client).await, 5, "the demo user's cart");
    client.cancel().await.unwrap();
    shutdown.cancel();
    served.await.unwrap().unwrap();
}

#[test]
fn the_binary_seeds_load_users_and_prints_what_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let run = |count: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bitselect-mcp"))
            .args(["seed-users", "--count", count, "--data-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(run("3"), json!({"created": 3, "existing": 0}));
    assert_eq!(run("5"), json!({"created": 2, "existing": 3}));
    let shop = Shop::open(dir.path()).unwrap();
    assert!(shop.find_user(&load_sub(5)).unwrap().is_some());
    assert!(shop.find_user(&load_sub(6)).unwrap().is_none());
}
