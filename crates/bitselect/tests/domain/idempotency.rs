//! Idempotency keys: a repeated call is answered once; a key reused with
//! other arguments is refused.

use crate::support::*;
use pretty_assertions::assert_eq;

#[test]
fn a_repeated_idempotency_key_places_one_order() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 2), None).unwrap();
    let p = order(&[(IPHONE_17, 1)]);
    let first = t.shop.create_order(&p, Some("call-1")).unwrap();
    let again = t.shop.create_order(&p, Some("call-1")).unwrap();
    assert!(!first.replayed);
    assert!(again.replayed);
    assert_eq!(again.value, first.value);
    assert_eq!(t.shop.stats().unwrap().orders, 9);
    assert_eq!(stock(&t.shop, IPHONE_17), 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
}

#[test]
fn reusing_a_key_with_other_arguments_is_refused() {
    let t = open_shop();
    t.shop
        .update_cart_item(&add(IPHONE_17, 1), Some("k"))
        .unwrap();
    let err = t
        .shop
        .update_cart_item(&add(IPHONE_17, 2), Some("k"))
        .unwrap_err();
    assert_eq!(err.code(), "IDEMPOTENCY_CONFLICT");
    let err = t
        .shop
        .create_order(&order(&[(IPHONE_17, 1)]), Some("k"))
        .unwrap_err();
    assert_eq!(err.code(), "IDEMPOTENCY_CONFLICT");
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
}

#[test]
fn a_refused_call_does_not_use_up_its_key() {
    let t = open_shop();
    let p = order(&[(IPHONE_17, 1)]);
    assert_eq!(
        refusal_code(t.shop.create_order(&p, Some("retry"))),
        "NOT_IN_CART"
    );
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let placed = t.shop.create_order(&p, Some("retry")).unwrap();
    assert!(!placed.replayed);
    assert_eq!(placed.value.status, "待支付");
}
