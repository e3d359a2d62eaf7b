//! What a confirmation card shows of a UCP checkout, and whether it may be
//! shown as payable at all.
//!
//! The checkout is the merchant's signed offer: [`verify`] holds it to the
//! merchant's published keys before anything of it is shown, and
//! [`card_content`] turns it into the card's content (the shape previews
//! have, `docs/previews.md`): each line with its title, unit price,
//! quantity and subtotal, every total, the address it ships to, and the
//! merchant's messages (an error stops the approval). The signed checkout
//! itself rides along under [`SIGNED_CHECKOUT`], so that the mandate is
//! made over exactly what the card showed.

use ap2::jws::{self, Jwk, SignatureError};
use serde_json::{Map, Value, json};

/// Where the card's content keeps the checkout it was drawn from.
pub const SIGNED_CHECKOUT: &str = "signedCheckout";

/// The one currency the card's money is written in (fen).
pub const CARD_CURRENCY: &str = "CNY";

/// Why a checkout is not shown as payable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckoutRefusal {
    #[error("the checkout carries no merchant signature (ap2.merchant_authorization)")]
    Unsigned,
    #[error("the merchant's signature does not hold: {0}")]
    Signature(#[from] SignatureError),
    #[error("the checkout is in {0}; cards show renminbi (CNY) only")]
    Currency(String),
}

/// Checks the merchant's signature on `checkout` with its published `keys`.
pub fn verify(checkout: &Value, keys: &[Jwk]) -> Result<(), CheckoutRefusal> {
    let signature = checkout["ap2"]["merchant_authorization"]
        .as_str()
        .ok_or(CheckoutRefusal::Unsigned)?;
    jws::verify_detached(signature, &jws::checkout_payload(checkout), keys)?;
    match checkout["currency"].as_str() {
        Some(CARD_CURRENCY) => Ok(()),
        other => Err(CheckoutRefusal::Currency(
            other.unwrap_or("no currency").to_owned(),
        )),
    }
}

/// The card's content for a verified `checkout`.
pub fn card_content(checkout: &Value) -> Value {
    let mut content = Map::new();
    content.insert(
        "lines".into(),
        Value::Array(items(checkout).map(line).collect()),
    );
    content.insert(
        "totals".into(),
        Value::Array(items_of(&checkout["totals"]).filter_map(total).collect()),
    );
    if let Some(address) = shipping_address(checkout) {
        content.insert("address".into(), address);
    }
    content.insert(
        "warnings".into(),
        Value::Array(
            items_of(&checkout["messages"])
                .filter_map(warning)
                .collect(),
        ),
    );
    content.insert(SIGNED_CHECKOUT.into(), checkout.clone());
    Value::Object(content)
}

/// What a card's `content` promises: all of it, but of a signed checkout
/// in it only what the merchant signed. An ECDSA signature is made anew on
/// every read, so two reads of the same terms differ in its bytes only.
pub fn consequences(content: &Value) -> std::borrow::Cow<'_, Value> {
    match content.get(SIGNED_CHECKOUT) {
        Some(checkout) => {
            let mut promised = content.clone();
            promised[SIGNED_CHECKOUT] = jws::checkout_payload(checkout);
            std::borrow::Cow::Owned(promised)
        }
        None => std::borrow::Cow::Borrowed(content),
    }
}

fn items_of(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

fn items(checkout: &Value) -> impl Iterator<Item = &Value> {
    items_of(&checkout["line_items"])
}

fn amount_of(totals: &Value, kind: &str) -> Option<i64> {
    items_of(totals)
        .find(|total| total["type"] == kind)
        .and_then(|total| total["amount"].as_i64())
}

fn line(item: &Value) -> Value {
    let mut line = json!({
        "name": item["item"]["title"].as_str().or(item["item"]["id"].as_str()).unwrap_or("?"),
        "code": item["item"]["id"],
        "unitPriceFen": item["item"]["price"],
        "quantity": item["quantity"],
    });
    if let Some(subtotal) = amount_of(&item["totals"], "subtotal") {
        line["subtotalFen"] = json!(subtotal);
    }
    line
}

/// A total as the card names it; a kind it has no name for keeps the
/// merchant's own label.
fn total(total: &Value) -> Option<Value> {
    let amount = total["amount"].as_i64()?;
    let kind = match total["type"].as_str()? {
        "subtotal" => "goods",
        "discount" | "items_discount" => "discount",
        "fulfillment" => "shipping",
        "total" => "pay",
        _ => {
            return Some(json!({
                "label": total["display_text"].as_str().or(total["type"].as_str()),
                "amountFen": amount,
            }));
        }
    };
    let mut shown = json!({ "kind": kind, "amountFen": amount });
    if kind == "discount"
        && let Some(label) = total["display_text"].as_str()
    {
        shown["label"] = json!(label);
    }
    Some(shown)
}

/// The destination the fulfillment method has selected.
fn shipping_address(checkout: &Value) -> Option<Value> {
    let method = items_of(&checkout["fulfillment"]["methods"]).next()?;
    let selected = method["selected_destination_id"].as_str()?;
    let destination = items_of(&method["destinations"]).find(|d| d["id"] == selected)?;
    let text = |key: &str| destination[key].as_str().filter(|t| !t.trim().is_empty());
    let name = [text("first_name"), text("last_name")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let street = [
        text("address_region"),
        text("address_locality"),
        text("street_address"),
        text("extended_address"),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    Some(json!({
        "receiverName": name,
        "receiverPhone": text("phone_number"),
        "receiverAddress": street,
    }))
}

/// A merchant's message as a warning; an error blocks the approval.
fn warning(message: &Value) -> Option<Value> {
    let blocking = match message["type"].as_str()? {
        "error" => true,
        "warning" => false,
        _ => return None,
    };
    let text = message["content"].as_str().or(message["code"].as_str())?;
    Some(json!({ "code": message["code"], "message": text, "blocking": blocking }))
}

#[cfg(test)]
mod tests {
    use ap2::jws::SigningKey;
    use pretty_assertions::assert_eq;

    use super::*;

    fn checkout() -> Value {
        json!({
            "id": "chk_1", "status": "ready_for_complete", "currency": "CNY",
            "line_items": [{"id": "li_1", "item": {"id": "MG6W4CH/A", "title": "iPhone 17 256GB 黑色", "price": 599_900},
                            "quantity": 1, "totals": [{"type": "subtotal", "amount": 599_900}]}],
            "totals": [{"type": "subtotal", "amount": 599_900},
                       {"type": "discount", "display_text": "满5000减300", "amount": -30_000},
                       {"type": "fulfillment", "display_text": "运费", "amount": 0},
                       {"type": "total", "amount": 569_900}],
            "fulfillment": {"methods": [{"id": "ship", "selected_destination_id": "addr_1", "destinations": [
                {"id": "addr_1", "first_name": "张三", "phone_number": "13800000000",
                 "address_region": "北京市", "street_address": "海淀区中关村大街 1 号"}]}]},
            "messages": [{"type": "warning", "code": "low_stock", "content": "仅剩 2 件"}],
        })
    }

    #[test]
    fn the_card_shows_the_line_every_total_the_address_and_the_messages() {
        let content = card_content(&checkout());
        assert_eq!(
            content["lines"],
            json!([{"name": "iPhone 17 256GB 黑色", "code": "MG6W4CH/A", "unitPriceFen": 599_900,
                    "quantity": 1, "subtotalFen": 599_900}])
        );
        assert_eq!(
            content["totals"],
            json!([{"kind": "goods", "amountFen": 599_900},
                   {"kind": "discount", "label": "满5000减300", "amountFen": -30_000},
                   {"kind": "shipping", "amountFen": 0},
                   {"kind": "pay", "amountFen": 569_900}])
        );
        assert_eq!(
            content["address"],
            json!({"receiverName": "张三", "receiverPhone": "13800000000",
                   "receiverAddress": "北京市 海淀区中关村大街 1 号"})
        );
        assert_eq!(
            content["warnings"],
            json!([{"code": "low_stock", "message": "仅剩 2 件", "blocking": false}])
        );
        assert_eq!(content[SIGNED_CHECKOUT], checkout());
    }

    #[test]
    fn two_reads_of_the_same_terms_promise_the_same_whatever_their_signatures() {
        let (key, _) = SigningKey::generate().unwrap();
        let first = card_content(&jws::sign_checkout(&key, checkout()).unwrap());
        let again = card_content(&jws::sign_checkout(&key, checkout()).unwrap());
        assert_ne!(first, again, "ECDSA signs anew");
        assert_eq!(consequences(&first), consequences(&again));
        let mut dearer = checkout();
        dearer["totals"][3]["amount"] = json!(599_900);
        let dearer = card_content(&jws::sign_checkout(&key, dearer).unwrap());
        assert_ne!(consequences(&first), consequences(&dearer));
    }

    #[test]
    fn only_a_checkout_the_merchant_signed_as_shown_verifies() {
        let (key, _) = SigningKey::generate().unwrap();
        let signed = jws::sign_checkout(&key, checkout()).unwrap();
        assert_eq!(verify(&signed, &[key.public_jwk()]), Ok(()));

        let mut altered = signed.clone();
        altered["totals"][3]["amount"] = json!(1);
        assert_eq!(
            verify(&altered, &[key.public_jwk()]),
            Err(CheckoutRefusal::Signature(SignatureError::Invalid))
        );
        assert_eq!(
            verify(&checkout(), &[key.public_jwk()]),
            Err(CheckoutRefusal::Unsigned)
        );
        let mut dollars = checkout();
        dollars["currency"] = json!("USD");
        let dollars = jws::sign_checkout(&key, dollars).unwrap();
        assert_eq!(
            verify(&dollars, &[key.public_jwk()]),
            Err(CheckoutRefusal::Currency("USD".into()))
        );
    }
}
