//! The platform's parts against the real shop served over HTTP: the app
//! reads the merchant's profile, binds its device key, checks the signed
//! checkout before drawing a card from it, and the mandate it makes over
//! exactly that checkout is the one the shop completes; a checkout whose
//! total was altered on the way is not shown as payable.

use std::net::SocketAddr;

use pretty_assertions::assert_eq;
use ragent::secrets::MemorySecrets;
use ragent::ucp::checkout_card::{self, CheckoutRefusal, SIGNED_CHECKOUT};
use ragent::ucp::device::{DeviceError, DeviceKey};
use ragent::ucp::platform::platform_profile;
use ragent::ucp::profile;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

const IPHONE_17: &str = "MG6W4CH/A";

/// The app's platform profile, hosted on loopback as its publisher would
/// host it; the listener ends with the test's runtime.
async fn host_platform_profile() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let body = platform_profile().to_string();
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
    format!("http://{addr}/platform.json")
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
    let kid = device.bind(&shop.origin, "local demo").await.unwrap();
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
    let pay = card["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|total| total["kind"] == "pay")
        .unwrap();
    let total_of = |checkout: &Value| {
        checkout["totals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "total")
            .unwrap()["amount"]
            .clone()
    };
    assert_eq!(pay["amountFen"], total_of(&checkout));
    assert_eq!(pay["amountFen"], json!(679_900));
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
