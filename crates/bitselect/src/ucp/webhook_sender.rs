//! The sender of the order events platforms are owed: every instance of
//! a shop service runs one beside its HTTP service; the outbox's leases
//! keep two from sending one event at once. A sender wakes when its own
//! instance owes an event, and otherwise every [`POLL`] for the events
//! other instances owe and the retries that fell due. Each event is
//! posted as [`super::webhooks`] makes it; a 2xx answer is its receipt.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::webhooks::{Delivery, signed_headers};
use crate::clock::{Millis, format_rfc3339};
use crate::order_events::Retry;
use crate::shop::Shop;

/// How often a sender looks for events owed by other instances and for
/// retries that fell due, when nothing wakes it sooner.
pub const POLL: Duration = Duration::from_secs(2);

/// How long a platform may take to answer one event.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

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
