//! The order events a platform is owed: a checkout completed by a
//! platform that named an order webhook subscribes its order; its placing
//! and every later change are owed, oldest first per order, each taken by
//! one sender at a time, tried again after a failure with a growing wait,
//! and given up after its last try. An order nobody subscribed owes
//! nothing.

use crate::support::mandate::SHOP_ORIGIN;
use crate::support::purchase::bought_through_checkout;
use crate::support::*;
use bitselect::Shop;
use bitselect::order_events::{LEASE_MS, MAX_ATTEMPTS, Retry};
use bitselect::params::CancelOrderParams;
use pretty_assertions::assert_eq;
use serde_json::Value;

const WEBHOOK: &str = "https://platform.example/webhooks/orders";

fn cancel(shop: &Shop, order_no: &str) {
    shop.cancel_order(
        &CancelOrderParams {
            order_no: order_no.to_owned(),
            reason: Some("不想要了".to_owned()),
        },
        None,
    )
    .unwrap();
}

fn body_of(delivery: &bitselect::ucp::webhooks::Delivery) -> Value {
    serde_json::from_slice(&delivery.body).unwrap()
}

#[test]
fn the_placing_and_then_the_cancellation_are_owed_in_order_each_to_one_sender_at_a_time() {
    let t = open_shop();
    let order_no = bought_through_checkout(&t, Some(WEBHOOK));

    let placed = t
        .shop
        .claim_order_event()
        .unwrap()
        .expect("the placing is owed");
    assert_eq!(placed.event.order_no, order_no);
    assert_eq!(placed.event.kind, "placed");
    assert_eq!(placed.event.url, WEBHOOK);
    assert_eq!(placed.event.origin, SHOP_ORIGIN);
    assert_eq!(placed.event.attempt, 1);
    let order = body_of(&placed);
    assert_eq!(order["id"], order_no.as_str());
    assert_eq!(order["line_items"][0]["item"]["id"], IPHONE_17);
    assert_eq!(order["line_items"][0]["status"], "processing");
    assert_eq!(
        order["event_id"],
        bitselect::ucp::webhooks::event_id(&placed.event)
    );
    assert_eq!(
        order["permalink_url"],
        format!("{SHOP_ORIGIN}/ucp/orders/{order_no}")
    );
    assert!(
        t.shop.claim_order_event().unwrap().is_none(),
        "a leased event is no other sender's"
    );

    cancel(&t.shop, &order_no);
    assert!(
        t.shop.claim_order_event().unwrap().is_none(),
        "the cancellation waits for the placing to be delivered"
    );
    assert_eq!(
        t.shop.settle_order_event(&placed.event, Ok(())).unwrap(),
        None
    );

    let cancelled = t
        .shop
        .claim_order_event()
        .unwrap()
        .expect("the cancellation is owed");
    assert_eq!(cancelled.event.kind, "updated");
    assert_ne!(cancelled.event.id, placed.event.id);
    let order = body_of(&cancelled);
    assert_eq!(order["line_items"][0]["status"], "removed");
    assert_eq!(order["adjustments"][0]["type"], "cancellation");
    assert_eq!(order["adjustments"][0]["status"], "completed");
    assert_eq!(
        order["adjustments"][0]["totals"][0]["amount"],
        -order["totals"].as_array().unwrap().last().unwrap()["amount"]
            .as_i64()
            .unwrap()
    );
    t.shop.settle_order_event(&cancelled.event, Ok(())).unwrap();
    assert!(
        t.shop.claim_order_event().unwrap().is_none(),
        "nothing more is owed"
    );
}

#[test]
fn a_failed_try_is_tried_again_after_its_wait_and_a_dead_senders_lease_runs_out() {
    let t = open_shop();
    bought_through_checkout(&t, Some(WEBHOOK));
    let first = t.shop.claim_order_event().unwrap().unwrap();
    let retry = t
        .shop
        .settle_order_event(&first.event, Err("the platform answered 503".to_owned()))
        .unwrap();
    assert_eq!(retry, Some(Retry::At(t.shop.now() + 2_000)));
    assert!(
        t.shop.claim_order_event().unwrap().is_none(),
        "not before its wait"
    );

    t.clock.advance(2_000);
    let second = t.shop.claim_order_event().unwrap().expect("due again");
    assert_eq!((second.event.id, second.event.attempt), (first.event.id, 2));

    // The sender of the second try never answers: its lease runs out and
    // another takes the same event.
    t.clock.advance(LEASE_MS - 1);
    assert!(t.shop.claim_order_event().unwrap().is_none());
    t.clock.advance(1);
    let third = t
        .shop
        .claim_order_event()
        .unwrap()
        .expect("the lease ran out");
    assert_eq!((third.event.id, third.event.attempt), (first.event.id, 3));
}

#[test]
fn an_event_is_given_up_after_its_last_try() {
    let t = open_shop();
    bought_through_checkout(&t, Some(WEBHOOK));
    let mut last = None;
    for attempt in 1..=MAX_ATTEMPTS {
        let delivery = t.shop.claim_order_event().unwrap().expect("due");
        assert_eq!(delivery.event.attempt, attempt);
        last = t
            .shop
            .settle_order_event(&delivery.event, Err("refused".to_owned()))
            .unwrap();
        t.clock.advance(3_600_000);
    }
    assert_eq!(last, Some(Retry::GivenUp));
    assert!(t.shop.claim_order_event().unwrap().is_none());
}

#[test]
fn an_order_whose_platform_named_no_webhook_owes_nothing() {
    let t = open_shop();
    let order_no = bought_through_checkout(&t, None);
    assert!(t.shop.claim_order_event().unwrap().is_none());
    cancel(&t.shop, &order_no);
    assert!(t.shop.claim_order_event().unwrap().is_none());
}
