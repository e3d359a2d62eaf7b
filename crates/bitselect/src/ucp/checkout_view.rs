//! A checkout session as the standard's checkout object: its lines at
//! today's prices, the coupon, the shipping destinations and every total,
//! worked out by the shop's order rules at the moment of the answer, with
//! a message for each thing that stands between it and an order.

use serde_json::{Value, json};

use super::checkout::{Inputs, PostalDestination, Session, SessionState};
use super::consent;
use super::names::{BUYER_CONSENT, CHECKOUT_CAPABILITIES, CURRENCY, UCP_VERSION};
use super::negotiation::Active;
use super::signing_keys;
use crate::addresses::{self, SavedAddress};
use crate::clock::{Millis, format_rfc3339};
use crate::coupons::Basket;
use crate::error::{Blockers, CouponRefusal, Refusal, Result, ShopError};
use crate::orders::{self, LineSource, OrderPlan, PlannedCoupon, PlannedLine, Receiver};
use crate::users::UserConn;
use ap2::jws;

const SHIPPING_METHOD_ID: &str = "shipping";
const PACKAGE_ID: &str = "package_1";
const STANDARD_OPTION_ID: &str = "standard";
const STANDARD_OPTION_TITLE: &str = "标准快递（包邮）";

/// What the shop makes of a session's inputs now: the order it would
/// place, and a message for everything in the way or not taken.
#[derive(Debug, Clone)]
pub struct Worked {
    pub lines: Vec<PlannedLine>,
    pub basket: Basket,
    pub coupon: Option<PlannedCoupon>,
    pub saved: Vec<SavedAddress>,
    /// The selected destination, when the shop can ship to it.
    pub destination: Option<(String, Receiver)>,
    pub messages: Vec<Value>,
}

impl Worked {
    /// The first error that stands between the checkout and an order.
    pub fn first_error(&self) -> Option<&str> {
        self.messages
            .iter()
            .find(|m| m["type"] == "error")
            .and_then(|m| m["content"].as_str())
    }

    /// The discount the coupon gives, 0 when none applies.
    pub fn discount(&self) -> i64 {
        self.coupon.as_ref().and_then(|c| c.discount).unwrap_or(0)
    }

    /// The order to place: the lines, the coupon if it applies, the
    /// destination's receiver; its blockers say what is in the way.
    pub fn order_plan(&self) -> OrderPlan {
        let mut blockers = Blockers::default();
        if self.destination.is_none() {
            blockers.push(Refusal::NoDefaultReceiver);
        }
        OrderPlan {
            lines: self.lines.clone(),
            basket: self.basket.clone(),
            coupon: self.coupon.clone().filter(|c| c.discount.is_some()),
            receiver: self.destination.as_ref().map(|(_, r)| r.clone()),
            blockers,
        }
    }
}

/// Works out `inputs` by the shop's order rules at `now`.
pub fn work(conn: &UserConn<'_>, now: Millis, inputs: &Inputs) -> Result<Worked> {
    let mut messages = Vec::new();
    let mut lines = Vec::with_capacity(inputs.lines.len());
    for (index, line) in inputs.lines.iter().enumerate() {
        let mut blockers = Blockers::default();
        let planned = orders::plan_lines(
            conn,
            vec![(line.sku.clone(), line.quantity)],
            LineSource::Checkout,
            &mut blockers,
        )?;
        lines.extend(planned);
        for refusal in blockers.iter() {
            messages.push(error(
                line_code(refusal),
                &format!("$.line_items[{index}]"),
                refusal.for_shopper(),
            ));
        }
    }
    let basket = orders::basket_of(&lines);
    let coupon = coupon(conn, now, inputs, &basket, &mut messages)?;
    let saved = addresses::saved(conn)?;
    let destination = selected_destination(inputs, &saved, &mut messages);
    Ok(Worked {
        lines,
        basket,
        coupon,
        saved,
        destination,
        messages,
    })
}

/// The checkout object for `session` now (without the merchant's
/// signature, which the shop adds last).
pub fn render(
    conn: &UserConn<'_>,
    now: Millis,
    session: &Session,
    active: &Active,
) -> Result<Value> {
    let worked = work(conn, now, &session.inputs)?;
    render_worked(now, session, &worked, active)
}

/// The checkout object for `session` as `worked` out.
pub fn render_worked(
    now: Millis,
    session: &Session,
    worked: &Worked,
    active: &Active,
) -> Result<Value> {
    let inputs = &session.inputs;
    let status = match session.state {
        SessionState::Completed => "completed",
        SessionState::Canceled => "canceled",
        SessionState::Open if now >= session.expires_at => "canceled",
        SessionState::Open if worked.first_error().is_some() => "incomplete",
        SessionState::Open => "ready_for_complete",
    };
    let discount = worked.discount();
    let line_ids: Vec<&str> = inputs.lines.iter().map(|l| l.id.as_str()).collect();
    let mut totals = vec![total("subtotal", worked.basket.total)];
    if discount > 0 {
        let name = worked
            .coupon
            .as_ref()
            .map(|c| c.name.as_str())
            .unwrap_or_default();
        totals.push(json!({"type": "discount", "display_text": name, "amount": -discount}));
    }
    totals.push(json!({"type": "fulfillment", "display_text": "运费", "amount": 0}));
    totals.push(total("total", worked.basket.total - discount));

    let selected = worked.destination.as_ref().map(|(id, _)| id.as_str());
    let mut checkout = json!({
        "ucp": ucp_meta(active),
        "id": session.id,
        "status": status,
        "currency": CURRENCY,
        "line_items": inputs.lines.iter().zip(&worked.lines).map(|(input, planned)| {
            line_item(&input.id, planned)
        }).collect::<Vec<_>>(),
        "totals": totals,
        "fulfillment": fulfillment(&line_ids, inputs, &worked.saved, selected),
        "discounts": discounts(inputs, worked.coupon.as_ref()),
        "messages": worked.messages,
        "links": [],
    });
    if let Some(buyer) = &inputs.buyer {
        checkout["buyer"] = serde_json::to_value(buyer)?;
    }
    if active.contains(BUYER_CONSENT) {
        let decisions = inputs.buyer.as_ref().and_then(|b| b.consent.as_ref());
        checkout["buyer"]["consent"] = consent::render(decisions);
    } else if let Some(buyer) = checkout["buyer"].as_object_mut() {
        // Decisions are answered only to a platform that speaks of them.
        buyer.remove("consent");
    }
    if status != "completed" && status != "canceled" {
        checkout["expires_at"] = json!(format_rfc3339(session.expires_at));
    }
    if let Some(order_no) = &session.order_no {
        checkout["order"] = json!({ "id": order_no, "label": order_no });
    }
    Ok(checkout)
}

/// [`render`], signed by the merchant's current key: what every checkout
/// answer is. Run in the transaction that read the session, so what is
/// signed is what was stored.
pub fn signed(
    conn: &UserConn<'_>,
    now: Millis,
    session: &Session,
    active: &Active,
) -> Result<Value> {
    if let Some(receipt) = &session.receipt {
        return Ok(serde_json::from_str(receipt)?);
    }
    let checkout = render(conn, now, session, active)?;
    Ok(jws::sign_checkout(&signing_keys::signer(conn)?, checkout)?)
}

/// The `ucp` member of a checkout answer: the capabilities active for it.
pub fn ucp_meta(active: &Active) -> Value {
    let capabilities: serde_json::Map<String, Value> = active
        .names
        .iter()
        .filter(|name| CHECKOUT_CAPABILITIES.contains(&name.as_str()))
        .map(|name| (name.clone(), json!([{ "version": UCP_VERSION }])))
        .collect();
    json!({
        "version": UCP_VERSION,
        "status": "success",
        "capabilities": capabilities,
        "payment_handlers": {},
    })
}

fn total(kind: &str, amount: i64) -> Value {
    json!({ "type": kind, "amount": amount })
}

fn error(code: &str, path: &str, content: String) -> Value {
    json!({
        "type": "error",
        "code": code,
        "path": path,
        "content": content,
        "severity": "recoverable",
    })
}

fn warning(code: &str, path: &str, content: String) -> Value {
    json!({ "type": "warning", "code": code, "path": path, "content": content })
}

/// The standard's code for what keeps a line from being ordered.
fn line_code(refusal: &Refusal) -> &'static str {
    match refusal {
        Refusal::OutOfStock { .. } | Refusal::InsufficientStock { .. } => "out_of_stock",
        _ => "item_unavailable",
    }
}

fn line_item(id: &str, planned: &PlannedLine) -> Value {
    let amount = planned.sku.price_fen * planned.quantity;
    json!({
        "id": id,
        "item": {
            "id": planned.sku.sku_code,
            "title": planned.sku.name,
            "price": planned.sku.price_fen,
        },
        "quantity": planned.quantity,
        "totals": [total("subtotal", amount), total("total", amount)],
    })
}

/// The first code, as `create_order` would use it (an order takes one
/// coupon); a warning for each code that does not take effect.
fn coupon(
    conn: &UserConn<'_>,
    now: Millis,
    inputs: &Inputs,
    basket: &Basket,
    messages: &mut Vec<Value>,
) -> Result<Option<PlannedCoupon>> {
    let Some(first) = inputs.codes.first() else {
        return Ok(None);
    };
    for (index, code) in inputs.codes.iter().enumerate().skip(1) {
        messages.push(warning(
            "discount_code_combination_disallowed",
            &format!("$.discounts.codes[{index}]"),
            format!("一个订单只能用一张优惠券，{code} 没有使用"),
        ));
    }
    let mut blockers = Blockers::default();
    let planned = orders::plan_coupon(conn, now, first, basket, &mut blockers)?;
    for refusal in blockers.iter() {
        messages.push(warning(
            coupon_code(refusal),
            "$.discounts.codes[0]",
            refusal.for_shopper(),
        ));
    }
    Ok(planned)
}

/// The standard's code (or the closest freeform one) for a coupon that
/// does not apply.
fn coupon_code(refusal: &Refusal) -> &'static str {
    match refusal {
        Refusal::Coupon(CouponRefusal::Expired { .. }) => "discount_code_expired",
        Refusal::Coupon(CouponRefusal::AlreadyUsed { .. }) => "discount_code_used",
        Refusal::Coupon(CouponRefusal::NotYetValid { .. }) => "discount_code_not_yet_valid",
        Refusal::Coupon(CouponRefusal::BelowThreshold { .. }) => "discount_code_threshold_not_met",
        Refusal::Coupon(_) => "discount_code_not_applicable",
        _ => "discount_code_invalid",
    }
}

fn discounts(inputs: &Inputs, coupon: Option<&PlannedCoupon>) -> Value {
    let applied: Vec<Value> = coupon
        .and_then(|c| {
            c.discount.map(|amount| {
                json!({ "code": c.code, "title": c.name, "amount": amount, "method": "across" })
            })
        })
        .into_iter()
        .collect();
    json!({ "codes": inputs.codes, "applied": applied })
}

/// Where the order would ship: the selected destination's id and
/// receiver when it is one the shop can ship to, else a message says what
/// is missing.
fn selected_destination(
    inputs: &Inputs,
    saved: &[SavedAddress],
    messages: &mut Vec<Value>,
) -> Option<(String, Receiver)> {
    let path = "$.fulfillment.methods[0].selected_destination_id";
    let Some(id) = inputs.selected_destination.as_deref() else {
        messages.push(error(
            "fulfillment_destination_required",
            path,
            "请选择或填写收货地址".to_owned(),
        ));
        return None;
    };
    if let Some(found) = saved.iter().find(|s| s.id == id) {
        return Some((id.to_owned(), found.receiver.clone()));
    }
    let Some((index, given)) = inputs
        .destinations
        .iter()
        .enumerate()
        .find(|(_, d)| d.id.as_deref() == Some(id))
    else {
        messages.push(error(
            "fulfillment_destination_unknown",
            path,
            format!("没有编号为 {id} 的收货地址"),
        ));
        return None;
    };
    match given.receiver() {
        Ok(receiver) => Some((id.to_owned(), receiver)),
        Err(ShopError::InvalidArgument { field, message }) => {
            let code = if field == "address_country" {
                "address_undeliverable"
            } else {
                "invalid_address"
            };
            let field = match field.as_str() {
                "receiverName" => "first_name",
                "receiverPhone" => "phone_number",
                "receiverAddress" => "street_address",
                other => other,
            };
            messages.push(error(
                code,
                &format!("$.fulfillment.methods[0].destinations[{index}].{field}"),
                message,
            ));
            None
        }
        Err(other) => {
            messages.push(error(
                "invalid_address",
                &format!("$.fulfillment.methods[0].destinations[{index}]"),
                other.to_string(),
            ));
            None
        }
    }
}

fn fulfillment(
    line_ids: &[&str],
    inputs: &Inputs,
    saved: &[SavedAddress],
    selected: Option<&str>,
) -> Value {
    let mut destinations: Vec<Value> = saved.iter().map(saved_destination).collect();
    destinations.extend(inputs.destinations.iter().map(given_destination));
    let mut method = json!({
        "id": SHIPPING_METHOD_ID,
        "type": "shipping",
        "line_item_ids": line_ids,
        "destinations": destinations,
        "groups": [{
            "id": PACKAGE_ID,
            "line_item_ids": line_ids,
            "options": [{
                "id": STANDARD_OPTION_ID,
                "title": STANDARD_OPTION_TITLE,
                "totals": [total("fulfillment", 0), total("total", 0)],
            }],
        }],
    });
    if let Some(id) = selected {
        method["selected_destination_id"] = json!(id);
        // One option, free: chosen with the destination.
        method["groups"][0]["selected_option_id"] = json!(STANDARD_OPTION_ID);
    }
    json!({ "methods": [method] })
}

fn saved_destination(saved: &SavedAddress) -> Value {
    json!({
        "type": "shipping_address",
        "id": saved.id,
        "first_name": saved.receiver.name,
        "phone_number": saved.receiver.phone,
        "street_address": saved.receiver.address,
        "address_country": "CN",
    })
}

fn given_destination(given: &PostalDestination) -> Value {
    let mut value = json!({ "type": "shipping_address" });
    let fields = [
        ("id", &given.id),
        ("first_name", &given.first_name),
        ("last_name", &given.last_name),
        ("phone_number", &given.phone_number),
        ("address_country", &given.address_country),
        ("address_region", &given.address_region),
        ("address_locality", &given.address_locality),
        ("street_address", &given.street_address),
        ("extended_address", &given.extended_address),
        ("postal_code", &given.postal_code),
    ];
    for (name, field) in fields {
        if let Some(text) = field {
            value[name] = json!(text);
        }
    }
    value
}
