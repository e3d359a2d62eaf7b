//! Checkout sessions of the commerce standard: priced, stocked, discounted
//! and shipped by the same rules as an order, signed by the merchant, and
//! closed for good once canceled or expired.

use crate::support::*;
use ap2::jws;
use bitselect::ucp::signing_keys::CHECKOUT_LIFETIME_MS;
use bitselect::{Caller, Shop, ShopError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const IPHONE_17_PRICE: i64 = 679_900;

fn create(shop: &Shop, body: Value) -> Result<Value, ShopError> {
    shop.create_checkout(&body, None)
        .map(|written| written.value)
}

fn update(shop: &Shop, id: &str, body: Value) -> Result<Value, ShopError> {
    shop.update_checkout(id, &body, None)
        .map(|written| written.value)
}

fn cancel(shop: &Shop, id: &str) -> Result<Value, ShopError> {
    shop.cancel_checkout(id, None).map(|written| written.value)
}

fn one_iphone() -> Value {
    json!({ "line_items": [{ "item": { "id": IPHONE_17 }, "quantity": 1 }] })
}

/// `body` with the shipping method choosing `destination`.
fn shipping_to(mut body: Value, destination: &str) -> Value {
    body["fulfillment"] = json!({
        "methods": [{ "type": "shipping", "selected_destination_id": destination }]
    });
    body
}

fn totals(checkout: &Value) -> Vec<(String, i64)> {
    checkout["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["type"].as_str().unwrap().to_owned(),
                t["amount"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn message_codes(checkout: &Value) -> Vec<(String, String)> {
    checkout["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["type"].as_str().unwrap().to_owned(),
                m["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn verifies(t: &TestShop, checkout: &Value) -> bool {
    jws::verify_detached(
        checkout["ap2"]["merchant_authorization"].as_str().unwrap(),
        &jws::checkout_payload(checkout),
        &t.shop.signing_keys().unwrap(),
    )
    .is_ok()
}

#[test]
fn a_checkout_is_priced_like_an_order_and_ready_once_a_saved_address_is_chosen() {
    let t = open_shop();
    let created = create(&t.shop, one_iphone()).unwrap();
    assert_eq!(created["status"], "incomplete");
    assert_eq!(created["currency"], "CNY");
    assert_eq!(created["line_items"][0]["item"]["id"], IPHONE_17);
    assert_eq!(created["line_items"][0]["item"]["price"], IPHONE_17_PRICE);
    assert_eq!(
        totals(&created),
        [
            ("subtotal".into(), IPHONE_17_PRICE),
            ("fulfillment".into(), 0),
            ("total".into(), IPHONE_17_PRICE)
        ]
    );
    assert_eq!(
        message_codes(&created),
        [("error".into(), "fulfillment_destination_required".into())]
    );
    assert!(verifies(&t, &created));

    // The shopper's saved addresses are offered; choosing one is enough.
    let saved = t.shop.saved_addresses().unwrap();
    let offered = &created["fulfillment"]["methods"][0]["destinations"];
    assert_eq!(offered[0]["id"], saved[0].id.as_str());
    assert_eq!(
        offered[0]["street_address"],
        saved[0].receiver.address.as_str()
    );

    let id = created["id"].as_str().unwrap();
    let ready = update(&t.shop, id, shipping_to(one_iphone(), &saved[0].id)).unwrap();
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_eq!(ready["messages"], json!([]));
    let method = &ready["fulfillment"]["methods"][0];
    assert_eq!(method["selected_destination_id"], saved[0].id.as_str());
    assert_eq!(method["groups"][0]["selected_option_id"], "standard");
    assert!(verifies(&t, &ready));
    // The same terms again (an ECDSA signature differs each time it is made).
    assert_eq!(
        jws::checkout_payload(&t.shop.get_checkout(id).unwrap()),
        jws::checkout_payload(&ready)
    );
}

#[test]
fn a_coupon_the_shopper_holds_comes_off_and_codes_that_cannot_apply_are_warnings() {
    let t = open_shop();
    let mut body = one_iphone();
    body["discounts"] = json!({ "codes": ["shop-5000-300", "NOT-A-CODE"] });
    let checkout = create(&t.shop, body).unwrap();
    assert_eq!(
        totals(&checkout),
        [
            ("subtotal".into(), IPHONE_17_PRICE),
            ("discount".into(), -30_000),
            ("fulfillment".into(), 0),
            ("total".into(), IPHONE_17_PRICE - 30_000)
        ]
    );
    assert_eq!(checkout["discounts"]["applied"][0]["code"], "SHOP-5000-300");
    assert_eq!(checkout["discounts"]["applied"][0]["amount"], 30_000);
    assert!(
        message_codes(&checkout).contains(&(
            "warning".into(),
            "discount_code_combination_disallowed".into()
        )),
        "{checkout}"
    );

    let id = checkout["id"].as_str().unwrap();
    let mut unknown = one_iphone();
    unknown["discounts"] = json!({ "codes": ["NOT-A-CODE"] });
    let updated = update(&t.shop, id, unknown).unwrap();
    assert_eq!(totals(&updated)[0], ("subtotal".into(), IPHONE_17_PRICE));
    assert_eq!(totals(&updated).last().unwrap().1, IPHONE_17_PRICE);
    assert_eq!(
        message_codes(&updated)[0],
        ("warning".into(), "discount_code_invalid".into())
    );
    let mut expired = one_iphone();
    expired["discounts"] = json!({ "codes": ["NEW-1000-100"] });
    let updated = update(&t.shop, id, expired).unwrap();
    assert_eq!(
        message_codes(&updated)[0],
        ("warning".into(), "discount_code_expired".into())
    );
}

#[test]
fn stock_and_price_are_read_at_every_answer() {
    let t = open_shop();
    let saved = t.shop.saved_addresses().unwrap();
    let mut body = shipping_to(one_iphone(), &saved[0].id);
    body["line_items"][0]["quantity"] = json!(11);
    let checkout = create(&t.shop, body).unwrap();
    assert_eq!(checkout["status"], "incomplete");
    assert_eq!(checkout["messages"][0]["code"], "out_of_stock");
    assert_eq!(checkout["messages"][0]["path"], "$.line_items[0]");
    assert_eq!(checkout["messages"][0]["severity"], "recoverable");

    let id = checkout["id"].as_str().unwrap();
    t.set_sku(IPHONE_17, "stock", 20);
    t.set_sku(IPHONE_17, "price_fen", 549_900);
    let now = t.shop.get_checkout(id).unwrap();
    assert_eq!(now["status"], "ready_for_complete", "{now}");
    assert_eq!(totals(&now).last().unwrap().1, 11 * 549_900);
}

#[test]
fn a_destination_the_platform_gives_must_be_in_china_and_complete() {
    let t = open_shop();
    let destination = json!({
        "id": "home", "first_name": "明", "last_name": "张", "phone_number": "13800138000",
        "address_country": "CN", "address_region": "上海市", "address_locality": "浦东新区",
        "street_address": "世纪大道 100 号",
    });
    let mut body = one_iphone();
    body["fulfillment"] = json!({ "methods": [{
        "type": "shipping", "destinations": [destination], "selected_destination_id": "home",
    }]});
    let ready = create(&t.shop, body.clone()).unwrap();
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    let offered = ready["fulfillment"]["methods"][0]["destinations"]
        .as_array()
        .unwrap();
    assert!(offered.iter().any(|d| d["id"] == "home"));

    let id = ready["id"].as_str().unwrap();
    body["fulfillment"]["methods"][0]["destinations"][0]["address_country"] = json!("US");
    let abroad = update(&t.shop, id, body.clone()).unwrap();
    assert_eq!(abroad["status"], "incomplete");
    assert_eq!(abroad["messages"][0]["code"], "address_undeliverable");

    body["fulfillment"]["methods"][0]["destinations"][0]["address_country"] = json!("CN");
    body["fulfillment"]["methods"][0]["destinations"][0]
        .as_object_mut()
        .unwrap()
        .remove("phone_number");
    let no_phone = update(&t.shop, id, body).unwrap();
    assert_eq!(no_phone["messages"][0]["code"], "invalid_address");
    assert_eq!(
        no_phone["messages"][0]["path"],
        "$.fulfillment.methods[0].destinations[0].phone_number"
    );
}

#[test]
fn a_canceled_checkout_can_be_neither_changed_nor_canceled_again() {
    let t = open_shop();
    let checkout = create(&t.shop, one_iphone()).unwrap();
    let id = checkout["id"].as_str().unwrap();
    let canceled = cancel(&t.shop, id).unwrap();
    assert_eq!(canceled["status"], "canceled");
    assert!(canceled.get("expires_at").is_none());
    assert!(verifies(&t, &canceled));
    assert_eq!(
        refusal_code(update(&t.shop, id, one_iphone())),
        "CHECKOUT_CLOSED"
    );
    assert_eq!(refusal_code(cancel(&t.shop, id)), "CHECKOUT_CLOSED");
    assert_eq!(t.shop.get_checkout(id).unwrap()["status"], "canceled");
}

#[test]
fn a_checkout_expires_after_six_hours() {
    let t = open_shop();
    let checkout = create(&t.shop, one_iphone()).unwrap();
    let id = checkout["id"].as_str().unwrap();
    assert_eq!(
        checkout["expires_at"],
        bitselect::clock::format_rfc3339(T0 + CHECKOUT_LIFETIME_MS)
    );
    t.clock.advance(CHECKOUT_LIFETIME_MS);
    assert_eq!(t.shop.get_checkout(id).unwrap()["status"], "canceled");
    assert_eq!(
        refusal_code(update(&t.shop, id, one_iphone())),
        "CHECKOUT_CLOSED"
    );
}

#[test]
fn another_shopper_cannot_see_or_touch_a_checkout() {
    let t = open_shop();
    let checkout = create(&t.shop, one_iphone()).unwrap();
    let id = checkout["id"].as_str().unwrap();
    let other: Caller = t.shop.user_for_subject("someone-else", "别人").unwrap();
    let theirs = t.shop.acting_for(other);
    assert_eq!(refusal_code(theirs.get_checkout(id)), "UNKNOWN_CHECKOUT");
    assert_eq!(refusal_code(cancel(&theirs, id)), "UNKNOWN_CHECKOUT");
    assert_eq!(
        refusal_code(t.shop.get_checkout("chk_nope")),
        "UNKNOWN_CHECKOUT"
    );
    assert_eq!(t.shop.get_checkout(id).unwrap()["status"], "incomplete");
}

#[test]
fn lines_are_checked_as_an_orders_are() {
    let t = open_shop();
    let lines = |items: Value| create(&t.shop, json!({ "line_items": items }));
    assert_eq!(refusal_code(lines(json!([]))), "INVALID_ARGUMENT");
    assert_eq!(
        refusal_code(lines(json!([
            { "item": { "id": "NOPE" }, "quantity": 1 }
        ]))),
        "UNKNOWN_SKU"
    );
    assert_eq!(
        refusal_code(lines(json!([
            { "item": { "id": IPHONE_17 }, "quantity": 1 },
            { "item": { "id": IPHONE_17 }, "quantity": 2 }
        ]))),
        "DUPLICATE_ITEM"
    );
    assert_eq!(
        refusal_code(lines(json!([
            { "item": { "id": IPHONE_17 }, "quantity": 0 }
        ]))),
        "INVALID_ARGUMENT"
    );
    let delisted = lines(json!([{ "item": { "id": IPHONE_16_DELISTED }, "quantity": 1 }])).unwrap();
    // Not JSON of the request's shape: refused, naming what is wrong.
    assert_eq!(
        refusal_code(create(&t.shop, json!({ "line_items": "many" }))),
        "INVALID_ARGUMENT"
    );
    assert_eq!(delisted["messages"][0]["code"], "item_unavailable");
}

#[test]
fn a_keyed_request_sent_again_gets_the_first_answer_and_another_body_is_refused() {
    let t = open_shop();
    let first = t
        .shop
        .create_checkout(&one_iphone(), Some("create-1"))
        .unwrap();
    let again = t
        .shop
        .create_checkout(&one_iphone(), Some("create-1"))
        .unwrap();
    assert!(!first.replayed);
    assert!(again.replayed);
    assert_eq!(again.value, first.value, "byte for byte, signature and all");
    let mut other = one_iphone();
    other["currency"] = json!("EUR");
    assert_eq!(
        refusal_code(t.shop.create_checkout(&other, Some("create-1"))),
        "IDEMPOTENCY_CONFLICT"
    );

    let id = first.value["id"].as_str().unwrap();
    let canceled = t.shop.cancel_checkout(id, Some("cancel-1")).unwrap();
    let canceled_again = t.shop.cancel_checkout(id, Some("cancel-1")).unwrap();
    assert_eq!(canceled_again.value, canceled.value);
    assert_eq!(
        refusal_code(t.shop.cancel_checkout(id, Some("cancel-2"))),
        "CHECKOUT_CLOSED"
    );
}

#[test]
fn a_checkout_of_the_cart_takes_its_lines_and_stays_the_one_checkout_of_it_while_open() {
    let t = open_shop();
    let cart = t
        .shop
        .replace_ucp_cart(
            None,
            &json!({ "line_items": [
                { "item": { "id": IPHONE_17 }, "quantity": 2 },
                { "item": { "id": IPAD_AIR }, "quantity": 1 },
            ] }),
            None,
        )
        .unwrap()
        .value;
    let cart_id = cart["id"].as_str().unwrap();
    // The cart's lines, whatever lines the request names.
    let body = json!({ "cart_id": cart_id, "line_items": [{ "item": { "id": "IGNORED" }, "quantity": 9 }] });
    let checkout = create(&t.shop, body.clone()).unwrap();
    let lines: Vec<(&str, i64)> = checkout["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["item"]["id"].as_str().unwrap(),
                l["quantity"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(lines, [(IPHONE_17, 2), (IPAD_AIR, 1)]);

    let again = create(&t.shop, body.clone()).unwrap();
    assert_eq!(again["id"], checkout["id"], "one open checkout per cart");
    cancel(&t.shop, checkout["id"].as_str().unwrap()).unwrap();
    let fresh = create(&t.shop, body).unwrap();
    assert_ne!(fresh["id"], checkout["id"]);

    assert_eq!(
        refusal_code(create(&t.shop, json!({ "cart_id": "cart_other" }))),
        "UNKNOWN_CART"
    );
}
