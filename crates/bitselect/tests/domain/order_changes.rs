//! Changing a placed order: paying, cancelling and a new address.

use crate::support::*;
use bitselect::params::{CancelOrderParams, ChangeAddressParams, PayOrderParams};
use pretty_assertions::assert_eq;

#[test]
fn cancelling_returns_stock_and_coupon() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPAD_AIR, 1), None).unwrap();
    let placed = t
        .shop
        .create_order(&order_with_coupon(&[(IPAD_AIR, 1)], "EDU-PAD-920"), None)
        .unwrap()
        .value;
    assert_eq!(stock(&t.shop, IPAD_AIR), 53);
    t.clock.advance(5 * MINUTE);
    let cancelled = t
        .shop
        .cancel_order(
            &CancelOrderParams {
                order_no: placed.order_no.clone(),
                reason: Some("不想要了".into()),
            },
            None,
        )
        .unwrap()
        .value;
    assert_eq!(cancelled.previous_status, "待支付");
    assert_eq!(cancelled.coupon_returned.as_deref(), Some("EDU-PAD-920"));
    assert_eq!(cancelled.refund_amount_fen, 0);
    assert_eq!(cancelled.order.status, "已取消");
    assert_eq!(
        cancelled.order.cancelled_at.as_deref(),
        Some("2026-11-29T20:05:00+08:00")
    );
    assert_eq!(stock(&t.shop, IPAD_AIR), 54);
    assert_eq!(
        coupon_status(&t.shop, "EDU-PAD-920"),
        ("未使用".into(), None)
    );
}

#[test]
fn paying_then_cancelling_refunds_what_was_paid() {
    let t = open_shop();
    let paid = t
        .shop
        .pay_order(
            &PayOrderParams {
                order_no: "88236".into(),
            },
            None,
        )
        .unwrap()
        .value;
    assert_eq!(paid.order.status, "已支付待发货");
    assert_eq!(paid.paid_amount_fen, 49_800);
    assert_eq!(
        paid.order.paid_at.as_deref(),
        Some("2026-11-29T20:00:00+08:00")
    );
    let again = t.shop.pay_order(
        &PayOrderParams {
            order_no: "88236".into(),
        },
        None,
    );
    assert_eq!(refusal_code(again), "ORDER_STATUS");

    let before = stock(&t.shop, "MFE94CH/A");
    let cancel = CancelOrderParams {
        order_no: "88236".into(),
        reason: None,
    };
    let cancelled = t.shop.cancel_order(&cancel, None).unwrap().value;
    assert_eq!(cancelled.refund_amount.to_string(), "498.00");
    assert_eq!(stock(&t.shop, "MFE94CH/A"), before + 2);
}

#[test]
fn only_orders_that_have_not_shipped_can_be_cancelled() {
    let t = open_shop();
    let cancel = |no: &str| CancelOrderParams {
        order_no: no.into(),
        reason: None,
    };
    for no in ["88234", "88231", "88237"] {
        let err = t.shop.cancel_order(&cancel(no), None).unwrap_err();
        assert_eq!(err.code(), "ORDER_STATUS", "{no}");
    }
    assert_eq!(
        refusal_code(t.shop.cancel_order(&cancel("99999"), None)),
        "UNKNOWN_ORDER"
    );
    // 88235 is paid but not shipped.
    let cancelled = t.shop.cancel_order(&cancel("88235"), None).unwrap().value;
    assert_eq!(cancelled.refund_amount_fen, 337_800);
}

#[test]
fn the_address_can_change_only_before_shipping() {
    let t = open_shop();
    let change = |no: &str| ChangeAddressParams {
        order_no: no.into(),
        receiver_name: None,
        receiver_phone: Some("13900139000".into()),
        receiver_address: Some("上海市徐汇区漕溪北路 100 号".into()),
    };
    let changed = t.shop.change_address(&change("88235"), None).unwrap().value;
    assert_eq!(changed.previous_receiver.phone, "13800138000");
    assert_eq!(changed.receiver.name, "张明");
    assert_eq!(
        changed.order.receiver.address,
        "上海市徐汇区漕溪北路 100 号"
    );
    assert_eq!(
        refusal_code(t.shop.change_address(&change("88234"), None)),
        "ORDER_STATUS"
    );
    let nothing = ChangeAddressParams {
        order_no: "88236".into(),
        receiver_name: None,
        receiver_phone: None,
        receiver_address: None,
    };
    assert_eq!(
        refusal_code(t.shop.change_address(&nothing, None)),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn new_orders_default_to_the_latest_receiver() {
    let t = open_shop();
    let change = ChangeAddressParams {
        order_no: "88236".into(),
        receiver_name: Some("李华".into()),
        receiver_phone: None,
        receiver_address: None,
    };
    t.shop.change_address(&change, None).unwrap();
    let placed = t
        .shop
        .create_order(&order(&[("MK8T4FE/A", 1)]), None)
        .unwrap()
        .value;
    assert_eq!(placed.receiver.name, "李华");
}
