//! The cart: what it shows, and adding, decreasing and removing lines.

use crate::support::*;
use bitselect::params::{CartAction, UpdateCartItemParams};
use pretty_assertions::assert_eq;

#[test]
fn the_cart_shows_prices_then_and_now_stock_and_availability() {
    let t = open_shop();
    let cart = t.shop.query_cart().unwrap();
    assert_eq!(cart.lines.len(), 5);
    assert_eq!(cart.item_count, 6);
    let line = |sku: &str| cart.lines.iter().find(|l| l.sku_code == sku).unwrap();
    let pro = line("MJT74CH/A");
    assert_eq!(
        (
            pro.added_price_fen,
            pro.current_price_fen,
            pro.price_change_fen
        ),
        (1_119_888, 999_900, -119_988)
    );
    assert_eq!(line(AIRPODS_NO_STOCK).availability, "无货");
    assert!(!line(AIRPODS_NO_STOCK).available);
    assert_eq!(line(VISION_PRO_3_LEFT).stock, 3);
    assert_eq!(line("MK8T4FE/A").subtotal_fen, 79_800);
    // 9999 + 1899 + 31999 + 2 × 399 + 379, of which all but the AirPods can be ordered.
    assert_eq!(cart.total_fen, 4_507_400);
    assert_eq!(cart.orderable_total_fen, 4_507_400 - 189_900);
}

#[test]
fn adding_the_delisted_iphone_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .update_cart_item(&add(IPHONE_16_DELISTED, 1), None)
        .unwrap_err();
    assert_eq!(err.code(), "SKU_DELISTED");
    assert!(err.to_string().contains(IPHONE_16_DELISTED));
    assert_eq!(cart_quantity(&t.shop, IPHONE_16_DELISTED), 0);
}

#[test]
fn adding_the_out_of_stock_airpods_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .update_cart_item(&add(AIRPODS_NO_STOCK, 1), None)
        .unwrap_err();
    assert_eq!(err.code(), "OUT_OF_STOCK");
    assert_eq!(
        cart_quantity(&t.shop, AIRPODS_NO_STOCK),
        1,
        "the seeded line is untouched"
    );
}

#[test]
fn adding_an_unknown_sku_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .update_cart_item(&add("NOPE123", 1), None)
        .unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_SKU");
    assert!(err.to_string().contains("search_product"));
}

#[test]
fn adding_again_accumulates_and_keeps_the_first_price() {
    let t = open_shop();
    let first = t
        .shop
        .update_cart_item(&add("mjt74ch/a", 2), None)
        .unwrap()
        .value;
    assert_eq!((first.previous_quantity, first.quantity), (1, 3));
    let line = first
        .cart
        .lines
        .iter()
        .find(|l| l.sku_code == "MJT74CH/A")
        .unwrap();
    assert_eq!(line.added_price_fen, 1_119_888);
}

#[test]
fn adding_more_than_the_stock_is_allowed_but_flagged() {
    let t = open_shop();
    let update = t
        .shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 4), None)
        .unwrap()
        .value;
    assert_eq!(update.quantity, 5);
    assert!(update.note.unwrap().contains("仅剩 3 件"));
    let line = update
        .cart
        .lines
        .iter()
        .find(|l| l.sku_code == VISION_PRO_3_LEFT)
        .unwrap();
    assert_eq!(line.availability, "库存不足（仅剩 3 件）");
}

#[test]
fn decreasing_and_removing_cart_lines() {
    let t = open_shop();
    let decrease = |q| UpdateCartItemParams {
        sku_code: "MK8T4FE/A".into(),
        action: CartAction::Decrease,
        quantity: Some(q),
    };
    let remove = UpdateCartItemParams {
        sku_code: "MK8T4FE/A".into(),
        action: CartAction::Remove,
        quantity: None,
    };
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&decrease(3), None)),
        "DECREASE_TOO_MUCH"
    );
    let down = t.shop.update_cart_item(&decrease(1), None).unwrap().value;
    assert_eq!((down.quantity, down.removed), (1, false));
    let gone = t.shop.update_cart_item(&remove, None).unwrap().value;
    assert!(gone.removed);
    assert_eq!(gone.cart.lines.len(), 4);
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&remove, None)),
        "NOT_IN_CART"
    );
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&decrease(1), None)),
        "NOT_IN_CART"
    );
}

#[test]
fn decreasing_to_zero_removes_the_line() {
    let t = open_shop();
    let update = t
        .shop
        .update_cart_item(
            &UpdateCartItemParams {
                sku_code: "MDF44FE/A".into(),
                action: CartAction::Decrease,
                quantity: Some(1),
            },
            None,
        )
        .unwrap()
        .value;
    assert!(update.removed);
    assert_eq!(cart_quantity(&t.shop, "MDF44FE/A"), 0);
}

#[test]
fn cart_quantities_are_checked() {
    let t = open_shop();
    let missing = UpdateCartItemParams {
        quantity: None,
        ..add(IPHONE_17, 1)
    };
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&missing, None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&add(IPHONE_17, 0), None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&add(IPHONE_17, 100), None)),
        "INVALID_ARGUMENT"
    );
    t.shop.update_cart_item(&add(IPHONE_17, 99), None).unwrap();
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&add(IPHONE_17, 1), None)),
        "CART_LINE_LIMIT"
    );
}
