//! Placing orders from the cart, and reading orders back.

use std::sync::{Arc, Barrier};

use crate::support::*;
use bitselect::params::{OrderStatus, QueryOrderParams};
use bitselect::{Refusal, ShopError};
use pretty_assertions::assert_eq;

#[test]
fn the_seed_purchase_reserves_stock_and_empties_the_cart_line() {
    let t = open_shop();
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let order = t
        .shop
        .create_order(&order(&[(IPHONE_17, 1)]), None)
        .unwrap()
        .value;
    assert_eq!(order.order_no, "88239", "numbering continues from the seed");
    assert_eq!(order.status, "待支付");
    assert_eq!(order.pay_amount_fen, 679_900);
    assert_eq!(order.lines[0].sku_name, "iPhone 17 256GB 黑色");
    assert_eq!(order.receiver.name, "张明", "the latest order's receiver");
    assert_eq!(order.created_at, "2026-11-29T20:00:00+08:00");
    assert_eq!(
        order.next_actions,
        ["pay_order", "cancel_order", "change_address"]
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 0);
    assert_eq!(t.shop.query_cart().unwrap().lines.len(), 5);
}

#[test]
fn ordering_part_of_a_cart_line_leaves_the_rest() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 3), None).unwrap();
    t.shop
        .create_order(&order(&[(IPHONE_17, 2)]), None)
        .unwrap();
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
    assert_eq!(stock(&t.shop, IPHONE_17), 8);
}

#[test]
fn ordering_what_is_not_in_the_cart_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[(IPHONE_17, 1)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "NOT_IN_CART");
    assert!(
        err.to_string()
            .contains("购物车中没有 MG6W4CH/A，请先调用 update_cart_item"),
        "{err}"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
    assert_eq!(t.shop.stats().unwrap().orders, 8);
}

#[test]
fn ordering_more_than_the_cart_holds_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[("MK8T4FE/A", 3)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "CART_QUANTITY_SHORT");
    assert_eq!(cart_quantity(&t.shop, "MK8T4FE/A"), 2);
}

#[test]
fn ordering_the_out_of_stock_airpods_in_the_cart_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[(AIRPODS_NO_STOCK, 1)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "OUT_OF_STOCK");
}

#[test]
fn ordering_the_delisted_iphone_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[(IPHONE_16_DELISTED, 1)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "SKU_DELISTED");
}

#[test]
fn ordering_beyond_the_stock_is_refused_and_changes_nothing() {
    let t = open_shop();
    t.shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 3), None)
        .unwrap();
    let err = t
        .shop
        .create_order(&order(&[("MK8T4FE/A", 1), (VISION_PRO_3_LEFT, 4)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "INSUFFICIENT_STOCK");
    assert!(err.to_string().contains("仅剩 3 件"), "{err}");
    assert_eq!(
        stock(&t.shop, "MK8T4FE/A"),
        393,
        "the first line was not reserved"
    );
    assert_eq!(cart_quantity(&t.shop, "MK8T4FE/A"), 2);
}

#[test]
fn malformed_orders_are_refused() {
    let t = open_shop();
    assert_eq!(
        refusal_code(t.shop.create_order(&order(&[]), None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        refusal_code(
            t.shop
                .create_order(&order(&[("MK8T4FE/A", 1), ("mk8t4fe/a", 1)]), None)
        ),
        "DUPLICATE_ITEM"
    );
    assert_eq!(
        refusal_code(t.shop.create_order(&order(&[("MK8T4FE/A", 0)]), None)),
        "INVALID_ARGUMENT"
    );
    let bad_phone = bitselect::params::CreateOrderParams {
        receiver_phone: Some("call me".into()),
        ..order(&[("MK8T4FE/A", 1)])
    };
    assert_eq!(
        refusal_code(t.shop.create_order(&bad_phone, None)),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn a_given_receiver_field_overrides_only_itself() {
    let t = open_shop();
    let p = bitselect::params::CreateOrderParams {
        receiver_address: Some("北京市海淀区中关村大街 1 号".into()),
        ..order(&[("MK8T4FE/A", 1)])
    };
    let created = t.shop.create_order(&p, None).unwrap().value;
    assert_eq!(created.receiver.name, "张明");
    assert_eq!(created.receiver.phone, "13800138000");
    assert_eq!(created.receiver.address, "北京市海淀区中关村大街 1 号");
}

#[test]
fn ten_concurrent_orders_for_the_last_three_vision_pros_make_exactly_three() {
    let t = open_shop();
    // The cart holds 1; make it 10 so only stock can stop an order.
    t.shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 9), None)
        .unwrap();
    let barrier = Arc::new(Barrier::new(10));
    let handles: Vec<_> = (0..10)
        .map(|_| {
            let shop = t.shop.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                shop.create_order(&order(&[(VISION_PRO_3_LEFT, 1)]), None)
            })
        })
        .collect();
    let outcomes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let placed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(placed.len(), 3);
    for refused in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert!(
            matches!(
                refused,
                ShopError::Refused(Refusal::InsufficientStock { .. } | Refusal::OutOfStock { .. })
            ),
            "{refused}"
        );
    }
    let mut numbers: Vec<_> = placed.iter().map(|w| w.value.order_no.clone()).collect();
    numbers.sort();
    assert_eq!(numbers, ["88239", "88240", "88241"]);
    assert_eq!(stock(&t.shop, VISION_PRO_3_LEFT), 0);
    assert_eq!(cart_quantity(&t.shop, VISION_PRO_3_LEFT), 7);
    assert_eq!(t.shop.stats().unwrap().orders, 11);
}

// ---- queries ---------------------------------------------------------------

#[test]
fn one_order_comes_back_in_full() {
    let t = open_shop();
    let list = t.shop.query_order(&one_order("88234")).unwrap();
    let order = &list.orders[0];
    assert_eq!(order.status, "已发货");
    assert_eq!(order.lines.len(), 2);
    assert_eq!(order.total_amount_fen, 699_800);
    assert_eq!(order.tracking_no.as_deref(), Some("BIT9100000234"));
    assert!(order.paid_at.is_some() && order.shipped_at.is_some());
    assert_eq!(order.received_at, None);
    assert_eq!(order.after_sale_windows, None);
    assert_eq!(
        refusal_code(t.shop.query_order(&one_order("1"))),
        "UNKNOWN_ORDER"
    );
}

#[test]
fn recent_orders_come_newest_first_and_filter_by_status() {
    let t = open_shop();
    let recent = t
        .shop
        .query_order(&QueryOrderParams {
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    let numbers: Vec<_> = recent.orders.iter().map(|o| o.order_no.as_str()).collect();
    assert_eq!(numbers, ["88236", "88235", "88234"]);
    assert_eq!(recent.matched, 8);
    let delivered = t
        .shop
        .query_order(&QueryOrderParams {
            status: Some(OrderStatus::Delivered),
            limit: Some(20),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(delivered.matched, 4);
    assert!(delivered.orders.iter().all(|o| o.status == "已签收"));
}

#[test]
fn delivered_orders_show_days_left_in_both_windows() {
    let t = open_shop();
    let windows = |no: &str| {
        let w = t.shop.query_order(&one_order(no)).unwrap().orders[0]
            .after_sale_windows
            .clone()
            .unwrap();
        (w.return_days_left, w.exchange_days_left)
    };
    assert_eq!(windows("88231"), (4, 12));
    assert_eq!(windows("88233"), (0, 5));
    assert_eq!(windows("88232"), (0, 1));
    assert_eq!(windows("88238"), (0, 0));
}
