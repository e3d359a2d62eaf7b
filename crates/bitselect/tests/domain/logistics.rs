//! Logistics: tracing the parcels of the user's orders.

use crate::support::*;
use bitselect::params::QueryLogisticsParams;
use pretty_assertions::assert_eq;

fn trace(tracking: Option<&str>, order: Option<&str>) -> QueryLogisticsParams {
    QueryLogisticsParams {
        tracking_no: tracking.map(Into::into),
        order_no: order.map(Into::into),
    }
}

#[test]
fn a_delivered_parcel_traces_newest_first() {
    let t = open_shop();
    let result = t
        .shop
        .query_logistics(&trace(Some("BIT9100000231"), None))
        .unwrap();
    assert_eq!(result.order_no, "88231");
    assert!(result.delivered);
    assert_eq!(result.events.len(), 4);
    assert_eq!(result.events[0].description, "已签收，签收人：本人");
    assert_eq!(result.events[3].description, "包裹已揽收");
}

#[test]
fn a_parcel_in_transit_can_be_found_by_its_order() {
    let t = open_shop();
    let result = t.shop.query_logistics(&trace(None, Some("88234"))).unwrap();
    assert_eq!(result.tracking_no, "BIT9100000234");
    assert!(!result.delivered);
    assert_eq!(result.latest.unwrap().description, "快件已发出");
}

#[test]
fn tracking_numbers_not_on_the_users_orders_are_refused() {
    let t = open_shop();
    let err = t
        .shop
        .query_logistics(&trace(Some("SF1234567890"), None))
        .unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_TRACKING_NO");
    assert!(err.to_string().contains("SF1234567890"));
    assert_eq!(
        refusal_code(t.shop.query_logistics(&trace(None, Some("88236")))),
        "NOT_SHIPPED"
    );
    assert_eq!(
        refusal_code(t.shop.query_logistics(&trace(None, None))),
        "INVALID_ARGUMENT"
    );
}
