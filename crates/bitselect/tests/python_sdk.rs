//! The official MCP Python SDK (`mcp`, the version scripts/setup pins)
//! buys the seed's phone from the shop served over HTTP on PostgreSQL,
//! signed in with a token: what a merchant's own client would do. It
//! speaks 2026-07-28, so `pay_order` hands it over to the shop's payment
//! page and the SDK's own `input_required` round trip completes the call.

mod support;

use std::path::PathBuf;

use support::IPHONE_17;
use support::oauth::AuthServer;
use support::postgres::cluster;
use support::shop_process::start_instance_holding;
use test_support::ports::HeldPort;
use test_support::sign_in::sign_in;

/// The interpreter of the venv scripts/setup makes in target/python-sdk.
fn sdk_python() -> PathBuf {
    let python =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/python-sdk/bin/python");
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        has_sdk,
        "the MCP Python SDK is not installed at {}; run scripts/setup",
        python.display()
    );
    python
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_signs_in_orders_and_pays_on_the_shops_page_and_the_order_is_the_users() {
    let python = sdk_python();
    let database = tokio::task::spawn_blocking(support::postgres::seeded_database)
        .await
        .expect("a seeded database");
    let pg = cluster();
    // The resource is the instance's own address: no balancer in between.
    let port = HeldPort::bind();
    let resource = format!("http://{}{}", port.addr(), bitselect::MCP_PATH);
    let auth = AuthServer::start(&[&resource], 600).await;
    let instance = start_instance_holding(&port, &pg.url(&database), &auth.issuer, &resource).await;
    let url = format!("http://{}{}", instance.addr, bitselect::MCP_PATH);
    let token = sign_in(&auth.issuer, "python-shopper", &resource)
        .await
        .access_token;

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/seed_purchase.py");
    let out = tokio::process::Command::new(python)
        .arg(script)
        .args([url.as_str(), token.as_str(), "iPhone 17 黑色", IPHONE_17])
        .output()
        .await
        .expect("run the Python script");
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("one JSON line on stdout");
    assert!(
        answer["tools"]
            .as_array()
            .expect("tools")
            .contains(&"pay_order".into()),
        "{answer}"
    );
    assert!(
        answer["foundSkuCodes"]
            .as_array()
            .expect("codes")
            .contains(&IPHONE_17.into()),
        "{answer}"
    );
    assert_eq!(answer["paidStatus"], "已支付待发货", "{answer}");

    // The SDK spoke 2026-07-28, and its own round trip answered the shop's
    // one question: the payment page, pressed "pay" on.
    assert_eq!(answer["protocolVersion"], "2026-07-28", "{answer}");
    let asked = answer["asked"].as_array().expect("what the shop asked");
    assert_eq!(asked.len(), 1, "{answer}");
    assert_eq!(asked[0]["mode"], "url", "{answer}");
    let page_url = asked[0]["url"].as_str().expect("the page's URL");
    let origin = resource.trim_end_matches(bitselect::MCP_PATH);
    assert!(
        page_url.starts_with(&format!("{origin}/pay/")),
        "the shop's own page: {page_url}"
    );
    assert_eq!(asked[0]["pagePaid"], 200, "{answer}");

    let order_no = answer["orderNo"].as_str().expect("orderNo");
    let stored = pg.psql(
        &database,
        &format!(
            "SELECT o.status || ' ' || o.pay_fen FROM orders o JOIN users u ON u.id = o.user_id
             WHERE u.sub = 'python-shopper' AND o.order_no = '{order_no}'"
        ),
    );
    assert_eq!(stored, format!("已支付待发货 {}", answer["payAmountFen"]));
    let page_id = page_url.rsplit('/').next().expect("the page's id");
    let page = pg.psql(
        &database,
        &format!(
            "SELECT order_no || ' ' || amount_fen || ' ' || (paid_at IS NOT NULL) || ' ' || (taken_at IS NOT NULL)
             FROM payment_page WHERE id = '{page_id}'"
        ),
    );
    assert_eq!(
        page,
        format!("{order_no} {} true true", answer["payAmountFen"]),
        "paid on the page, and that payment taken by the call"
    );
}
