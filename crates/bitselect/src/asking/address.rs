//! `create_order`'s question: which saved address the order goes to. The
//! form offers the shopper's saved addresses by their titles; the answer
//! names one by its id, which the shop looks up again when it places the
//! order, so an address that is gone by then is refused, not guessed.

use rmcp::model::{InputRequiredResult, InputResponses};
use serde_json::{Value, json};

use super::{Answered, answered, choice_form, question};
use crate::addresses::AddressOffer;
use crate::error::{Result, ShopError};
use crate::money::format_rmb;

/// The key of `create_order`'s question in `inputRequests`.
pub const ADDRESS_KEY: &str = "choose_address";

/// The state the question goes out with: the answer alone names the
/// choice, and the order is the call's own arguments, sent again with it.
const ADDRESS_STATE: &str = "bitselect/address/v1";

/// The question `create_order` asks before placing the order of `offer`.
pub fn address_question(offer: &AddressOffer) -> Result<InputRequiredResult> {
    let options: Vec<Value> = offer
        .addresses
        .iter()
        .map(|a| json!({"const": a.id, "title": a.title}))
        .collect();
    let message = format!(
        "这个订单（{} 件商品，应付 {}）寄到哪里？您有 {} 个收货地址，请选择一个。",
        offer.units,
        format_rmb(offer.pay),
        offer.addresses.len()
    );
    question(
        ADDRESS_KEY,
        choice_form(message, "address", "收货地址", options),
        ADDRESS_STATE.to_owned(),
    )
}

/// What the shopper answered to [`address_question`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressAnswer {
    /// Send the order to the saved address with this id.
    Chosen(String),
    Declined,
    Cancelled,
}

/// Reads the answer to [`address_question`]; the state must be the one it
/// gave.
pub fn address_answer(responses: &InputResponses, state: Option<&str>) -> Result<AddressAnswer> {
    if state != Some(ADDRESS_STATE) {
        return Err(ShopError::invalid(
            "requestState",
            "收货地址的选择与这次下单不符，请重新调用 create_order",
        ));
    }
    match answered(responses, ADDRESS_KEY, "create_order")? {
        Answered::Accept(content) => content["address"]
            .as_str()
            .map(|id| AddressAnswer::Chosen(id.to_owned()))
            .ok_or_else(|| ShopError::invalid("address", "请选择一个收货地址")),
        Answered::Decline => Ok(AddressAnswer::Declined),
        Answered::Cancel => Ok(AddressAnswer::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::addresses::SavedAddress;
    use crate::orders::Receiver;

    fn offer() -> AddressOffer {
        let saved = |id: &str, title: &str| SavedAddress {
            id: id.to_owned(),
            receiver: Receiver {
                name: "张明".to_owned(),
                phone: "13800138000".to_owned(),
                address: title.to_owned(),
            },
            title: title.to_owned(),
        };
        AddressOffer {
            addresses: vec![
                saved("a1", "张明 138****8000 上海市"),
                saved("b2", "李雷 137****7000 北京市"),
            ],
            units: 1,
            pay: 679_900,
        }
    }

    fn responses(answer: Value) -> InputResponses {
        [(ADDRESS_KEY.to_string(), answer)].into_iter().collect()
    }

    #[test]
    fn the_question_offers_each_address_by_its_title_and_names_the_order() {
        let question = address_question(&offer()).unwrap();
        let text = serde_json::to_value(&question).unwrap();
        let params = &text["inputRequests"][ADDRESS_KEY]["params"];
        assert_eq!(params["mode"], "form");
        assert_eq!(
            params["requestedSchema"]["properties"]["address"]["oneOf"],
            json!([
                {"const": "a1", "title": "张明 138****8000 上海市"},
                {"const": "b2", "title": "李雷 137****7000 北京市"}
            ])
        );
        let message = params["message"].as_str().unwrap();
        assert!(message.contains("应付 ¥6,799.00"), "{message}");
        assert!(message.contains("2 个收货地址"), "{message}");
    }

    #[test]
    fn the_answer_names_the_choice_or_says_no_order_is_wanted() {
        let state = address_question(&offer()).unwrap().request_state;
        let read = |answer: Value| address_answer(&responses(answer), state.as_deref());
        assert_eq!(
            read(json!({"action": "accept", "content": {"address": "b2"}})).unwrap(),
            AddressAnswer::Chosen("b2".to_owned())
        );
        assert_eq!(
            read(json!({"action": "decline"})).unwrap(),
            AddressAnswer::Declined
        );
        assert_eq!(
            read(json!({"action": "cancel"})).unwrap(),
            AddressAnswer::Cancelled
        );
        assert!(read(json!({"action": "accept", "content": {}})).is_err());
        let chosen = responses(json!({"action": "accept", "content": {"address": "b2"}}));
        assert!(address_answer(&chosen, Some("bitselect/pay/v1:1:A1")).is_err());
    }
}
