//! The shop as a commerce-standard (UCP) business over HTTP: its profile
//! at `/.well-known/ucp`, and checkout sessions over the REST binding,
//! for the demo user and, behind sign-in, for each signed-in user.

mod support;

use std::net::SocketAddr;

use ap2::{http_signature, jws};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::client::call;
use support::mandate::Device;
use support::oauth::{Stack, StackOptions};
use support::platform::{PlatformProfile, Received, WEBHOOK_PATH};
use support::*;
use test_support::sign_in::sign_in;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// The shop served over HTTP without sign-in (the demo user), until drop.
struct Served {
    shop: TestShop,
    addr: SocketAddr,
    /// The platform whose profile the tests' requests name.
    platform: PlatformProfile,
    shutdown: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn serve() -> Served {
    serve_for(PlatformProfile::full().await).await
}

/// The shop served for requests that name `platform`.
async fn serve_for(platform: PlatformProfile) -> Served {
    let shop = open_shop();
    let shutdown = CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(bitselect::serve_http(
        shop.shop.clone(),
        "127.0.0.1:0".parse::<SocketAddr>().unwrap(),
        bitselect::HttpAccess::default(),
        shutdown.clone(),
        move |bound| {
            let _ = ready_tx.send(bound);
        },
    ));
    let addr = ready_rx.await.unwrap();
    Served {
        shop,
        addr,
        platform,
        shutdown,
    }
}

fn sessions(addr: SocketAddr) -> String {
    format!("http://{addr}/ucp/checkout-sessions")
}

fn one_iphone() -> Value {
    json!({ "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }] })
}

async fn send(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.unwrap();
    let status = response.status();
    let body = response.json().await.unwrap();
    (status, body)
}

fn verifies(checkout: &Value, keys: &[jws::Jwk]) -> bool {
    jws::verify_detached(
        checkout["ap2"]["merchant_authorization"].as_str().unwrap(),
        &jws::checkout_payload(checkout),
        keys,
    )
    .is_ok()
}

#[tokio::test]
async fn the_profile_names_the_rest_endpoint_and_the_keys_a_checkout_verifies_with() {
    let served = serve().await;
    let client = served.platform.client();
    let response = client
        .get(format!("http://{}/.well-known/ucp", served.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "public, max-age=300");
    let profile: Value = response.json().await.unwrap();
    assert_eq!(profile["ucp"]["version"], "2026-04-08");
    let service = &profile["ucp"]["services"]["dev.ucp.shopping"][0];
    assert_eq!(service["transport"], "rest");
    assert_eq!(service["endpoint"], format!("http://{}/ucp", served.addr));
    let capabilities: Vec<&String> = profile["ucp"]["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        capabilities,
        [
            "dev.ucp.shopping.ap2_mandate",
            "dev.ucp.shopping.buyer_consent",
            "dev.ucp.shopping.cart",
            "dev.ucp.shopping.catalog.lookup",
            "dev.ucp.shopping.catalog.search",
            "dev.ucp.shopping.checkout",
            "dev.ucp.shopping.discount",
            "dev.ucp.shopping.fulfillment",
            "dev.ucp.shopping.order"
        ]
    );

    let keys: Vec<jws::Jwk> = serde_json::from_value(profile["keys"].clone()).unwrap();
    assert_eq!(keys, served.shop.shop.signing_keys().unwrap());
    let endpoint = service["endpoint"].as_str().unwrap();
    let (status, checkout) = send(
        client
            .post(format!("{endpoint}/checkout-sessions"))
            .json(&one_iphone()),
    )
    .await;
    assert_eq!(status, 201);
    assert!(verifies(&checkout, &keys));
}

#[tokio::test]
async fn a_checkout_is_created_read_updated_and_canceled_over_rest_and_then_stays_canceled() {
    let served = serve().await;
    let client = served.platform.client();
    let (status, created) = send(client.post(sessions(served.addr)).json(&one_iphone())).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["status"], "incomplete");
    let id = created["id"].as_str().unwrap();
    let one = format!("{}/{id}", sessions(served.addr));

    let (status, read) = send(client.get(&one)).await;
    assert_eq!(status, 200);
    assert_eq!(
        jws::checkout_payload(&read),
        jws::checkout_payload(&created)
    );

    let saved = served.shop.shop.saved_addresses().unwrap();
    let mut body = one_iphone();
    body["fulfillment"] = json!({ "methods": [{
        "type": "shipping", "selected_destination_id": saved[0].id,
    }]});
    let (status, ready) = send(client.put(&one).json(&body)).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["status"], "ready_for_complete");

    let (status, canceled) = send(client.post(format!("{one}/cancel"))).await;
    assert_eq!(status, 200);
    assert_eq!(canceled["status"], "canceled");
    let (status, refused) = send(client.put(&one).json(&body)).await;
    assert_eq!(status, 409);
    assert_eq!(refused["ucp"]["status"], "error");
    assert_eq!(refused["messages"][0]["code"], "checkout_closed");
    let (status, _) = send(client.post(format!("{one}/cancel"))).await;
    assert_eq!(status, 409);

    let (status, missing) = send(client.get(format!("{}/chk_nope", sessions(served.addr)))).await;
    assert_eq!(status, 404);
    assert_eq!(missing["messages"][0]["code"], "not_found");
    assert_eq!(missing["messages"][0]["severity"], "unrecoverable");
}

#[tokio::test]
async fn a_keyed_create_sent_again_answers_the_same_bytes_and_another_body_conflicts() {
    let served = serve().await;
    let client = served.platform.client();
    let keyed = |body: &Value| {
        client
            .post(sessions(served.addr))
            .header("Idempotency-Key", "create-once")
            .json(body)
    };
    let first = keyed(&one_iphone()).send().await.unwrap();
    assert_eq!(first.status(), 201);
    let first = first.bytes().await.unwrap();
    let again = keyed(&one_iphone()).send().await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(again.bytes().await.unwrap(), first);
    let mut other = one_iphone();
    other["currency"] = json!("EUR");
    let (status, conflict) = send(keyed(&other)).await;
    assert_eq!(status, 409);
    assert_eq!(conflict["messages"][0]["code"], "idempotency_conflict");
}

#[tokio::test]
async fn bodies_that_are_not_a_checkout_are_refused_in_the_standards_error_shape() {
    let served = serve().await;
    let client = served.platform.client();
    let post = || client.post(sessions(served.addr));

    let (status, body) = send(
        post()
            .header("content-type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["ucp"]["status"], "error");
    assert_eq!(body["messages"][0]["code"], "invalid_input");

    let (status, body) = send(post().json(&json!({ "line_items": "many" }))).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = send(post().json(&json!({ "line_items": [] }))).await;
    assert_eq!(status, 422, "{body}");

    let unknown = json!({ "line_items": [{ "item": { "id": "NOPE" }, "quantity": 1 }] });
    let (status, body) = send(post().json(&unknown)).await;
    assert_eq!(status, 200, "a business outcome, not a transport error");
    assert_eq!(body["ucp"]["status"], "error");
    assert_eq!(body["messages"][0]["code"], "item_unavailable");
    assert!(body.get("id").is_none(), "no checkout was made");
}

#[tokio::test]
async fn behind_sign_in_a_checkout_needs_a_token_and_belongs_to_its_user() {
    let stack = Stack::start(StackOptions::default()).await;
    let platform = PlatformProfile::full().await;
    let client = platform.client();
    let create = || {
        client
            .post(stack.url("/ucp/checkout-sessions"))
            .json(&one_iphone())
    };
    let refused = create().send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers().contains_key("www-authenticate"));

    let alice = sign_in(&stack.auth.issuer, "alice", &stack.resource).await;
    let bob = sign_in(&stack.auth.issuer, "bob", &stack.resource).await;
    let (status, created) = send(create().bearer_auth(&alice.access_token)).await;
    assert_eq!(status, 201, "{created}");
    let one = stack.url(&format!(
        "/ucp/checkout-sessions/{}",
        created["id"].as_str().unwrap()
    ));
    let (status, _) = send(client.get(&one).bearer_auth(&bob.access_token)).await;
    assert_eq!(status, 404, "another user's checkout is not found");
    let (status, _) = send(client.get(&one).bearer_auth(&alice.access_token)).await;
    assert_eq!(status, 200);

    let profile = client
        .get(stack.url("/.well-known/ucp"))
        .send()
        .await
        .unwrap();
    assert_eq!(profile.status(), 200, "discovery needs no sign-in");
    let profile: Value = profile.json().await.unwrap();
    let origin = stack.resource.trim_end_matches(bitselect::MCP_PATH);
    assert_eq!(
        profile["ucp"]["services"]["dev.ucp.shopping"][0]["endpoint"],
        format!("{origin}/ucp")
    );
    // A shop that signs shoppers in offers identity linking: the platform
    // finds the authorization server in the service's resource metadata.
    let linking = &profile["ucp"]["capabilities"]["dev.ucp.common.identity_linking"][0];
    assert_eq!(linking["version"], "2026-04-08");
    assert_eq!(linking["config"]["scopes"], json!({}));
    let metadata: Value = client
        .get(stack.url("/.well-known/oauth-protected-resource/ucp/mcp"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["authorization_servers"][0], stack.auth.issuer);
}

#[tokio::test]
async fn a_signed_in_app_binds_its_device_key_with_its_fresh_token_once() {
    let stack = Stack::start(StackOptions::default()).await;
    let client = reqwest::Client::new();
    let devices = stack.url("/account/devices");
    let new_key = || ap2::jws::SigningKey::generate().unwrap().0.public_jwk();
    let bind = |token: Option<&str>, key: &jws::Jwk| {
        let request = client.post(&devices).json(&json!({ "jwk": key }));
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    };
    let key = new_key();
    assert_eq!(bind(None, &key).send().await.unwrap().status(), 401);

    let alice = sign_in(&stack.auth.issuer, "alice", &stack.resource).await;
    let (status, device) = send(bind(Some(&alice.access_token), &key)).await;
    assert_eq!(status, 201, "{device}");
    let id = format!("bitselect-{}", key.thumbprint().unwrap());
    assert_eq!(
        device["id"],
        id.as_str(),
        "the shop names a key by its thumbprint"
    );
    let (status, refused) = send(bind(Some(&alice.access_token), &new_key())).await;
    assert_eq!(status, 403, "the token bound a key already: {refused}");
    assert_eq!(refused["messages"][0]["code"], "device_binding_refused");

    let one = format!("{devices}/{id}");
    let bob = sign_in(&stack.auth.issuer, "bob", &stack.resource).await;
    let removed = |token: &str| client.delete(&one).bearer_auth(token.to_owned()).send();
    assert_eq!(removed(&bob.access_token).await.unwrap().status(), 404);
    assert_eq!(removed(&alice.access_token).await.unwrap().status(), 204);
    assert_eq!(removed(&alice.access_token).await.unwrap().status(), 404);
}

#[tokio::test]
async fn the_shopper_completes_over_rest_with_a_mandate_once_and_never_without_one() {
    let served = serve().await;
    let client = served.platform.client();
    let ReadyCheckout {
        device,
        checkout,
        complete,
    } = ready_checkout(&served).await;
    assert_eq!(checkout["status"], "ready_for_complete");

    let (status, refused) = send(client.post(&complete).json(&json!({}))).await;
    assert_eq!(status, 403);
    assert_eq!(refused["messages"][0]["code"], "mandate_required");

    // The mandate is made out to the shop's origin, as its profile names it.
    let origin = format!("http://{}", served.addr);
    let now = served.shop.shop.now() / 1000;
    let mandate = device.mandate_with(&checkout, &origin, now, now + 600);
    let with_mandate = json!({ "ap2": { "checkout_mandate": mandate } });
    let (status, receipt) = send(client.post(&complete).json(&with_mandate)).await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt["status"], "completed");
    assert!(receipt["order"]["id"].is_string());
    assert_eq!(stock(&served.shop.shop, IPHONE_17), 9);

    let permalink = receipt["order"]["permalink_url"].as_str().unwrap();
    assert_eq!(
        permalink,
        format!(
            "{origin}/ucp/orders/{}",
            receipt["order"]["id"].as_str().unwrap()
        )
    );
    let (status, order) = send(client.get(permalink)).await;
    assert_eq!(status, 200, "{order}");
    assert_eq!(order["checkout_id"], checkout["id"]);
    assert_eq!(order["line_items"][0]["item"]["id"], IPHONE_17);
    assert_eq!(order["line_items"][0]["status"], "processing");
    assert_eq!(order["totals"], receipt["totals"]);
    let (status, _) = send(client.get(format!("{origin}/ucp/orders/88238"))).await;
    assert_eq!(
        status, 404,
        "an order not placed by a checkout is not served here"
    );

    let (status, replayed) = send(client.post(&complete).json(&with_mandate)).await;
    assert_eq!(status, 403);
    assert_eq!(replayed["messages"][0]["code"], "mandate_replayed");
    assert_eq!(stock(&served.shop.shop, IPHONE_17), 9, "paid once");
}

/// The standard's MCP binding of the shop served by `served`.
async fn ucp_mcp(served: &Served) -> support::client::Client {
    use rmcp::ServiceExt;
    let url = format!(
        "http://{}{}",
        served.addr,
        bitselect::ucp::names::UCP_MCP_PATH
    );
    ().serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
        url,
    ))
    .await
    .unwrap()
}

#[tokio::test]
async fn the_mcp_binding_offers_the_five_checkout_tools_and_completing_moves_money() {
    let served = serve().await;
    let client = ucp_mcp(&served).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "cancel_cart",
            "cancel_checkout",
            "complete_checkout",
            "create_cart",
            "create_checkout",
            "get_cart",
            "get_checkout",
            "get_order",
            "get_product",
            "lookup_catalog",
            "search_catalog",
            "update_cart",
            "update_checkout"
        ]
    );
    for tool in &tools {
        let annotations = tool.annotations.as_ref().unwrap();
        let moves_money = tool
            .meta
            .as_ref()
            .and_then(|meta| meta.get("ragent/moves_money"))
            == Some(&json!(true));
        assert_eq!(
            moves_money,
            tool.name == "complete_checkout",
            "{}",
            tool.name
        );
        assert_eq!(
            annotations.read_only_hint,
            Some(tool.name.starts_with("get_") || tool.name.ends_with("_catalog")),
            "{}",
            tool.name
        );
    }
    let profile: Value = reqwest::get(format!("http://{}/.well-known/ucp", served.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        profile["ucp"]["services"]["dev.ucp.shopping"][1],
        json!({
            "version": "2026-04-08",
            "spec": "https://ucp.dev/2026-04-08/specification/overview",
            "transport": "mcp",
            "endpoint": format!("http://{}/ucp/mcp", served.addr),
            "schema": "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json",
        })
    );
}

#[tokio::test]
async fn a_checkout_over_mcp_is_created_and_completed_with_the_shoppers_mandate() {
    let served = serve().await;
    let device = Device::new();
    served.shop.shop.bind_device(&device.jwk(), None).unwrap();
    let client = ucp_mcp(&served).await;
    let saved = served.shop.shop.saved_addresses().unwrap();
    let mut checkout = one_iphone();
    checkout["fulfillment"] = json!({ "methods": [{
        "type": "shipping", "selected_destination_id": saved[0].id,
    }]});

    let without_agent = call(&client, "create_checkout", json!({ "checkout": checkout })).await;
    assert_eq!(without_agent.is_error, Some(true));
    let refusal = without_agent.structured_content.unwrap();
    assert_eq!(refusal["ucp"]["status"], "error");
    assert_eq!(refusal["messages"][0]["code"], "invalid_input");

    let created = call(
        &client,
        "create_checkout",
        json!({ "meta": served.platform.meta(), "checkout": checkout }),
    )
    .await;
    let created = created.structured_content.unwrap();
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    let id = created["id"].as_str().unwrap();

    let origin = format!("http://{}", served.addr);
    let now = served.shop.shop.now() / 1000;
    let mandate = device.mandate_with(&created, &origin, now, now + 600);
    let complete = |meta: Value| json!({ "meta": meta, "id": id, "checkout": { "ap2": { "checkout_mandate": mandate } } });
    let unkeyed = call(
        &client,
        "complete_checkout",
        complete(served.platform.meta()),
    )
    .await;
    assert_eq!(unkeyed.is_error, Some(true), "completing needs a key");
    assert_eq!(stock(&served.shop.shop, IPHONE_17), 10);

    let mut keyed = served.platform.meta();
    keyed["idempotency-key"] = json!("complete-1");
    let completed = call(&client, "complete_checkout", complete(keyed.clone())).await;
    assert_eq!(completed.is_error, Some(false), "{completed:?}");
    let receipt = completed.structured_content.unwrap();
    assert_eq!(receipt["status"], "completed");
    let again = call(&client, "complete_checkout", complete(keyed)).await;
    assert_eq!(
        again.structured_content.unwrap(),
        receipt,
        "the key answers the first receipt"
    );
    assert_eq!(stock(&served.shop.shop, IPHONE_17), 9, "paid once");

    let order_no = receipt["order"]["id"].as_str().unwrap();
    let order = call(
        &client,
        "get_order",
        json!({ "meta": served.platform.meta(), "id": order_no }),
    )
    .await;
    let order = order.structured_content.unwrap();
    assert_eq!(order["checkout_id"], id);
    assert_eq!(order["permalink_url"], receipt["order"]["permalink_url"]);

    let read = call(
        &client,
        "get_checkout",
        json!({ "meta": served.platform.meta(), "id": id }),
    )
    .await;
    assert_eq!(read.structured_content.unwrap(), receipt);
}

#[tokio::test]
async fn each_request_is_answered_with_what_the_platform_it_names_supports() {
    let served = serve().await;
    let create = |client: reqwest::Client| client.post(sessions(served.addr)).json(&one_iphone());

    let (status, refused) = send(create(reqwest::Client::new())).await;
    assert_eq!(status, 400, "no UCP-Agent: {refused}");
    assert_eq!(refused["messages"][0]["code"], "invalid_profile_url");

    let newer = create(reqwest::Client::new()).header(
        "UCP-Agent",
        format!(r#"profile="{}"; version="2099-01-01""#, served.platform.url),
    );
    let (status, refused) = send(newer).await;
    assert_eq!(status, 422);
    assert_eq!(refused["messages"][0]["code"], "version_unsupported");

    let gone = PlatformProfile::full().await;
    let gone_header = gone.agent_header();
    drop(gone);
    let (status, refused) =
        send(create(reqwest::Client::new()).header("UCP-Agent", gone_header)).await;
    assert_eq!(status, 424, "{refused}");
    assert_eq!(refused["messages"][0]["code"], "profile_unreachable");

    let remote = create(reqwest::Client::new()).header(
        "UCP-Agent",
        r#"profile="http://platform.example/profile.json""#,
    );
    let (status, refused) = send(remote).await;
    assert_eq!(status, 400, "plain http is fetched from this machine only");
    assert_eq!(refused["messages"][0]["code"], "invalid_profile_url");

    let no_discounts = PlatformProfile::with(&[
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.fulfillment",
        "dev.ucp.shopping.ap2_mandate",
    ])
    .await;
    let (status, checkout) = send(create(no_discounts.client())).await;
    assert_eq!(status, 201);
    let active: Vec<&String> = checkout["ucp"]["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        active,
        [
            "dev.ucp.shopping.ap2_mandate",
            "dev.ucp.shopping.checkout",
            "dev.ucp.shopping.fulfillment"
        ]
    );

    let no_checkout = PlatformProfile::with(&["dev.ucp.shopping.discount"]).await;
    let (status, refused) = send(create(no_checkout.client())).await;
    assert_eq!(status, 200, "a business outcome");
    assert_eq!(refused["ucp"]["status"], "error");
    assert_eq!(refused["messages"][0]["code"], "capabilities_incompatible");
}

#[tokio::test]
async fn the_catalogue_over_mcp_finds_what_the_shops_own_search_finds() {
    let served = serve().await;
    let client = ucp_mcp(&served).await;
    let meta = served.platform.meta();
    let found = call(
        &client,
        "search_catalog",
        json!({ "meta": meta, "catalog": { "query": "降噪耳机", "pagination": { "limit": 10 } } }),
    )
    .await
    .structured_content
    .unwrap();
    let titles: Vec<&str> = found["products"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("AirPods Pro")),
        "{titles:?}"
    );
    let first = &found["products"][0];
    assert_eq!(first["price_range"]["min"]["currency"], "CNY");
    assert!(first["variants"][0]["price"]["amount"].as_i64().unwrap() > 0);

    let looked_up = call(
        &client,
        "lookup_catalog",
        json!({ "meta": meta, "catalog": { "ids": [IPHONE_17, "NO-SUCH-ID"] } }),
    )
    .await
    .structured_content
    .unwrap();
    let variants = &looked_up["products"][0]["variants"];
    assert_eq!(
        variants.as_array().unwrap().len(),
        1,
        "only the SKU asked for"
    );
    assert_eq!(variants[0]["id"], IPHONE_17);
    assert_eq!(variants[0]["inputs"][0]["id"], IPHONE_17);
    assert_eq!(looked_up["messages"][0]["code"], "not_found");

    let detail = call(
        &client,
        "get_product",
        json!({ "meta": meta, "catalog": { "id": IPHONE_17 } }),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(detail["product"]["id"], looked_up["products"][0]["id"]);
    assert!(
        detail["product"]["variants"].as_array().unwrap().len() > 1,
        "every configuration"
    );

    // Pages follow the cursor the answer before gave.
    let page = |cursor: Option<&str>| {
        let mut pagination = json!({ "limit": 3 });
        if let Some(cursor) = cursor {
            pagination["cursor"] = json!(cursor);
        }
        call(
            &client,
            "search_catalog",
            json!({ "meta": meta, "catalog": { "query": "iPhone", "pagination": pagination } }),
        )
    };
    let first_page = page(None).await.structured_content.unwrap();
    assert_eq!(first_page["pagination"]["has_next_page"], true);
    assert_eq!(first_page["pagination"]["cursor"], "3");
    let second_page = page(Some("3")).await.structured_content.unwrap();
    let ids = |answer: &Value| -> Vec<String> {
        answer["products"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&second_page).len(), 3);
    assert!(
        ids(&second_page)
            .iter()
            .all(|id| !ids(&first_page).contains(id))
    );
    let bad = page(Some("not-a-cursor")).await;
    assert_eq!(bad.is_error, Some(true));

    let no_catalog = PlatformProfile::with(&["dev.ucp.shopping.checkout"]).await;
    let refused = call(
        &client,
        "search_catalog",
        json!({ "meta": no_catalog.meta(), "catalog": { "query": "iPhone" } }),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content.unwrap()["messages"][0]["code"],
        "capabilities_incompatible"
    );
}

#[tokio::test]
async fn the_standards_cart_is_the_shoppers_own_cart() {
    let served = serve().await;
    let client = ucp_mcp(&served).await;
    let meta = served.platform.meta();
    let shop = &served.shop.shop;
    let before = shop.query_cart().unwrap();
    assert!(!before.lines.is_empty(), "the seed's shopper has a cart");

    let created = call(
        &client,
        "create_cart",
        json!({ "meta": meta, "cart": { "line_items": [
            { "item": { "id": IPHONE_17 }, "quantity": 2 },
            { "item": { "id": IPAD_AIR }, "quantity": 1 },
        ] } }),
    )
    .await;
    assert_eq!(created.is_error, Some(false), "{created:?}");
    let created = created.structured_content.unwrap();
    let id = created["id"].as_str().unwrap();
    let held: Vec<(String, i64)> = shop
        .query_cart()
        .unwrap()
        .lines
        .into_iter()
        .map(|line| (line.sku_code, line.quantity))
        .collect();
    assert_eq!(
        held,
        [(IPHONE_17.to_owned(), 2), (IPAD_AIR.to_owned(), 1)],
        "the shop's own cart holds what the platform set, and nothing else"
    );

    let updated = call(
        &client,
        "update_cart",
        json!({ "meta": meta, "id": id, "cart": { "line_items": [
            { "item": { "id": IPHONE_17 }, "quantity": 1 },
        ] } }),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(updated["line_items"].as_array().unwrap().len(), 1);
    assert_eq!(cart_quantity(shop, IPHONE_17), 1);
    assert_eq!(cart_quantity(shop, IPAD_AIR), 0);
    let read = call(&client, "get_cart", json!({ "meta": meta, "id": id })).await;
    assert_eq!(
        read.structured_content.unwrap()["totals"],
        updated["totals"]
    );

    let refused = call(
        &client,
        "update_cart",
        json!({ "meta": meta, "id": id, "cart": { "line_items": [
            { "item": { "id": AIRPODS_NO_STOCK }, "quantity": 1 },
        ] } }),
    )
    .await;
    assert_eq!(refused.is_error, Some(true), "the cart's own rules hold");
    assert_eq!(cart_quantity(shop, IPHONE_17), 1, "nothing changed");

    let other = call(
        &client,
        "get_cart",
        json!({ "meta": meta, "id": "cart_nope" }),
    )
    .await;
    assert_eq!(
        other.structured_content.unwrap()["messages"][0]["code"],
        "not_found"
    );

    let emptied = call(&client, "cancel_cart", json!({ "meta": meta, "id": id }))
        .await
        .structured_content
        .unwrap();
    assert_eq!(emptied["line_items"], json!([]));
    assert!(shop.query_cart().unwrap().lines.is_empty());
}

/// A checkout of one iPhone 17, shipped to the first saved address, made
/// over REST by a platform with a device key bound to the shopper: ready to
/// complete once the key signs a mandate for it.
struct ReadyCheckout {
    device: Device,
    checkout: Value,
    /// The checkout's `complete` operation.
    complete: String,
}

async fn ready_checkout(served: &Served) -> ReadyCheckout {
    let client = served.platform.client();
    let device = Device::new();
    let (status, _) = send(
        client
            .post(format!("http://{}/account/devices", served.addr))
            .json(&json!({ "jwk": device.jwk() })),
    )
    .await;
    assert_eq!(status, 201);
    let saved = served.shop.shop.saved_addresses().unwrap();
    let mut body = one_iphone();
    body["fulfillment"] = json!({ "methods": [{
        "type": "shipping", "selected_destination_id": saved[0].id,
    }]});
    let (_, checkout) = send(client.post(sessions(served.addr)).json(&body)).await;
    let complete = format!(
        "{}/{}/complete",
        sessions(served.addr),
        checkout["id"].as_str().unwrap()
    );
    ReadyCheckout {
        device,
        checkout,
        complete,
    }
}

/// One iPhone 17 bought over REST by `served`'s platform with a bound
/// device key: the checkout and its receipt.
async fn buy_one_iphone(served: &Served) -> (Value, Value) {
    let ReadyCheckout {
        device,
        checkout,
        complete,
    } = ready_checkout(served).await;
    let origin = format!("http://{}", served.addr);
    let now = served.shop.shop.now() / 1000;
    let mandate = device.mandate_with(&checkout, &origin, now, now + 600);
    let (status, receipt) = send(
        served
            .platform
            .client()
            .post(&complete)
            .json(&json!({ "ap2": { "checkout_mandate": mandate } })),
    )
    .await;
    assert_eq!(status, 200, "{receipt}");
    (checkout, receipt)
}

/// The next request the platform's webhook gets (a test that waits longer
/// than a minute has failed).
async fn next_event(events: &mut UnboundedReceiver<Received>) -> Received {
    tokio::time::timeout(std::time::Duration::from_secs(60), events.recv())
        .await
        .expect("an order event within a minute")
        .expect("the platform is still serving")
}

/// Whether `event` is signed, as the standard says, by a key the shop at
/// `addr` publishes in its profile.
async fn signed_by_the_shop(
    event: &Received,
    addr: SocketAddr,
) -> Result<http_signature::Verified, http_signature::HttpSignatureError> {
    let profile: Value = reqwest::get(format!("http://{addr}/.well-known/ucp"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys: Vec<jws::Jwk> = serde_json::from_value(profile["keys"].clone()).unwrap();
    let headers: Vec<(&str, &str)> = event
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let request = http_signature::Request {
        method: &event.method,
        authority: event.header("host"),
        path: &event.path,
        query: None,
        headers: &headers,
        body: &event.body,
    };
    http_signature::verify(
        &request,
        event.header("signature-input"),
        event.header("signature"),
        &keys,
        &[
            "@method",
            "@authority",
            "@path",
            "ucp-agent",
            "content-digest",
            "content-type",
        ],
    )
}

#[tokio::test]
async fn the_platform_is_posted_the_order_it_placed_and_its_cancellation_signed_by_the_shop() {
    let (platform, mut events) = PlatformProfile::with_webhook(0).await;
    let served = serve_for(platform).await;
    let (checkout, receipt) = buy_one_iphone(&served).await;
    let order_no = receipt["order"]["id"].as_str().unwrap();

    let placed = next_event(&mut events).await;
    assert_eq!(
        (placed.method.as_str(), placed.path.as_str()),
        ("POST", WEBHOOK_PATH)
    );
    assert_eq!(placed.header("content-type"), "application/json");
    assert_eq!(
        placed.header("ucp-agent"),
        format!(r#"profile="http://{}/.well-known/ucp""#, served.addr)
    );
    assert_eq!(placed.header("webhook-timestamp"), (T0 / 1000).to_string());
    let verified = signed_by_the_shop(&placed, served.addr).await.unwrap();
    assert!(verified.kid.starts_with("bitselect-"), "{}", verified.kid);
    let order: Value = serde_json::from_slice(&placed.body).unwrap();
    assert_eq!(order["id"], order_no);
    assert_eq!(order["checkout_id"], checkout["id"]);
    assert_eq!(order["event_id"], placed.header("webhook-id"));
    assert_eq!(order["totals"], receipt["totals"]);
    assert_eq!(order["line_items"][0]["status"], "processing");

    let mut altered = placed.clone();
    altered.body = String::from_utf8(placed.body.clone())
        .unwrap()
        .replace("processing", "fulfilled")
        .into_bytes();
    assert_eq!(
        signed_by_the_shop(&altered, served.addr).await,
        Err(http_signature::HttpSignatureError::DigestMismatch),
        "a body changed on the way is not the shop's"
    );

    served
        .shop
        .shop
        .cancel_order(
            &bitselect::params::CancelOrderParams {
                order_no: order_no.to_owned(),
                reason: None,
            },
            None,
        )
        .unwrap();
    let cancelled = next_event(&mut events).await;
    signed_by_the_shop(&cancelled, served.addr).await.unwrap();
    assert_ne!(cancelled.header("webhook-id"), placed.header("webhook-id"));
    let order: Value = serde_json::from_slice(&cancelled.body).unwrap();
    assert_eq!(order["id"], order_no);
    assert_eq!(order["line_items"][0]["status"], "removed");
    assert_eq!(order["adjustments"][0]["type"], "cancellation");
}

#[tokio::test]
async fn an_event_the_platform_refused_is_posted_again_with_the_same_id_once_its_wait_is_over() {
    let (platform, mut events) = PlatformProfile::with_webhook(1).await;
    let served = serve_for(platform).await;
    let mut tries = served.shop.shop.order_event_tries();
    let (_, receipt) = buy_one_iphone(&served).await;

    let refused = next_event(&mut events).await;
    tries.wait_for(|settled| *settled == 1).await.unwrap();
    // The shop waits 2 s on its clock before the second try; the clock is
    // the test's, so the test moves it and wakes the sender.
    served.shop.clock.advance(2_000);
    served.shop.shop.order_events_owed().notify_one();
    let again = next_event(&mut events).await;
    assert_eq!(again.header("webhook-id"), refused.header("webhook-id"));
    let order: Value = serde_json::from_slice(&again.body).unwrap();
    assert_eq!(order["id"], receipt["order"]["id"]);
    signed_by_the_shop(&again, served.addr).await.unwrap();
    tries.wait_for(|settled| *settled == 2).await.unwrap();
    assert!(
        served.shop.shop.claim_order_event().unwrap().is_none(),
        "delivered: nothing more is owed"
    );
}

#[tokio::test]
async fn the_buyers_consent_is_kept_with_the_checkout_and_answered_as_theirs() {
    let served = serve().await;
    let client = served.platform.client();
    let mut body = one_iphone();
    body["buyer"] = json!({
        "email": "li.lei@example.com",
        "consent": {
            "dev.ucp.consent.marketing": { "granted": true },
            "dev.ucp.consent.analytics": { "granted": false },
        },
    });
    let (status, created) = send(client.post(sessions(served.addr)).json(&body)).await;
    assert_eq!(status, 201, "{created}");
    let consent = &created["buyer"]["consent"];
    assert_eq!(created["buyer"]["email"], "li.lei@example.com");
    assert_eq!(
        consent["dev.ucp.consent.marketing"],
        json!({ "granted": true, "source": "platform", "description": "营销：优惠活动与新品信息",
                "segments": consent["dev.ucp.consent.marketing"]["segments"].clone() })
    );
    assert_eq!(consent["dev.ucp.consent.analytics"]["source"], "platform");
    assert_eq!(consent["dev.ucp.consent.sale_or_sharing"]["granted"], false);
    assert_eq!(
        consent["dev.ucp.consent.sale_or_sharing"]["source"],
        "business"
    );

    let id = created["id"].as_str().unwrap();
    let (_, read) = send(client.get(format!("{}/{id}", sessions(served.addr)))).await;
    assert_eq!(read["buyer"]["consent"], *consent, "kept with the checkout");

    body["buyer"]["consent"] = json!({ "com.example.loyalty": { "granted": true } });
    let (status, refused) = send(client.post(sessions(served.addr)).json(&body)).await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("com.example.loyalty"),
        "{refused}"
    );
}
