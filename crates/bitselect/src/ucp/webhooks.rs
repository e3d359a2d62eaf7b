//! The order events a platform is owed ([`crate::order_events`]), posted
//! to its webhook as the standard says: the body is the order as it stands
//! (the full order object, with the event's id and time), the headers are
//! Standard Webhooks' (`Webhook-Id`, `Webhook-Timestamp`) and the business
//! profile's address (`UCP-Agent`), and the request is signed with the
//! merchant's current key (RFC 9421, its body by `Content-Digest`), which
//! the platform finds among the profile's `keys`.
//!
//! Every instance of a shop service runs a sender; the outbox's leases
//! keep two from sending one event at once. A sender wakes when its own
//! instance owes an event, and otherwise every [`POLL`] for the events
//! other instances owe and the retries that fell due.

use std::time::Duration;

use ap2::http_signature::{self, Request};
use ap2::jws::SigningKey;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::names::PROFILE_PATH;
use super::order_view;
use crate::clock::{Millis, format_rfc3339};
use crate::error::{Result, ShopError};
use crate::order_events::{OwedEvent, Retry};
use crate::shop::Shop;
use crate::users::UserConn;

/// How often a sender looks for events owed by other instances and for
/// retries that fell due, when nothing wakes it sooner.
pub const POLL: Duration = Duration::from_secs(2);

/// How long a platform may take to answer one event.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// The components each event's signature covers.
const COVERED: &[&str] = &[
    "@method",
    "@authority",
    "@path",
    "ucp-agent",
    "idempotency-key",
    "content-digest",
    "content-type",
];

/// One event ready to post: where, the exact body, and the key to sign it.
#[derive(Debug)]
pub struct Delivery {
    pub event: OwedEvent,
    pub body: Vec<u8>,
    pub key: SigningKey,
}

/// The id a platform knows an event by (`Webhook-Id`), the same on every
/// try.
pub fn event_id(event: &OwedEvent) -> String {
    format!("evt_{}_{}", event.order_no, event.id)
}

/// The body of `event`: the user's order as it stands now, with the
/// event's id and time.
pub fn body(conn: &UserConn<'_>, now: Millis, event: &OwedEvent) -> Result<Vec<u8>> {
    let mut order = order_view::render(conn, now, &event.order_no, &event.origin)?;
    if let Some(members) = order.as_object_mut() {
        members.insert("event_id".to_owned(), Value::String(event_id(event)));
        members.insert(
            "created_time".to_owned(),
            Value::String(format_rfc3339(event.created_at)),
        );
    }
    Ok(serde_json::to_vec(&order)?)
}

/// The signed request for `delivery`, sent at `now`.
pub fn signed_headers(delivery: &Delivery, now: Millis) -> Result<(Url, HeaderMap)> {
    let event = &delivery.event;
    let url = Url::parse(&event.url)
        .map_err(|e| ShopError::invalid("webhook_url", format!("{}：{e}", event.url)))?;
    let authority = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => return Err(ShopError::invalid("webhook_url", "没有主机")),
    };
    let fields = [
        ("content-type", "application/json".to_owned()),
        (
            "ucp-agent",
            format!("profile=\"{}{PROFILE_PATH}\"", event.origin),
        ),
        ("idempotency-key", event_id(event)),
        ("webhook-id", event_id(event)),
        ("webhook-timestamp", (event.created_at / 1000).to_string()),
        (
            "content-digest",
            http_signature::content_digest(&delivery.body),
        ),
    ];
    let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let request = Request {
        method: "POST",
        authority: &authority,
        path: url.path(),
        query: url.query(),
        headers: &borrowed,
        body: &delivery.body,
    };
    let mut covered = COVERED.to_vec();
    if url.query().is_some() {
        covered.insert(3, "@query");
    }
    let signature = http_signature::sign(&delivery.key, &request, &covered, now / 1000)
        .map_err(|e| ShopError::Corrupt(format!("无法签名订单事件：{e}")))?;
    let mut headers = HeaderMap::new();
    let all = fields.into_iter().chain([
        ("signature-input", signature.input),
        ("signature", signature.value),
    ]);
    for (name, value) in all {
        let value = HeaderValue::from_str(&value)
            .map_err(|e| ShopError::Corrupt(format!("订单事件的 {name} 头无效：{e}")))?;
        headers.insert(HeaderName::from_static(name), value);
    }
    Ok((url, headers))
}

/// Sends the events owed until `stop`: each one due, then waits to be
/// woken or for [`POLL`].
pub async fn send_until(shop: Shop, stop: CancellationToken) {
    let client = match reqwest::Client::builder()
        .timeout(SEND_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "no HTTP client for order events: none are sent");
            return;
        }
    };
    let woken = shop.order_events_owed();
    loop {
        while !stop.is_cancelled() && send_one(&shop, &client).await {}
        tokio::select! {
            () = stop.cancelled() => return,
            () = woken.notified() => {}
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Sends the next event due, if any; says whether there was one.
async fn send_one(shop: &Shop, client: &reqwest::Client) -> bool {
    let claimer = shop.clone();
    let claimed = tokio::task::spawn_blocking(move || claimer.claim_order_event()).await;
    let delivery = match claimed {
        Ok(Ok(Some(delivery))) => delivery,
        Ok(Ok(None)) => return false,
        Ok(Err(error)) => {
            tracing::warn!(%error, "could not read the order events owed");
            return false;
        }
        Err(join) => {
            tracing::warn!(%join, "reading the order events owed stopped");
            return false;
        }
    };
    let outcome = post(client, &delivery, shop.now()).await;
    let event = delivery.event;
    let settler = shop.clone();
    let settled = {
        let (event, outcome) = (event.clone(), outcome.clone());
        tokio::task::spawn_blocking(move || settler.settle_order_event(&event, outcome)).await
    };
    match (outcome, settled) {
        (Ok(()), Ok(Ok(_))) => {
            tracing::info!(order = %event.order_no, event = event.id, attempt = event.attempt,
                           url = %event.url, "order event delivered");
        }
        (Err(why), Ok(Ok(Some(Retry::At(at))))) => {
            tracing::warn!(order = %event.order_no, event = event.id, attempt = event.attempt,
                           url = %event.url, %why, next = %format_rfc3339(at),
                           "order event not delivered; trying again later");
        }
        (Err(why), Ok(Ok(_))) => {
            tracing::error!(order = %event.order_no, event = event.id, attempt = event.attempt,
                            url = %event.url, %why, "order event given up");
        }
        (_, Ok(Err(error))) => {
            tracing::warn!(%error, event = event.id, "could not record what became of an order event");
        }
        (_, Err(join)) => {
            tracing::warn!(%join, event = event.id, "recording an order event stopped");
        }
    }
    true
}

/// Posts one event; a 2xx answer is its receipt.
async fn post(
    client: &reqwest::Client,
    delivery: &Delivery,
    now: Millis,
) -> std::result::Result<(), String> {
    let (url, mut headers) = signed_headers(delivery, now).map_err(|e| e.to_string())?;
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let response = client
        .post(url)
        .headers(headers)
        .body(delivery.body.clone())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the platform answered {status}"))
    }
}
