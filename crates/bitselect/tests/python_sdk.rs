//! Python from PyPI against the shop (the versions
//! scripts/python-requirements.txt pins). The official MCP Python SDK
//! (`mcp`) buys the seed's phone from the shop served over HTTP on PostgreSQL,
//! signed in with a token: what a merchant's own client would do. It
//! speaks 2026-07-28, so `pay_order` hands it over to the shop's payment
//! page and the SDK's own `input_required` round trip completes the call.
//! An RFC 8785 implementation and a JOSE library (`rfc8785`, `jwcrypto`)
//! check the merchant's checkout signatures; an RFC 9421 implementation
//! (`http-message-signatures`) the order events it posts.

mod support;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};
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

/// What the independent checker says of `checkout`'s signature.
fn independent_verdict(checkout: &Value, keys: &[ap2::jws::Jwk]) -> Value {
    run_python(
        "verify_merchant_signature.py",
        &json!({ "checkout": checkout, "keys": keys }),
    )
}

/// Runs `tests/python/<script>` with `input` on its stdin; its one JSON
/// answer on stdout.
fn run_python(script: &str, input: &Value) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let mut child = std::process::Command::new(sdk_python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the Python script");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write the input");
    let out = child.wait_with_output().expect("the script's answer");
    answer_of(&out)
}

#[test]
fn the_merchants_checkout_signature_verifies_with_independent_libraries_and_not_once_altered() {
    let t = support::open_shop();
    // Text, fractions and member names whose canonical order differs by
    // code unit and by code point: where two canonicalizers could part.
    let checkout = json!({
        "id": "chk_独立",
        "status": "ready_for_complete",
        "currency": "CNY",
        "line_items": [{
            "id": "li_1",
            "item": {"id": IPHONE_17, "title": "iPhone 17 黑色 256GB", "price": 599_900},
            "quantity": 1,
            "totals": [{"type": "subtotal", "amount": 599_900}, {"type": "total", "amount": 599_900}],
        }],
        "totals": [{"type": "subtotal", "amount": 599_900}, {"type": "total", "amount": 599_900}],
        "links": [{"type": "terms_of_service", "url": "https://shop.example/terms"}],
        "weight_kg": 0.177,
        "odd_names": {"\u{fb33}": 1, "\u{1f600}": 2, "\r": 3, "é": 4},
        "ap2": {"note": "left out of what is signed"},
    });
    let signed = t.shop.sign_checkout(checkout).expect("signed");
    let keys = t.shop.signing_keys().expect("keys");

    let verdict = independent_verdict(&signed, &keys);
    assert_eq!(verdict, json!({"verified": true, "kid": keys[0].kid}));

    let mut altered = signed.clone();
    altered["totals"][1]["amount"] = json!(1);
    assert_eq!(independent_verdict(&altered, &keys)["verified"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_platform_checks_out_over_rest_and_every_answer_validates_with_the_standards_models()
 {
    let t = support::open_shop();
    let answer = platform_against(&t.shop, "ucp_rest_client.py", &[IPHONE_17]).await;
    assert_eq!(
        answer["steps"],
        json!({
            "create": [201, "incomplete"],
            "consent": [true, "platform"],
            "update": [200, "ready_for_complete"],
            "unknown": [404, "error"],
            "unavailable": [200, "error"],
            "cancel": [200, "canceled"],
            "closed": [409, "error"],
        })
    );
    let id = answer["id"].as_str().expect("the checkout's id");
    let stored = t
        .shop
        .get_checkout(id)
        .expect("the checkout is the demo user's");
    assert_eq!(stored["status"], "canceled");
}

#[test]
fn the_shoppers_mandate_verifies_with_the_sd_jwt_reference_implementation_and_not_once_altered() {
    let t = support::open_shop();
    let device = support::mandate::Device::new();
    let saved = t.shop.saved_addresses().expect("addresses");
    let body = json!({
        "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }],
        "fulfillment": { "methods": [{ "type": "shipping", "selected_destination_id": saved[0].id }] },
    });
    let checkout = t.shop.create_checkout(&body, None).expect("created").value;
    let mandate = device.mandate(&checkout, t.shop.now());
    let id = checkout["id"].as_str().expect("an id");
    let verdict = |mandate: &str, nonce: &str| {
        run_python(
            "verify_mandate.py",
            &json!({
                "mandate": mandate,
                "device_jwk": device.jwk(),
                "aud": support::mandate::SHOP_ORIGIN,
                "nonce": nonce,
            }),
        )
    };
    let total = checkout["totals"]
        .as_array()
        .and_then(|totals| totals.iter().find(|t| t["type"] == "total"))
        .expect("a total")["amount"]
        .clone();
    assert_eq!(
        verdict(&mandate, id),
        json!({ "verified": true, "checkout_id": id, "total": total })
    );

    assert_eq!(verdict(&mandate, "chk_another")["verified"], false);
    let stranger = support::mandate::Device::new();
    let (issuer, _) = mandate.rsplit_once('~').expect("a key binding");
    let their_binding = stranger.mandate(&checkout, t.shop.now());
    let spliced = format!("{issuer}~{}", their_binding.rsplit_once('~').expect("kb").1);
    assert_eq!(verdict(&spliced, id)["verified"], false);
    assert_eq!(
        verdict(&their_binding, id)["verified"],
        false,
        "not the bound key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_independent_platform_checks_out_over_mcp_and_pays_with_a_mandate_it_signed() {
    // The platform signs with the real time: the shop reads the same clock.
    let dir = tempfile::tempdir().expect("a directory");
    let shop = bitselect::Shop::open(dir.path()).expect("the shop opens");
    let answer = platform_against(&shop, "ucp_mcp_platform.py", &[]).await;
    assert_eq!(
        answer["steps"],
        json!({
            "search": [false, true],
            "lookup": [false, [IPHONE_17]],
            "product": [false, true],
            "cart": [false, [IPHONE_17]],
            "create": [false, "incomplete"],
            "update": [false, "ready_for_complete"],
            "get": [false, "ready_for_complete"],
            "complete": [false, "completed"],
            "order": [true, "processing"],
            "replay": [true, "mandate_replayed"],
        })
    );
    let order_no = answer["order"].as_str().expect("the order's number");
    let order = shop
        .query_order(&support::one_order(order_no))
        .expect("the order is the demo user's");
    let order = serde_json::to_value(order).expect("JSON");
    assert_eq!(order["orders"][0]["status"], "已支付待发货");
    assert_eq!(support::stock(&shop, IPHONE_17), 9, "paid once");
}

/// Serves `shop` over HTTP (no sign-in) and a platform's profile on
/// loopback while `tests/python/<script>` runs against them with the
/// shop's base URL, the profile's URL and `args`; its one JSON answer on
/// stdout.
async fn platform_against(shop: &bitselect::Shop, script: &str, args: &[&str]) -> Value {
    let python = sdk_python();
    let platform = support::platform::PlatformProfile::full().await;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(bitselect::serve_http(
        shop.clone(),
        "127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .expect("an address"),
        bitselect::HttpAccess::default(),
        shutdown.clone(),
        move |bound| {
            let _ = ready_tx.send(bound);
        },
    ));
    let base = format!("http://{}", ready_rx.await.expect("the shop listens"));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let out = tokio::process::Command::new(python)
        .arg(script)
        .arg(&base)
        .arg(&platform.url)
        .args(args)
        .output()
        .await
        .expect("run the Python platform");
    shutdown.cancel();
    answer_of(&out)
}

/// A script's answer: it succeeded and printed one JSON line.
fn answer_of(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON line on stdout")
}

/// What the independent checker says of `event`, the request the shop
/// would post, checked with the shop's published `keys`.
fn independent_event_verdict(
    url: &str,
    headers: &reqwest::header::HeaderMap,
    body: &[u8],
    keys: &[ap2::jws::Jwk],
) -> Value {
    use base64::Engine as _;
    let headers: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(name, value)| (name.to_string(), json!(value.to_str().unwrap())))
        .collect();
    run_python(
        "verify_order_event.py",
        &json!({
            "request": {
                "method": "POST",
                "url": url,
                "headers": headers,
                "body_b64": base64::engine::general_purpose::STANDARD.encode(body),
            },
            "keys": keys,
        }),
    )
}

#[test]
fn the_order_event_the_shop_posts_verifies_with_independent_libraries_and_not_once_altered() {
    let t = support::open_shop();
    let webhook = "https://platform.example/webhooks/orders?partner=7";
    let order_no = support::purchase::bought_through_checkout(&t, Some(webhook));
    let delivery = t
        .shop
        .claim_order_event()
        .unwrap()
        .expect("the placing is owed");
    let (url, headers) = bitselect::ucp::webhooks::signed_headers(&delivery, t.shop.now()).unwrap();
    let keys = t.shop.signing_keys().unwrap();

    let verdict = independent_event_verdict(url.as_str(), &headers, &delivery.body, &keys);
    assert_eq!(
        verdict,
        json!({ "verified": true, "kid": keys[0].kid, "order_id": order_no })
    );

    let altered_body = String::from_utf8(delivery.body.clone())
        .unwrap()
        .replace("processing", "fulfilled");
    let verdict = independent_event_verdict(url.as_str(), &headers, altered_body.as_bytes(), &keys);
    assert_eq!(verdict["verified"], false, "{verdict}");

    let mut elsewhere = url.clone();
    elsewhere.set_path("/webhooks/other");
    let verdict = independent_event_verdict(elsewhere.as_str(), &headers, &delivery.body, &keys);
    assert_eq!(verdict["verified"], false, "{verdict}");

    let mut relabelled = headers.clone();
    relabelled.insert(
        "ucp-agent",
        r#"profile="https://impostor.example/.well-known/ucp""#
            .parse()
            .unwrap(),
    );
    let verdict = independent_event_verdict(url.as_str(), &relabelled, &delivery.body, &keys);
    assert_eq!(verdict["verified"], false, "{verdict}");
}

#[test]
fn the_apps_published_platform_profile_validates_with_the_standards_models() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/ucp-platform-profile.json");
    let published: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the committed profile"))
            .expect("JSON");
    assert_eq!(
        run_python("validate_platform_profile.py", &published),
        json!({ "valid": true })
    );

    let mut unspecified = published.clone();
    unspecified["ucp"]["capabilities"]["dev.ucp.shopping.checkout"][0]
        .as_object_mut()
        .unwrap()
        .remove("spec");
    let verdict = run_python("validate_platform_profile.py", &unspecified);
    assert_eq!(verdict["valid"], false, "{verdict}");
}
