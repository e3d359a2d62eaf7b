//! `pay_order`'s hand-over to the online shop's payment page (URL mode):
//! the request opens the page in the shopper's browser; the state names
//! the page and the order. Accepting only says the shopper went there, so
//! the call sent again pays only if the page was paid on.

use rmcp::model::{InputRequiredResult, InputResponses};
use serde_json::json;

use super::{Answered, PAYMENT_KEY, answered, question, state_for_order};
use crate::error::{Result, ShopError};
use crate::money::format_rmb;
use crate::payment_pages::PaymentPage;

const PAGE_STATE_PREFIX: &str = "bitselect/paypage/v1";

/// Why the shopper is sent to a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageRound {
    First,
    /// The last page was not paid on yet: the same page, once more.
    NotPaidYet,
    /// The last page expired unpaid: a new one.
    Expired,
}

/// The request that sends the shopper to `page`, served at `url`.
pub fn page_question(
    page: &PaymentPage,
    url: &str,
    round: PageRound,
) -> Result<InputRequiredResult> {
    let before = match round {
        PageRound::First => "",
        PageRound::NotPaidYet => "支付页面上还没有付款。",
        PageRound::Expired => "上一个支付页面已过期，已换一个新的。",
    };
    let message = format!(
        "{before}请在比特严选收银台支付订单 {}：应付 {}。付款后回到这里确认已完成。",
        page.order_no,
        format_rmb(page.amount)
    );
    question(
        PAYMENT_KEY,
        json!({"mode": "url", "message": message, "url": url, "elicitationId": page.id}),
        format!("{PAGE_STATE_PREFIX}:{}:{}", page.id, page.order_no),
    )
}

/// What the shopper answered to [`page_question`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageAnswer {
    /// The shopper went to the page with this id; whether they paid there
    /// is the page's to say.
    Visited {
        page_id: String,
    },
    Declined,
    Cancelled,
}

/// Reads the answer to [`page_question`] for `order_no`: the state must be
/// one a page question gave for this order.
pub fn page_answer(
    order_no: &str,
    responses: &InputResponses,
    state: Option<&str>,
) -> Result<PageAnswer> {
    let page_id = state_for_order(state, PAGE_STATE_PREFIX, order_no)
        .map(str::to_owned)
        .ok_or_else(|| {
            ShopError::invalid(
                "requestState",
                "支付页面与此订单不符，请重新调用 pay_order 以发起支付",
            )
        })?;
    Ok(match answered(responses, PAYMENT_KEY, "pay_order")? {
        Answered::Accept(_) => PageAnswer::Visited { page_id },
        Answered::Decline => PageAnswer::Declined,
        Answered::Cancel => PageAnswer::Cancelled,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::Value;

    use super::*;

    fn page() -> PaymentPage {
        PaymentPage {
            id: "0123456789abcdef0123456789abcdef".to_owned(),
            order_no: "A1".to_owned(),
            amount: 679_900,
            expires_at: 0,
            paid_at: None,
            order_status: "待支付".to_owned(),
        }
    }

    fn responses(answer: Value) -> InputResponses {
        [(PAYMENT_KEY.to_string(), answer)].into_iter().collect()
    }

    #[test]
    fn the_request_opens_the_page_and_its_state_names_the_page_and_the_order() {
        let url = "https://shop.example/pay/0123456789abcdef0123456789abcdef";
        let question = page_question(&page(), url, PageRound::First).unwrap();
        let text = serde_json::to_value(&question).unwrap();
        let params = &text["inputRequests"][PAYMENT_KEY]["params"];
        assert_eq!(params["mode"], "url");
        assert_eq!(params["url"], url);
        assert!(
            params["message"].as_str().unwrap().contains("¥6,799.00"),
            "{params}"
        );
        let state = question.request_state.unwrap();
        assert!(
            state.contains(&page().id) && state.ends_with(":A1"),
            "{state}"
        );
        let read =
            |answer: Value, order: &str| page_answer(order, &responses(answer), Some(&state));
        assert_eq!(
            read(json!({"action": "accept"}), "A1").unwrap(),
            PageAnswer::Visited { page_id: page().id }
        );
        assert_eq!(
            read(json!({"action": "decline"}), "A1").unwrap(),
            PageAnswer::Declined
        );
        assert!(
            read(json!({"action": "accept"}), "B2").is_err(),
            "another order"
        );
    }
}
