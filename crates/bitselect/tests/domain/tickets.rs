//! Support tickets: numbered and checked.

use crate::support::*;
use bitselect::params::{SubmitTicketParams, TicketTopic};
use pretty_assertions::assert_eq;

#[test]
fn tickets_are_numbered_and_checked() {
    let t = open_shop();
    let ticket = |order: Option<&str>, description: &str| SubmitTicketParams {
        topic: Some(TicketTopic::AfterSale),
        order_no: order.map(Into::into),
        description: description.into(),
    };
    let first = t
        .shop
        .submit_ticket(
            &ticket(Some("88238"), "手机超过换货期后出现质量问题，希望维修"),
            None,
        )
        .unwrap()
        .value;
    assert_eq!(
        (first.ticket_no.as_str(), first.status.as_str()),
        ("TK000001", "待处理")
    );
    assert_eq!(first.topic, "售后问题");
    let second = t
        .shop
        .submit_ticket(&ticket(None, "想咨询以旧换新"), None)
        .unwrap()
        .value;
    assert_eq!(second.ticket_no, "TK000002");
    assert_eq!(
        refusal_code(
            t.shop
                .submit_ticket(&ticket(Some("1"), "订单号不存在的问题"), None)
        ),
        "UNKNOWN_ORDER"
    );
    assert_eq!(
        refusal_code(t.shop.submit_ticket(&ticket(None, "短"), None)),
        "INVALID_ARGUMENT"
    );
}
