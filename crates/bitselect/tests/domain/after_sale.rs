//! After-sales: returns and exchanges within their windows, and their
//! progress.

use crate::support::*;
use bitselect::params::{AfterSaleType, ApplyAfterSaleParams, QueryAfterSaleParams};
use pretty_assertions::assert_eq;

fn after_sale(order_no: &str, sku: &str, kind: AfterSaleType) -> ApplyAfterSaleParams {
    ApplyAfterSaleParams {
        order_no: order_no.into(),
        sku_code: sku.into(),
        kind,
        reason: "屏幕有划痕".into(),
    }
}

#[test]
fn the_three_day_delivered_order_can_still_be_returned() {
    let t = open_shop();
    let opened = t
        .shop
        .apply_after_sale(
            &after_sale("88231", IPHONE_17, AfterSaleType::ReturnRefund),
            None,
        )
        .unwrap()
        .value;
    // AS88231001 (an exchange) is completed, so the line is free again.
    assert_eq!(opened.after_sale_no, "AS88231002");
    assert_eq!(
        (opened.kind.as_str(), opened.status.as_str()),
        ("退货退款", "处理中")
    );
    let again = t.shop.apply_after_sale(
        &after_sale("88231", IPHONE_17, AfterSaleType::Exchange),
        None,
    );
    assert_eq!(refusal_code(again), "AFTER_SALE_IN_PROGRESS");
}

#[test]
fn the_ten_day_delivered_order_can_only_be_exchanged() {
    let t = open_shop();
    let err = t
        .shop
        .apply_after_sale(
            &after_sale("88233", "MDH74CH/A", AfterSaleType::ReturnRefund),
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), "AFTER_SALE_WINDOW_CLOSED");
    assert!(err.to_string().contains("type=换货"), "{err}");
    let exchange = t
        .shop
        .apply_after_sale(
            &after_sale("88233", "MDH74CH/A", AfterSaleType::Exchange),
            None,
        )
        .unwrap()
        .value;
    assert_eq!(exchange.kind, "换货");
}

#[test]
fn the_twenty_five_day_delivered_order_can_neither_be_returned_nor_exchanged() {
    let t = open_shop();
    for kind in [AfterSaleType::ReturnRefund, AfterSaleType::Exchange] {
        let err = t
            .shop
            .apply_after_sale(&after_sale("88238", "MJT74CH/A", kind), None)
            .unwrap_err();
        assert_eq!(err.code(), "AFTER_SALE_WINDOW_CLOSED");
        assert!(err.to_string().contains("submit_ticket"), "{err}");
    }
}

#[test]
fn the_return_window_closes_as_the_clock_moves() {
    let t = open_shop();
    t.clock.advance(4 * DAY + 1);
    let err = t
        .shop
        .apply_after_sale(
            &after_sale("88231", IPHONE_17, AfterSaleType::ReturnRefund),
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), "AFTER_SALE_WINDOW_CLOSED");
}

#[test]
fn after_sales_need_a_delivered_order_and_a_line_of_it_without_an_open_request() {
    let t = open_shop();
    let shipped = after_sale("88234", IPAD_AIR, AfterSaleType::Exchange);
    assert_eq!(
        refusal_code(t.shop.apply_after_sale(&shipped, None)),
        "ORDER_STATUS"
    );
    let foreign_line = after_sale("88231", AIRPODS_NO_STOCK, AfterSaleType::Exchange);
    assert_eq!(
        refusal_code(t.shop.apply_after_sale(&foreign_line, None)),
        "NOT_IN_ORDER"
    );
    // AS88232001 is still in progress for the AirPods of 88232.
    let open = after_sale("88232", AIRPODS_NO_STOCK, AfterSaleType::Exchange);
    let err = t.shop.apply_after_sale(&open, None).unwrap_err();
    assert_eq!(err.code(), "AFTER_SALE_IN_PROGRESS");
    assert!(err.to_string().contains("AS88232001"));
    let short_reason = ApplyAfterSaleParams {
        reason: "坏".into(),
        ..after_sale("88231", IPHONE_17, AfterSaleType::Exchange)
    };
    assert_eq!(
        refusal_code(t.shop.apply_after_sale(&short_reason, None)),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn after_sale_progress_by_number_by_order_or_all() {
    let t = open_shop();
    let by_number = t
        .shop
        .query_after_sale(&QueryAfterSaleParams {
            after_sale_no: Some("as88232001".into()),
            order_no: None,
        })
        .unwrap();
    assert_eq!(by_number.after_sales[0].status, "处理中");
    assert_eq!(by_number.after_sales[0].sku_name, "AirPods Pro 3");
    let by_order = t
        .shop
        .query_after_sale(&QueryAfterSaleParams {
            after_sale_no: None,
            order_no: Some("88231".into()),
        })
        .unwrap();
    assert_eq!(by_order.after_sales[0].after_sale_no, "AS88231001");
    assert!(by_order.after_sales[0].finished_at.is_some());
    let all = t
        .shop
        .query_after_sale(&QueryAfterSaleParams::default())
        .unwrap();
    assert_eq!(all.after_sales.len(), 2);
    let unknown = QueryAfterSaleParams {
        after_sale_no: Some("AS1".into()),
        order_no: None,
    };
    assert_eq!(
        refusal_code(t.shop.query_after_sale(&unknown)),
        "UNKNOWN_AFTER_SALE"
    );
}
