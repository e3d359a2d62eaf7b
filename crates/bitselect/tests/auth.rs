//! Sign-in: the shop served over HTTP as a protected resource of a real
//! authorization server (oidc-provider under node; `npm ci` installs it).
//! Tokens come from the authorization-code flow with PKCE, driven over HTTP
//! as a browser would; each signed-in user sees only their own cart and
//! orders, and a request without a valid token gets 401 with the resource
//! metadata's URL and changes nothing.

mod support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::client::*;
use support::isolation::{answers_as_missing, dump};
use support::oauth::*;
use support::*;
use test_support::sign_in::{refresh, sign_in};

/// Another API the same authorization server issues tokens for.
const OTHER_RESOURCE: &str = "http://127.0.0.1:9/other-api";

fn metadata_url(stack: &Stack) -> String {
    stack.url("/.well-known/oauth-protected-resource/mcp")
}

/// A write sent straight to the MCP endpoint, as any HTTP client could.
async fn post_write(stack: &Stack, token: Option<&str>) -> reqwest::Response {
    post_write_from(&stack.url(bitselect::MCP_PATH), token, None).await
}

/// A write sent to the MCP endpoint at `url`, as a web page at `origin`
/// would send it (a browser names the page's origin), or a native client
/// (no `Origin`).
async fn post_write_from(
    url: &str,
    token: Option<&str>,
    origin: Option<&str>,
) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "update_cart_item",
                                 "arguments": {"skuCode": IPHONE_17, "action": "add", "quantity": 1}}});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.send().await.expect("the shop answers")
}

fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .expect("a WWW-Authenticate header")
        .to_str()
        .unwrap()
        .to_owned()
}

fn invalid_token_challenge(stack: &Stack) -> String {
    format!(
        "Bearer error=\"invalid_token\", error_description=\"the access token is invalid or expired\", resource_metadata=\"{}\"",
        metadata_url(stack)
    )
}

/// A's order of one iPhone, with a receiver (A has no earlier order).
fn order_of_one(sku: &str) -> Value {
    json!({"items": [{"skuCode": sku, "quantity": 1}],
           "receiverName": "王五", "receiverPhone": "13900139000",
           "receiverAddress": "上海市浦东新区世纪大道 100 号"})
}

async fn cart_skus(client: &Client) -> Vec<String> {
    let cart = call(client, "query_cart", json!({})).await;
    ok(&cart)["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["skuCode"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn signed_in_users_each_see_only_their_own_cart_and_orders() {
    let stack = Stack::start(StackOptions::default()).await;
    let alice = sign_in(&stack.auth.issuer, "alice", &stack.resource).await;
    let bob = sign_in(&stack.auth.issuer, "bob", &stack.resource).await;

    let (header, claims) = jwt_parts(&alice.access_token);
    assert_eq!(header["alg"], "ES256");
    assert_eq!(claims["sub"], "alice");
    assert_eq!(claims["iss"], stack.auth.issuer.as_str());
    assert_eq!(claims["aud"], stack.resource.as_str());
    assert_eq!(alice.token_type, "Bearer");
    assert!(
        alice.refresh_token.is_some(),
        "offline_access gives a refresh token"
    );

    let b = http_client(stack.addr, Some(&bob.access_token)).await;
    add_to_cart(&b, IPHONE_17, 1).await;
    add_to_cart(&b, IPAD_AIR, 1).await;
    let placed = call(&b, "create_order", order_of_one(IPHONE_17)).await;
    let b_order = ok(&placed)["orderNo"].as_str().unwrap().to_owned();

    let a = http_client(stack.addr, Some(&alice.access_token)).await;
    assert_eq!(
        cart_skus(&a).await,
        Vec::<String>::new(),
        "a new user's cart is empty"
    );
    add_to_cart(&a, VISION_PRO_3_LEFT, 1).await;
    assert_eq!(cart_skus(&a).await, [VISION_PRO_3_LEFT]);
    let a_orders = call(&a, "query_order", json!({})).await;
    assert_eq!(ok(&a_orders)["orders"], json!([]), "A has no orders");

    let before = dump(&stack.shop.shop);
    for tool in [
        "query_order",
        "pay_order",
        "cancel_order",
        "preview_cancel_order",
    ] {
        let arguments = json!({"orderNo": b_order});
        answers_as_missing(&a, tool, arguments, &b_order, "99999").await;
    }
    assert_eq!(dump(&stack.shop.shop), before, "A changed nothing of B's");

    // B still has their own order and the rest of their cart.
    let b_view = call(&b, "query_order", json!({"orderNo": b_order})).await;
    assert_eq!(ok(&b_view)["orders"][0]["status"], "待支付");
    assert_eq!(cart_skus(&b).await, [IPAD_AIR]);
    assert!(stack.shop.shop.find_user("alice").unwrap().is_some());
    assert!(stack.shop.shop.find_user("bob").unwrap().is_some());

    // A refreshed token acts for the same user.
    let refresh_token = bob.refresh_token.as_deref().unwrap();
    let renewed = refresh(&stack.auth.issuer, refresh_token, &stack.resource).await;
    assert_ne!(renewed.access_token, bob.access_token);
    assert_ne!(
        renewed.refresh_token.as_deref(),
        Some(refresh_token),
        "rotated"
    );
    let b_again = http_client(stack.addr, Some(&renewed.access_token)).await;
    assert_eq!(cart_skus(&b_again).await, [IPAD_AIR]);
    for client in [a, b, b_again] {
        client.cancel().await.unwrap();
    }
}

/// `token` with its claims replaced and its signature kept.
fn tampered(token: &str, claims: &Value) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{}.{payload}.{}", parts[0], parts[2])
}

#[tokio::test]
async fn requests_without_a_valid_token_get_401_naming_the_metadata_and_change_nothing() {
    let stack = Stack::start(StackOptions {
        other_resources: vec![OTHER_RESOURCE.to_owned()],
        ..StackOptions::default()
    })
    .await;
    let issuer = stack.auth.issuer.clone();
    let valid = sign_in(&issuer, "alice", &stack.resource)
        .await
        .access_token;
    let for_other_api = sign_in(&issuer, "alice", OTHER_RESOURCE).await.access_token;
    assert_eq!(jwt_parts(&for_other_api).1["aud"], OTHER_RESOURCE);

    let (header, claims) = jwt_parts(&valid);
    let mut as_bob = claims.clone();
    as_bob["sub"] = json!("bob");
    let mut unknown_kid = header.clone();
    unknown_kid["kid"] = json!("a-key-nobody-has");
    let hmac = jsonwebtoken::encode(
        &jsonwebtoken::Header {
            kid: header["kid"].as_str().map(str::to_owned),
            ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256)
        },
        &as_bob,
        &jsonwebtoken::EncodingKey::from_secret(b"a secret anyone could guess").unwrap(),
    )
    .unwrap();
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(as_bob.to_string())
    );
    let bad_tokens = [
        ("another audience", for_other_api),
        ("signed with a key of our own", forge(&header, &as_bob)),
        (
            "a key id the server never had",
            forge(&unknown_kid, &as_bob),
        ),
        (
            "claims changed under a real signature",
            tampered(&valid, &as_bob),
        ),
        ("HS256 with a guessed secret", hmac),
        ("alg none", unsigned),
        ("not a JWT", "opaque-token".to_owned()),
    ];

    let before = dump(&stack.shop.shop);
    let no_token = post_write(&stack, None).await;
    assert_eq!(no_token.status(), 401);
    assert_eq!(
        challenge(&no_token),
        format!("Bearer resource_metadata=\"{}\"", metadata_url(&stack))
    );
    for (what, token) in &bad_tokens {
        let response = post_write(&stack, Some(token)).await;
        assert_eq!(response.status(), 401, "{what}");
        assert_eq!(
            challenge(&response),
            invalid_token_challenge(&stack),
            "{what}"
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "invalid_token", "{what}");
    }
    assert_eq!(
        dump(&stack.shop.shop),
        before,
        "no bad token changed anything"
    );
    assert!(stack.shop.shop.find_user("bob").unwrap().is_none());
    assert!(stack.shop.shop.find_user("alice").unwrap().is_none());

    // The valid token, for contrast, gets through.
    let a = http_client(stack.addr, Some(&valid)).await;
    add_to_cart(&a, IPHONE_17, 1).await;
    assert!(stack.shop.shop.find_user("alice").unwrap().is_some());
    a.cancel().await.unwrap();
}

#[tokio::test]
async fn with_the_authorization_server_down_a_valid_token_keeps_working_and_a_forged_one_is_refused()
 {
    let mut stack = Stack::start(StackOptions::default()).await;
    let alice = sign_in(&stack.auth.issuer, "alice", &stack.resource)
        .await
        .access_token;
    let (header, claims) = jwt_parts(&alice);
    let mut unknown_kid = header.clone();
    unknown_kid["kid"] = json!("a-key-the-shop-never-fetched");
    let unknown = forge(&unknown_kid, &claims);
    assert_eq!(post_write(&stack, Some(&alice)).await.status(), 200);

    stack.auth.stop().await;
    // The issuer's key is cached: alice's token is checked without it.
    let during = post_write(&stack, Some(&alice)).await;
    assert_eq!(during.status(), 200, "a valid token works for its lifetime");
    // A token naming a key the issuer never published is refused as it
    // was before: the keys were fetched moments ago, so the outage does
    // not make it look like a key to wait for.
    let before = dump(&stack.shop.shop);
    let forged = post_write(&stack, Some(&unknown)).await;
    assert_eq!(forged.status(), 401);
    let body: Value = forged.json().await.unwrap();
    assert_eq!(body["error"], "invalid_token", "{body}");
    assert_eq!(dump(&stack.shop.shop), before, "nothing was done for it");
}

#[tokio::test]
async fn an_expired_token_gets_401_invalid_token() {
    let stack = Stack::start(StackOptions {
        token_ttl_secs: 1,
        leeway_secs: 0,
        ..StackOptions::default()
    })
    .await;
    let token = sign_in(&stack.auth.issuer, "alice", &stack.resource).await;
    assert_eq!(token.expires_in, 1);
    let exp = jwt_parts(&token.access_token).1["exp"].as_u64().unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Past `exp`, counted in whole seconds.
    tokio::time::sleep(Duration::from_secs(exp.saturating_sub(now) + 2)).await;

    let before = dump(&stack.shop.shop);
    let response = post_write(&stack, Some(&token.access_token)).await;
    assert_eq!(response.status(), 401);
    assert_eq!(challenge(&response), invalid_token_challenge(&stack));
    assert_eq!(dump(&stack.shop.shop), before);
    assert!(stack.shop.shop.find_user("alice").unwrap().is_none());
}

#[tokio::test]
async fn a_client_finds_the_authorization_server_from_the_401_and_can_register_itself() {
    let stack = Stack::start(StackOptions::default()).await;
    let http = reqwest::Client::new();

    // 401 -> the resource metadata it names -> the authorization server.
    let refused = post_write(&stack, None).await;
    let header = challenge(&refused);
    let named = header
        .split("resource_metadata=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    let metadata: Value = http.get(named).send().await.unwrap().json().await.unwrap();
    assert_eq!(
        metadata,
        json!({"resource": stack.resource, "authorization_servers": [stack.auth.issuer],
               "bearer_methods_supported": ["header"], "resource_name": "比特严选商城"})
    );
    let at_root = http
        .get(stack.url("/.well-known/oauth-protected-resource"))
        .send()
        .await
        .unwrap();
    assert_eq!(at_root.json::<Value>().await.unwrap(), metadata);

    let issuer = metadata["authorization_servers"][0].as_str().unwrap();
    let server: Value = http
        .get(format!("{issuer}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(server["issuer"], issuer);
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));

    // Dynamic client registration, as the desktop app will do it.
    let registration = http
        .post(server["registration_endpoint"].as_str().unwrap())
        .json(
            &json!({"client_name": "比特严选助手", "application_type": "native",
                      "redirect_uris": ["http://127.0.0.1/callback"],
                      "token_endpoint_auth_method": "none",
                      "grant_types": ["authorization_code", "refresh_token"],
                      "response_types": ["code"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(registration.status(), 201);
    let client: Value = registration.json().await.unwrap();
    assert!(
        client["client_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );

    // The health check needs no token.
    let health = http
        .get(stack.url(bitselect::HEALTH_PATH))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");
}

#[tokio::test]
async fn a_web_page_whose_origin_is_not_allowed_gets_403_and_changes_nothing() {
    let stack = Stack::start(StackOptions {
        allowed_origins: vec!["https://app.example"],
        ..StackOptions::default()
    })
    .await;
    let token = sign_in(&stack.auth.issuer, "alice", &stack.resource)
        .await
        .access_token;
    let mcp = stack.url(bitselect::MCP_PATH);
    let before = dump(&stack.shop.shop);
    for origin in [
        "https://evil.example",
        "http://app.example",
        "https://app.example:8443",
        "null",
    ] {
        for token in [None, Some(token.as_str())] {
            let response = post_write_from(&mcp, token, Some(origin)).await;
            assert_eq!(
                response.status(),
                403,
                "{origin}, token: {}",
                token.is_some()
            );
        }
    }
    assert_eq!(dump(&stack.shop.shop), before, "nothing was changed");
    assert!(stack.shop.shop.find_user("alice").unwrap().is_none());

    let allowed = post_write_from(&mcp, Some(&token), Some("https://app.example")).await;
    assert_eq!(allowed.status(), 200, "the allowed origin is served");
    let native = post_write_from(&mcp, Some(&token), None).await;
    assert_eq!(native.status(), 200, "a client without Origin is served");
    assert!(stack.shop.shop.find_user("alice").unwrap().is_some());
}

#[tokio::test]
async fn without_allowed_origins_every_web_page_is_refused_and_native_clients_are_served() {
    let shop = open_shop();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(bitselect::serve_http(
        shop.shop.clone(),
        "127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap(),
        bitselect::HttpAccess::default(),
        shutdown.clone(),
        move |bound| {
            let _ = ready_tx.send(bound);
        },
    ));
    let mcp = format!("http://{}{}", ready_rx.await.unwrap(), bitselect::MCP_PATH);
    let before = dump(&shop.shop);
    for origin in ["https://evil.example", "http://127.0.0.1", "null"] {
        let response = post_write_from(&mcp, None, Some(origin)).await;
        assert_eq!(response.status(), 403, "{origin}");
    }
    assert_eq!(dump(&shop.shop), before, "nothing was changed");
    assert_eq!(post_write_from(&mcp, None, None).await.status(), 200);
    shutdown.cancel();
}

#[test]
fn the_shop_does_not_start_with_an_issuer_reached_over_plain_http() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bitselect-mcp"))
        .args([
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "http://as.example",
            "--resource-url",
            "https://shop.example/mcp",
            "--data-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--auth-issuer `http://as.example` is plain http"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("listening on http://127.0.0.1:"),
        "it never listened: {stderr}"
    );
}

#[tokio::test]
async fn the_trial_authorization_server_shows_no_login_unless_its_development_login_is_asked_for() {
    let resource = "http://127.0.0.1:8848/mcp";
    let deployed = AuthServer::start_as_deployed(&[resource]).await;
    let (status, page) = test_support::sign_in::login_page(&deployed.issuer, resource).await;
    assert!(!status.is_success(), "{status}: {page}");
    assert!(!page.contains("name=\"login\""), "{page}");

    let for_tests = AuthServer::start(&[resource], 600).await;
    let (status, page) = test_support::sign_in::login_page(&for_tests.issuer, resource).await;
    assert!(status.is_success(), "{status}: {page}");
    assert!(
        page.contains("name=\"login\""),
        "the development login form"
    );
}
