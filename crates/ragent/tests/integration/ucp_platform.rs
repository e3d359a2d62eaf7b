//! The app as a UCP platform against the real shop served over HTTP: the
//! app reads the merchant's profile, binds its device key, checks the
//! signed checkout before drawing a card from it, and the mandate it makes
//! over exactly that checkout is the one the shop completes; a checkout
//! whose signature does not hold is not shown as payable. First the parts
//! alone, then the agent: the model asks to complete a checkout, the card
//! shows the signed checkout, the shopper approves, the shop completes.

use std::net::SocketAddr;

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::mcp::config::{ServerConfig, ServerTransport, UcpMerchant};
use ragent::protocol::{CallRisk, CheckoutProblem, PreviewOutcome, StopReason};
use ragent::secrets::MemorySecrets;
use ragent::toolcall::CallStatus;
use ragent::ucp::checkout_card::{self, CheckoutRefusal, SIGNED_CHECKOUT};
use ragent::ucp::device::{DeviceError, DeviceKey};
use ragent::ucp::platform::platform_profile;
use ragent::ucp::profile;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::support::faults::{Fault, faulty};
use crate::support::*;

const IPHONE_17: &str = "MG6W4CH/A";

/// The app's platform profile, hosted on loopback as its publisher would
/// host it; the listener ends with the test's runtime.
async fn host_platform_profile() -> String {
    format!("{}/platform.json", host_document(platform_profile()).await)
}

/// `document` served at every path of a loopback origin, returned.
async fn host_document(document: Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let body = document.to_string();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

struct Shop {
    shop: bitselect::Shop,
    origin: String,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Shop {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn serve_shop() -> Shop {
    let dir = tempfile::tempdir().unwrap();
    let shop = bitselect::Shop::open(dir.path()).unwrap();
    let shutdown = CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(bitselect::serve_http(
        shop.clone(),
        "127.0.0.1:0".parse::<SocketAddr>().unwrap(),
        bitselect::HttpAccess::default(),
        shutdown.clone(),
        move |bound| {
            let _ = ready_tx.send(bound);
        },
    ));
    let addr: SocketAddr = ready_rx.await.unwrap();
    Shop {
        shop,
        origin: format!("http://{addr}"),
        shutdown,
        _dir: dir,
    }
}

/// The amount of the card's total of `kind`.
fn card_total(content: &Value, kind: &str) -> i64 {
    content["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|total| total["kind"] == kind)
        .and_then(|total| total["amountFen"].as_i64())
        .unwrap_or_else(|| panic!("no {kind} total in {content}"))
}

async fn post(client: &reqwest::Client, url: &str, profile: &str, body: &Value) -> (u16, Value) {
    let response = client
        .post(url)
        .header("UCP-Agent", format!(r#"profile="{profile}""#))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_shopper_approves_the_signed_checkout_and_the_shop_completes_their_mandate() {
    let shop = serve_shop().await;
    let platform = host_platform_profile().await;
    let client = reqwest::Client::new();

    let merchant = profile::fetch(&format!("{}/any/page", shop.origin))
        .await
        .unwrap();
    assert_eq!(merchant.origin, shop.origin);
    assert_eq!(merchant.mcp_endpoint, format!("{}/ucp/mcp", shop.origin));
    assert!(merchant.signs_checkouts());

    let device = DeviceKey::new("bitselect", std::sync::Arc::new(MemorySecrets::new()));
    let kid = device.bind(&shop.origin, None).await.unwrap();
    assert!(kid.starts_with("bitselect-"), "{kid}");

    let saved = shop.shop.saved_addresses().unwrap();
    let body = json!({
        "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }],
        "fulfillment": { "methods": [{ "type": "shipping", "selected_destination_id": saved[0].id }] },
    });
    let sessions = format!("{}/ucp/checkout-sessions", shop.origin);
    let (status, checkout) = post(&client, &sessions, &platform, &body).await;
    assert_eq!(status, 201, "{checkout}");

    // The card: drawn only from a checkout whose signature holds.
    assert_eq!(checkout_card::verify(&checkout, &merchant.keys), Ok(()));
    let card = checkout_card::card_content(&checkout);
    let pay = card_total(&card, "pay");
    let total_of = |checkout: &Value| {
        checkout["totals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "total")
            .unwrap()["amount"]
            .clone()
    };
    assert_eq!(json!(pay), total_of(&checkout));
    assert_eq!(pay, 679_900);
    assert_eq!(card["lines"][0]["code"], IPHONE_17);
    assert_eq!(
        card["address"]["receiverName"],
        saved[0].receiver.name.as_str()
    );

    // A total altered on the way is not payable.
    let mut altered = checkout.clone();
    let total = altered["totals"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["type"] == "total")
        .unwrap();
    total["amount"] = json!(1);
    assert!(matches!(
        checkout_card::verify(&altered, &merchant.keys),
        Err(CheckoutRefusal::Signature(_))
    ));

    // The shopper approves: the mandate covers what the card showed.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mandate = device
        .mandate(&card[SIGNED_CHECKOUT], &merchant.origin, now)
        .await
        .unwrap();
    let complete = format!("{sessions}/{}/complete", checkout["id"].as_str().unwrap());
    let with_mandate = json!({ "ap2": { "checkout_mandate": mandate } });
    let (status, receipt) = post(&client, &complete, &platform, &with_mandate).await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt["status"], "completed");
    assert_eq!(checkout_card::verify(&receipt, &merchant.keys), Ok(()));

    // The same mandate never pays twice.
    let (status, replayed) = post(&client, &complete, &platform, &with_mandate).await;
    assert_eq!(status, 403, "{replayed}");
    assert_eq!(replayed["messages"][0]["code"], "mandate_replayed");
}

#[tokio::test]
async fn a_device_the_merchant_has_not_bound_signs_nothing() {
    let device = DeviceKey::new("bitselect", std::sync::Arc::new(MemorySecrets::new()));
    let checkout = json!({ "id": "chk_1" });
    assert!(matches!(
        device.mandate(&checkout, "https://shop.example", 0).await,
        Err(DeviceError::NotBound)
    ));
}

/// An agent whose settings name the shop's UCP service as the merchant
/// server `merchant`, trusted, with its profile at `origin`.
async fn agent_at(shop: &Shop, origin: &str) -> Harness {
    Harness::start(Setup {
        settings: merchant_settings(&shop.origin, origin).await,
        ..Setup::bare()
    })
    .await
}

/// Settings naming the UCP service of the shop at `shop_origin` as the
/// merchant server `merchant`, trusted, with its profile at `origin`.
async fn merchant_settings(shop_origin: &str, origin: &str) -> ragent::settings::Settings {
    let mut settings = ragent::settings::Settings {
        ucp_platform_profile: host_platform_profile().await,
        ..Default::default()
    };
    settings.mcp_servers.insert(
        "merchant".into(),
        ServerConfig {
            trusted: true,
            ucp: Some(UcpMerchant {
                origin: origin.to_owned(),
            }),
            ..ServerConfig::untrusted(ServerTransport::Http {
                url: format!("{shop_origin}/ucp/mcp"),
                headers: Default::default(),
            })
        },
    );
    settings
}

/// A checkout of one iPhone to the shopper's first saved address, made
/// at the shop as another platform would.
async fn open_checkout(shop: &Shop) -> Value {
    let saved = shop.shop.saved_addresses().unwrap();
    let body = json!({
        "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }],
        "fulfillment": { "methods": [{ "type": "shipping", "selected_destination_id": saved[0].id }] },
    });
    let platform = host_platform_profile().await;
    let sessions = format!("{}/ucp/checkout-sessions", shop.origin);
    let (status, checkout) = post(&reqwest::Client::new(), &sessions, &platform, &body).await;
    assert_eq!(status, 201, "{checkout}");
    checkout
}

async fn checkout_status(shop: &Shop, id: &str) -> String {
    let read = reqwest::Client::new()
        .get(format!("{}/ucp/checkout-sessions/{id}", shop.origin))
        .header(
            "UCP-Agent",
            format!(r#"profile="{}""#, host_platform_profile().await),
        )
        .send()
        .await
        .unwrap();
    let checkout: Value = read.json().await.unwrap();
    checkout["status"].as_str().unwrap_or_default().to_owned()
}

/// The shopper approves the completion's card; the run ends with the call
/// done and the checkout completed at the shop.
async fn approve_and_see_it_completed(
    h: &mut Harness,
    card: &ragent::protocol::ConfirmationCard,
    shop: &Shop,
    id: &str,
) {
    h.model.push_turn(text_turn("已付款。"));
    let run = h.approve(card).await;
    assert_eq!(run.reason, StopReason::Completed);
    let done = run.finished();
    assert_eq!(
        done[0].status,
        CallStatus::Succeeded,
        "{:?}",
        done[0].output
    );
    assert_eq!(checkout_status(shop, id).await, "completed");
}

fn order_count(shop: &Shop) -> i64 {
    shop.shop
        .connection()
        .unwrap()
        .query_row("SELECT count(*) FROM orders", [], |row| row.get(0))
        .unwrap()
}

fn complete_turn(id: &str) -> Vec<Value> {
    calls_turn(
        "为你完成结账。",
        &[("c1", "merchant__complete_checkout", json!({ "id": id }))],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_shows_the_signed_checkout_and_the_approval_pays_it_with_the_shoppers_mandate() {
    let shop = serve_shop().await;
    let mut h = agent_at(&shop, &shop.origin).await;
    let checkout = open_checkout(&shop).await;
    let id = checkout["id"].as_str().unwrap();

    h.model.push_turn(complete_turn(id));
    let run = h.say("帮我把这单结了").await;
    let card = run.card().clone();
    let call = &card.calls[0];
    assert_eq!(call.risk, CallRisk::MovesMoney);
    let preview = call.preview.as_ref().expect("drawn from the checkout");
    assert_eq!(preview.tool, "merchant__get_checkout");
    let PreviewOutcome::Computed { content } = &preview.outcome else {
        panic!("not payable: {:?}", preview.outcome);
    };
    assert_eq!(content["lines"][0]["code"], IPHONE_17);
    assert_eq!(card_total(content, "pay"), 679_900);
    assert_eq!(checkout_status(&shop, id).await, "ready_for_complete");

    approve_and_see_it_completed(&mut h, &card, &shop, id).await;

    // What the shopper signed is kept: the checkout the card showed, the
    // merchant's signature on it, the mandate, and the signed receipt.
    let db = rusqlite::Connection::open(h.dir.path().join("agent.db")).unwrap();
    let kept = ragent::store::mandates::all(&db).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].checkout, content[SIGNED_CHECKOUT]);
    assert_eq!(
        kept[0].merchant_signature,
        content[SIGNED_CHECKOUT]["ap2"]["merchant_authorization"]
    );
    assert_eq!(kept[0].merchant, shop.origin);
    let receipt = kept[0].receipt.as_ref().expect("the receipt");
    assert_eq!(receipt["status"], "completed");
    assert!(receipt["order"]["id"].is_string());

    // The command line verifies it offline; a kept checkout altered since
    // no longer matches what was signed.
    let database = h.dir.path().join("agent.db");
    let verify = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_bitselect-mandates"))
            .arg(&database)
            .output()
            .unwrap()
    };
    let verified = verify();
    let report = String::from_utf8_lossy(&verified.stdout).to_string();
    assert!(verified.status.success(), "{report}");
    assert!(
        report.contains(&format!("checkout {id} at {}: 6799.00 CNY", shop.origin)),
        "{report}"
    );
    assert_eq!(report.matches("holds").count(), 3, "{report}");
    db.execute(
        "UPDATE mandates SET checkout = json_set(checkout, '$.totals[0].amount', 1)",
        [],
    )
    .unwrap();
    let altered = verify();
    assert_eq!(altered.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&altered.stdout).contains("FAILS"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkout_whose_signature_does_not_hold_is_not_payable_and_cannot_be_approved() {
    let shop = serve_shop().await;
    // The merchant's profile, as the app finds it, publishes another key:
    // the checkout the shop signed does not verify with it.
    let stranger = ap2::jws::SigningKey::generate().unwrap().0;
    let mut published = reqwest::get(format!("{}/.well-known/ucp", shop.origin))
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    published["keys"] = json!([stranger.public_jwk()]);
    let elsewhere = host_document(published).await;
    let mut h = agent_at(&shop, &elsewhere).await;
    let checkout = open_checkout(&shop).await;
    let id = checkout["id"].as_str().unwrap();

    h.model.push_turn(complete_turn(id));
    let card = h.say("帮我把这单结了").await.card().clone();
    let outcome = &card.calls[0].preview.as_ref().unwrap().outcome;
    assert!(
        matches!(
            outcome,
            PreviewOutcome::NotPayable {
                problem: CheckoutProblem::SignatureInvalid { .. }
            }
        ),
        "{outcome:?}"
    );
    let refused = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await;
    assert!(
        matches!(refused, Err(AgentError::NotPayable { .. })),
        "{refused:?}"
    );
    assert_eq!(checkout_status(&shop, id).await, "ready_for_complete");
}

fn device_slot(h: &Harness) -> Option<Value> {
    let store = ragent::store::Store::open(&h.dir.path().join("agent.db")).unwrap();
    let text = store
        .with_conn(|c| ragent::store::kv::secret(c, "server/merchant/device_key"))
        .unwrap()?;
    Some(serde_json::from_str(&text).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_to_a_merchant_binds_the_device_key_and_signing_out_revokes_it() {
    let shop = OnlineShop::start().await;
    let h = Harness::start(Setup {
        settings: merchant_settings(&shop.origin, &shop.origin).await,
        ..Setup::bare()
    })
    .await;
    assert_eq!(device_slot(&h), None);

    let started = h.agent.begin_sign_in("merchant").await.unwrap();
    let agent = h.agent.clone();
    let finish = tokio::spawn(async move { agent.finish_sign_in("merchant").await });
    let redirect = test_support::oauth::log_in(&started.authorization_url, "alice").await;
    reqwest::get(&redirect).await.unwrap();
    finish.await.unwrap().unwrap();

    let kept = device_slot(&h).expect("a device key is kept");
    let id = kept["bound_as"]
        .as_str()
        .expect("bound at the merchant")
        .to_owned();
    assert!(id.starts_with("bitselect-"), "{id}");

    // Signing out revokes it at the merchant and forgets it here.
    let token = test_support::sign_in::sign_in(
        &shop.auth.issuer,
        "alice",
        &format!("{}{}", shop.origin, bitselect::MCP_PATH),
    )
    .await;
    h.agent.sign_out("merchant").await.unwrap();
    assert_eq!(device_slot(&h), None);
    let removed = reqwest::Client::new()
        .delete(format!("{}/account/devices/{id}", shop.origin))
        .bearer_auth(&token.access_token)
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 404, "already revoked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merchant_is_added_by_its_address_from_the_profile_at_its_origin() {
    let shop = serve_shop().await;
    let h = Harness::start(Setup::bare()).await;

    let view = h
        .agent
        .add_ucp_merchant(&format!("{}/some/product/page", shop.origin))
        .await
        .unwrap();
    let added = &view.settings.mcp_servers["127-0-0-1"];
    assert_eq!(
        serde_json::to_value(added).unwrap(),
        json!({
            "url": format!("{}/ucp/mcp", shop.origin),
            "headers": {},
            "trusted": false,
            "disabled": false,
            "timeout_secs": null,
            "ucp": { "origin": shop.origin },
        })
    );

    let again = h.agent.add_ucp_merchant(&shop.origin).await;
    assert!(
        matches!(&again, Err(AgentError::MerchantAlreadyAdded { server }) if server == "127-0-0-1"),
        "{again:?}"
    );
    let nowhere = h.agent.add_ucp_merchant("http://shop.example").await;
    assert!(
        matches!(nowhere, Err(AgentError::MerchantProfile(_))),
        "plain http to another machine: {nowhere:?}"
    );
    assert_eq!(h.agent.settings().mcp_servers.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_whose_answer_is_lost_is_sent_again_with_its_key_and_mandate_and_pays_once() {
    let shop = serve_shop().await;
    let mut setup = Setup {
        settings: merchant_settings(&shop.origin, &shop.origin).await,
        ..Setup::bare()
    };
    setup.wrap_tools = Some(faulty(Fault::LoseFirstAnswer {
        only: Some("complete_checkout"),
        lost: std::sync::Mutex::new(false),
    }));
    let mut h = Harness::start(setup).await;
    let checkout = open_checkout(&shop).await;
    let id = checkout["id"].as_str().unwrap();
    let orders_before = order_count(&shop);

    h.model.push_turn(complete_turn(id));
    let card = h.say("帮我把这单结了").await.card().clone();
    approve_and_see_it_completed(&mut h, &card, &shop, id).await;
    let orders_after = order_count(&shop);
    assert_eq!(
        orders_after,
        orders_before + 1,
        "one order, however many sends"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_checkout_shows_the_checkout_it_drops_and_needs_no_mandate() {
    let shop = serve_shop().await;
    let mut h = agent_at(&shop, &shop.origin).await;
    let checkout = open_checkout(&shop).await;
    let id = checkout["id"].as_str().unwrap();

    h.model.push_turn(calls_turn(
        "取消这次结账。",
        &[("c1", "merchant__cancel_checkout", json!({ "id": id }))],
    ));
    let card = h.say("不买了，取消吧").await.card().clone();
    let PreviewOutcome::Computed { content } = &card.calls[0].preview.as_ref().unwrap().outcome
    else {
        panic!("the card shows the checkout: {:?}", card.calls[0].preview);
    };
    assert_eq!(card_total(content, "pay"), 679_900);

    h.model.push_turn(text_turn("已取消。"));
    let run = h.approve(&card).await;
    assert_eq!(run.finished()[0].status, CallStatus::Succeeded);
    assert_eq!(checkout_status(&shop, id).await, "canceled");
    let db = rusqlite::Connection::open(h.dir.path().join("agent.db")).unwrap();
    assert!(
        ragent::store::mandates::all(&db).unwrap().is_empty(),
        "nothing was signed for a cancellation"
    );
}
