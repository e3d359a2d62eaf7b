//! Completing a checkout: only with the shopper's mandate over exactly the
//! checkout the merchant signed and the session holds now; once; then the
//! order exists, paid, the stock went down and the checkout stays as it was
//! completed.

use crate::support::mandate::{Device, SHOP_ORIGIN};
use crate::support::*;
use ap2::jws;
use bitselect::Shop;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A checkout of one iPhone 17 with the SHOP-5000-300 coupon, shipping to
/// the shopper's first saved address: ready to complete.
fn ready_checkout(shop: &Shop) -> Value {
    let saved = shop.saved_addresses().unwrap();
    let body = json!({
        "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }],
        "discounts": { "codes": ["SHOP-5000-300"] },
        "fulfillment": { "methods": [{
            "type": "shipping", "selected_destination_id": saved[0].id,
        }]},
    });
    let checkout = shop.create_checkout(&body, None).unwrap().value;
    assert_eq!(checkout["status"], "ready_for_complete", "{checkout}");
    checkout
}

fn complete(
    shop: &Shop,
    checkout: &Value,
    mandate: Option<&str>,
) -> Result<Value, bitselect::ShopError> {
    shop.complete_checkout(checkout["id"].as_str().unwrap(), mandate, SHOP_ORIGIN, None)
        .map(|written| written.value)
}

/// The user's orders, the newest first (all of them: the seed has few).
fn orders_of(shop: &Shop) -> Vec<Value> {
    let list = shop
        .query_order(&bitselect::params::QueryOrderParams {
            limit: Some(bitselect::params::MAX_ORDER_LIMIT),
            ..Default::default()
        })
        .unwrap();
    serde_json::to_value(list).unwrap()["orders"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_shopper_approves_and_the_order_exists_paid_the_stock_went_down_and_the_cart_did_not() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    t.shop.update_cart_item(&add(IPHONE_17, 2), None).unwrap();
    let orders_before = orders_of(&t.shop).len();
    let checkout = ready_checkout(&t.shop);
    let total = checkout["totals"].as_array().unwrap().last().unwrap()["amount"]
        .as_i64()
        .unwrap();

    let mandate = device.mandate(&checkout, t.shop.now());
    let receipt = complete(&t.shop, &checkout, Some(&mandate)).unwrap();
    assert_eq!(receipt["status"], "completed");
    let order_no = receipt["order"]["id"].as_str().unwrap();
    let order = t.shop.query_order(&one_order(order_no)).unwrap();
    let order = serde_json::to_value(order).unwrap()["orders"][0].clone();
    assert_eq!(order["status"], "已支付待发货");
    assert_eq!(order["payAmountFen"], total);
    assert_eq!(orders_of(&t.shop).len(), orders_before + 1);
    assert_eq!(stock(&t.shop, IPHONE_17), 9, "the stock went down");
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 2, "the cart did not");
    assert_eq!(coupon_status(&t.shop, "SHOP-5000-300").0, "已使用");

    assert!(
        jws::verify_detached(
            receipt["ap2"]["merchant_authorization"].as_str().unwrap(),
            &jws::checkout_payload(&receipt),
            &t.shop.signing_keys().unwrap()
        )
        .is_ok()
    );
    // A completed checkout stays as it was completed, whatever the
    // catalogue does after.
    t.set_sku(IPHONE_17, "price_fen", 1);
    let id = checkout["id"].as_str().unwrap();
    assert_eq!(t.shop.get_checkout(id).unwrap(), receipt);
}

#[test]
fn without_a_mandate_or_with_one_used_before_nothing_is_charged() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let checkout = ready_checkout(&t.shop);
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, None)),
        "MANDATE_REQUIRED"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);

    let mandate = device.mandate(&checkout, t.shop.now());
    complete(&t.shop, &checkout, Some(&mandate)).unwrap();
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&mandate))),
        "MANDATE_REPLAYED"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 9, "charged once");
}

#[test]
fn a_mandate_signed_by_a_key_not_bound_or_revoked_is_refused() {
    let t = open_shop();
    let checkout = ready_checkout(&t.shop);
    let stranger = Device::new();
    assert_eq!(
        refusal_code(complete(
            &t.shop,
            &checkout,
            Some(&stranger.mandate(&checkout, t.shop.now()))
        )),
        "MANDATE_INVALID_SIGNATURE",
        "a stolen token's thief has no bound key"
    );
    let device = Device::new();
    let bound = t.shop.bind_device(&device.jwk(), None).unwrap();
    t.shop.revoke_device(&bound.id).unwrap();
    assert_eq!(
        refusal_code(complete(
            &t.shop,
            &checkout,
            Some(&device.mandate(&checkout, t.shop.now()))
        )),
        "MANDATE_INVALID_SIGNATURE"
    );
    // A mandate whose signatures were made by the bound key over other
    // bytes: the key binding no longer matches what is presented.
    let other = Device::new();
    t.shop.bind_device(&other.jwk(), None).unwrap();
    let good = other.mandate(&checkout, t.shop.now());
    let (issuer, _) = good.rsplit_once('~').unwrap();
    let forged = format!(
        "{issuer}~{}",
        stranger
            .mandate(&checkout, t.shop.now())
            .rsplit_once('~')
            .unwrap()
            .1
    );
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&forged))),
        "MANDATE_INVALID_SIGNATURE"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
}

#[test]
fn a_checkout_altered_after_the_merchant_signed_it_is_refused() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let mut checkout = ready_checkout(&t.shop);
    checkout["totals"][3]["amount"] = json!(1);
    assert_eq!(
        refusal_code(complete(
            &t.shop,
            &checkout,
            Some(&device.mandate(&checkout, t.shop.now()))
        )),
        "MERCHANT_AUTHORIZATION_INVALID"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
}

#[test]
fn terms_that_changed_since_the_shopper_approved_are_refused_not_charged() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let checkout = ready_checkout(&t.shop);
    let orders_before = orders_of(&t.shop).len();
    let mandate = device.mandate(&checkout, t.shop.now());
    t.set_sku(IPHONE_17, "price_fen", 699_900);
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&mandate))),
        "MANDATE_SCOPE_MISMATCH"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
    assert_eq!(
        orders_of(&t.shop).len(),
        orders_before,
        "no order was placed"
    );
}

#[test]
fn a_mandate_for_another_shop_another_checkout_or_an_old_one_is_refused() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let checkout = ready_checkout(&t.shop);
    let now = t.shop.now() / 1000;
    let elsewhere = device.mandate_with(&checkout, "https://other.example", now, now + 600);
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&elsewhere))),
        "MANDATE_SCOPE_MISMATCH"
    );
    let second = ready_checkout(&t.shop);
    let for_second = device.mandate(&second, t.shop.now());
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&for_second))),
        "MANDATE_SCOPE_MISMATCH",
        "a mandate for one checkout completes no other"
    );
    let expired = device.mandate_with(&checkout, SHOP_ORIGIN, now - 1200, now - 1);
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&expired))),
        "MANDATE_EXPIRED"
    );
    let mandate = device.mandate(&checkout, t.shop.now());
    t.clock.advance(11 * MINUTE);
    assert_eq!(
        refusal_code(complete(&t.shop, &checkout, Some(&mandate))),
        "MANDATE_EXPIRED"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
}

#[test]
fn an_approved_checkout_that_cannot_be_ordered_is_not_completed() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let body = json!({ "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }] });
    let incomplete = t.shop.create_checkout(&body, None).unwrap().value;
    assert_eq!(incomplete["status"], "incomplete");
    assert_eq!(
        refusal_code(complete(
            &t.shop,
            &incomplete,
            Some(&device.mandate(&incomplete, t.shop.now()))
        )),
        "CHECKOUT_NOT_READY"
    );
    let other = t.shop.user_for_subject("someone-else", "别人").unwrap();
    let theirs = t.shop.acting_for(other);
    let checkout = ready_checkout(&t.shop);
    assert_eq!(
        refusal_code(complete(
            &theirs,
            &checkout,
            Some(&device.mandate(&checkout, t.shop.now()))
        )),
        "UNKNOWN_CHECKOUT"
    );
}

#[test]
fn a_checkout_signed_before_a_key_rotation_still_completes() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let checkout = ready_checkout(&t.shop);
    let mandate = device.mandate(&checkout, t.shop.now());
    t.shop.rotate_signing_key().unwrap();

    let receipt = complete(&t.shop, &checkout, Some(&mandate)).unwrap();
    assert_eq!(receipt["status"], "completed");
    let signed_with = |checkout: &Value| {
        let header = checkout["ap2"]["merchant_authorization"]
            .as_str()
            .unwrap()
            .split('.')
            .next()
            .unwrap()
            .to_owned();
        jws::compact_header(&format!("{header}.e30.x")).unwrap()["kid"].clone()
    };
    assert_ne!(
        signed_with(&receipt),
        signed_with(&checkout),
        "the receipt is signed with the new key, the checkout was with the old"
    );
}

#[test]
fn the_order_a_checkout_placed_tells_where_it_goes_and_what_happened_to_it() {
    let t = open_shop();
    let device = Device::new();
    t.shop.bind_device(&device.jwk(), None).unwrap();
    let checkout = ready_checkout(&t.shop);
    let receipt = complete(
        &t.shop,
        &checkout,
        Some(&device.mandate(&checkout, t.shop.now())),
    )
    .unwrap();
    let order_no = receipt["order"]["id"].as_str().unwrap();
    let order = t.shop.get_checkout_order(order_no, SHOP_ORIGIN).unwrap();
    assert_eq!(order["checkout_id"], checkout["id"]);
    assert_eq!(order["permalink_url"], receipt["order"]["permalink_url"]);
    let expectation = &order["fulfillment"]["expectations"][0];
    let saved = t.shop.saved_addresses().unwrap();
    assert_eq!(
        expectation["destination"]["street_address"],
        saved[0].receiver.address.as_str()
    );
    assert_eq!(order["fulfillment"]["events"], json!([]));
    assert_eq!(order["line_items"][0]["status"], "processing");

    t.run_sql(&format!(
        "UPDATE orders SET status = '已发货', shipped_at = {}, tracking_no = 'SF1234567890' WHERE order_no = '{order_no}'",
        T0 + DAY
    ));
    let shipped = t.shop.get_checkout_order(order_no, SHOP_ORIGIN).unwrap();
    assert_eq!(shipped["fulfillment"]["events"][0]["type"], "shipped");
    assert_eq!(
        shipped["fulfillment"]["events"][0]["tracking_number"],
        "SF1234567890"
    );

    t.run_sql(&format!(
        "UPDATE orders SET status = '已签收', received_at = {} WHERE order_no = '{order_no}'",
        T0 + 2 * DAY
    ));
    let delivered = t.shop.get_checkout_order(order_no, SHOP_ORIGIN).unwrap();
    assert_eq!(delivered["fulfillment"]["events"][1]["type"], "delivered");
    assert_eq!(delivered["line_items"][0]["status"], "fulfilled");
    assert_eq!(
        delivered["line_items"][0]["quantity"],
        json!({ "total": 1, "fulfilled": 1 })
    );
    assert_eq!(
        refusal_code(t.shop.get_checkout_order("88238", SHOP_ORIGIN)),
        "UNKNOWN_ORDER",
        "an order the shop's tools placed is not a checkout's"
    );
}
