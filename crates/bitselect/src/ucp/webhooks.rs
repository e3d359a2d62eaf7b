//! The order events a platform is owed ([`crate::order_events`]), posted
//! to its webhook as the standard says: the body is the order as it stands
//! (the full order object, with the event's id and time), the headers are
//! Standard Webhooks' (`Webhook-Id`, `Webhook-Timestamp`) and the business
//! profile's address (`UCP-Agent`), and the request is signed with the
//! merchant's current key (RFC 9421, its body by `Content-Digest`), which
//! the platform finds among the profile's `keys`.
//!
//! The sender that posts them is [`super::webhook_sender`].

use ap2::http_signature::{self, Request};
use ap2::jws::SigningKey;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::names::PROFILE_PATH;
use super::order_view;
use crate::clock::{Millis, format_rfc3339};
use crate::error::{Result, ShopError};
use crate::order_events::OwedEvent;
use crate::users::UserConn;

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
