//! Where the shop asks the shopper in the middle of a call (MCP
//! elicitation through an `input_required` result, revision 2026-07-28):
//! `pay_order` has the amount confirmed and the payment method chosen
//! before it pays. The question goes back to the client with a
//! `requestState` naming the order and the amount shown; the client sends
//! the call again with the shopper's answer and that state, and the shop,
//! which keeps nothing between the two requests, checks both.
//!
//! `create_order` asks which saved address the order goes to when the
//! shopper has more than one and the call names none ([`address`]).
//!
//! Only a client that negotiated 2026-07-28 and declared form elicitation
//! is asked; any other is served as before (its own confirmation card is
//! what approved the payment, and the latest order's receiver is used).

mod address;
mod page;

pub use address::{ADDRESS_KEY, AddressAnswer, address_answer, address_question};
pub use page::{PageAnswer, PageRound, page_answer, page_question};

use rmcp::RoleServer;
use rmcp::model::{
    ElicitationCapability, InputRequests, InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::error::{Result, ShopError};
use crate::money::{Fen, format_rmb};

/// The key of `pay_order`'s question in `inputRequests`.
pub const PAYMENT_KEY: &str = "confirm_payment";

const PAYMENT_STATE_PREFIX: &str = "bitselect/pay/v1";

/// The elicitation the caller declared, when it speaks 2026-07-28 (where
/// a tool may answer `input_required`); `None` for any other caller.
fn elicitation_of(context: &RequestContext<RoleServer>) -> Option<ElicitationCapability> {
    let modern = context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if !modern {
        return None;
    }
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
}

/// Whether the caller can be asked: it speaks 2026-07-28 and shows forms
/// (an elicitation capability naming no mode means forms).
pub fn may_ask(context: &RequestContext<RoleServer>) -> bool {
    elicitation_of(context)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// Whether the caller can be sent to a page: it speaks 2026-07-28 and
/// declared URL-mode elicitation.
pub fn shows_pages(context: &RequestContext<RoleServer>) -> bool {
    elicitation_of(context).is_some_and(|elicitation| elicitation.url.is_some())
}

/// How the shopper pays, as the form offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayMethod {
    Alipay,
    Wechat,
    Card,
}

impl PayMethod {
    const ALL: [PayMethod; 3] = [PayMethod::Alipay, PayMethod::Wechat, PayMethod::Card];

    pub fn code(self) -> &'static str {
        match self {
            PayMethod::Alipay => "alipay",
            PayMethod::Wechat => "wechat",
            PayMethod::Card => "card",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            PayMethod::Alipay => "支付宝",
            PayMethod::Wechat => "微信支付",
            PayMethod::Card => "银行卡",
        }
    }

    fn parse(code: &str) -> Option<PayMethod> {
        PayMethod::ALL.into_iter().find(|m| m.code() == code)
    }
}

/// The question `pay_order` asks before paying `amount` for `order_no`.
pub fn payment_question(order_no: &str, amount: Fen) -> Result<InputRequiredResult> {
    let options: Vec<Value> = PayMethod::ALL
        .iter()
        .map(|m| json!({"const": m.code(), "title": m.title()}))
        .collect();
    let message = format!(
        "确认支付订单 {order_no}：应付 {}。请选择支付方式。",
        format_rmb(amount)
    );
    question(
        PAYMENT_KEY,
        choice_form(message, "method", "支付方式", options),
        format!("{PAYMENT_STATE_PREFIX}:{amount}:{order_no}"),
    )
}

/// One question under `key`: an `elicitation/create` request with these
/// `params`, and the state the call must come back with.
fn question(key: &str, params: Value, state: String) -> Result<InputRequiredResult> {
    let request = json!({"method": "elicitation/create", "params": params});
    let requests: InputRequests = serde_json::from_value(json!({ key: request }))?;
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

/// A form whose one required `field` is a choice among `options`, each
/// `{"const", "title"}`.
fn choice_form(message: String, field: &str, title: &str, options: Vec<Value>) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                field: {"type": "string", "title": title, "oneOf": options}
            },
            "required": [field]
        }
    })
}

/// What the shopper answered to the payment question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentAnswer {
    /// Pay with `method` the amount the question showed.
    Pay {
        method: PayMethod,
        confirmed: Fen,
    },
    Declined,
    Cancelled,
}

/// Reads the answer to [`payment_question`] for `order_no`: the state must
/// be one the question gave for this order.
pub fn payment_answer(
    order_no: &str,
    responses: &InputResponses,
    state: Option<&str>,
) -> Result<PaymentAnswer> {
    let confirmed = state_for_order(state, PAYMENT_STATE_PREFIX, order_no)
        .and_then(|amount| amount.parse::<Fen>().ok())
        .ok_or_else(|| {
            ShopError::invalid(
                "requestState",
                "支付确认与此订单不符，请重新调用 pay_order 以确认支付",
            )
        })?;
    match answered(responses, PAYMENT_KEY, "pay_order")? {
        Answered::Accept(content) => {
            let method = content["method"]
                .as_str()
                .and_then(PayMethod::parse)
                .ok_or_else(|| ShopError::invalid("method", "请选择支付宝、微信支付或银行卡"))?;
            Ok(PaymentAnswer::Pay { method, confirmed })
        }
        Answered::Decline => Ok(PaymentAnswer::Declined),
        Answered::Cancel => Ok(PaymentAnswer::Cancelled),
    }
}

/// The value a `<prefix>:<value>:<order>` state holds for `order_no`;
/// `None` for any other state.
fn state_for_order<'s>(state: Option<&'s str>, prefix: &str, order_no: &str) -> Option<&'s str> {
    state?
        .strip_prefix(prefix)?
        .strip_prefix(':')?
        .split_once(':')
        .filter(|(_, order)| *order == order_no)
        .map(|(value, _)| value)
}

/// What the shopper did with one question (an `ElicitResult`).
enum Answered<'a> {
    /// Accepted, with the form's content (`null` when there is none).
    Accept(&'a Value),
    Decline,
    Cancel,
}

/// The answer to the question under `key` of a `tool` call.
fn answered<'a>(responses: &'a InputResponses, key: &str, tool: &str) -> Result<Answered<'a>> {
    let Some(answer) = responses.get(key) else {
        return Err(ShopError::invalid(
            "inputResponses",
            format!("缺少对 {key} 的回答，请重新调用 {tool}"),
        ));
    };
    match answer["action"].as_str() {
        Some("accept") => Ok(Answered::Accept(&answer["content"])),
        Some("decline") => Ok(Answered::Decline),
        Some("cancel") => Ok(Answered::Cancel),
        _ => Err(ShopError::invalid(
            "inputResponses",
            "回答须为 accept、decline 或 cancel",
        )),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn responses(answer: Value) -> InputResponses {
        [(PAYMENT_KEY.to_string(), answer)].into_iter().collect()
    }

    #[test]
    fn the_question_names_the_amount_and_its_state_names_the_order() {
        let question = payment_question("A1", 679_900).unwrap();
        let text = serde_json::to_value(&question).unwrap();
        let message = text["inputRequests"][PAYMENT_KEY]["params"]["message"]
            .as_str()
            .unwrap();
        assert!(message.contains("应付 ¥6,799.00"), "{message}");
        let state = question.request_state.unwrap();
        let accepted = responses(json!({"action": "accept", "content": {"method": "wechat"}}));
        assert_eq!(
            payment_answer("A1", &accepted, Some(&state)).unwrap(),
            PaymentAnswer::Pay {
                method: PayMethod::Wechat,
                confirmed: 679_900
            }
        );
        assert!(
            payment_answer("B2", &accepted, Some(&state)).is_err(),
            "another order's state"
        );
        assert!(payment_answer("A1", &accepted, None).is_err());
    }

    #[test]
    fn decline_and_cancel_pay_nothing_and_an_unknown_method_is_refused() {
        let state = payment_question("A1", 100).unwrap().request_state.unwrap();
        let read = |answer: Value| payment_answer("A1", &responses(answer), Some(&state));
        assert_eq!(
            read(json!({"action": "decline"})).unwrap(),
            PaymentAnswer::Declined
        );
        assert_eq!(
            read(json!({"action": "cancel"})).unwrap(),
            PaymentAnswer::Cancelled
        );
        assert!(read(json!({"action": "accept", "content": {"method": "cash"}})).is_err());
    }
}
