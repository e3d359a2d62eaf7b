//! Completing a checkout: the one place the shop takes a shopper's money
//! through the commerce standard, and only with their mandate.
//!
//! In one transaction: the mandate is new (never accepted before), its
//! signatures hold with a device key bound to this user, the checkout in
//! it is this session and carries the merchant's own signature, and its
//! terms are the session's terms now (a changed price, stock, coupon or
//! address is refused, not charged). Then the order is placed and paid,
//! the session completed, and the mandate kept with the order and the
//! receipt as evidence; a platform that named an order webhook is owed the
//! order's events from then on.

use ap2::jws;
use ap2::mandate::{self, FaultKind, MandateFault};
use serde_json::Value;

use super::checkout::{self, SessionState};
use super::checkout_view;
use super::devices;
use super::negotiation::Active;
use super::order_view;
use super::signing_keys;
use crate::clock::Millis;
use crate::error::{MandateRefusal, Refusal, Result};
use crate::order_events;
use crate::orders;
use crate::store::params;
use crate::users::UserConn;

/// Completes the user's checkout `id` with `presentation` (the request's
/// `ap2.checkout_mandate`) made out to `audience` (the shop's origin);
/// answers the signed, completed checkout with its order.
pub fn complete(
    conn: &UserConn<'_>,
    now: Millis,
    id: &str,
    presentation: Option<&str>,
    audience: &str,
    active: &Active,
) -> Result<Value> {
    let mut session = checkout::get(conn, id)?;
    let presentation = presentation.ok_or(MandateRefusal::Required)?;
    let digest = mandate::digest(presentation);
    let used: i64 = conn.query_row(
        "SELECT COUNT(*) FROM checkout_mandate WHERE digest = ?1",
        params![digest],
        |row| row.get(0),
    )?;
    if used > 0 {
        return Err(MandateRefusal::Replayed.into());
    }
    session.refuse_change(now, "完成")?;

    let kid = mandate::device_key_id(presentation).map_err(refusal)?;
    let Some(device) = devices::find_active(conn, &kid)? else {
        return Err(refusal(MandateFault::UnknownDevice(kid)).into());
    };
    let verified =
        mandate::verify(presentation, now / 1000, audience, &device.jwk).map_err(refusal)?;
    let shown = &verified.checkout;
    let merchant_authorization = shown["ap2"]["merchant_authorization"]
        .as_str()
        .ok_or_else(|| MandateRefusal::MerchantAuthorizationInvalid("没有商家签名".to_owned()))?
        .to_owned();
    jws::verify_detached(
        &merchant_authorization,
        &jws::checkout_payload(shown),
        &signing_keys::published(conn, now)?,
    )
    .map_err(|error| MandateRefusal::MerchantAuthorizationInvalid(error.to_string()))?;
    if shown["id"] != id {
        return Err(MandateRefusal::ScopeMismatch("授权的是另一次结账".to_owned()).into());
    }

    let worked = checkout_view::work(conn, now, &session.inputs)?;
    let current = checkout_view::render_worked(now, &session, &worked, active)?;
    if terms(shown) != terms(&current) {
        return Err(MandateRefusal::ScopeMismatch(changed_terms(shown, &current)).into());
    }
    if let Some(reason) = worked.first_error() {
        return Err(Refusal::CheckoutNotReady {
            id: id.to_owned(),
            reason: reason.to_owned(),
        }
        .into());
    }

    let order = orders::place_paid_checkout_order(conn, now, worked.order_plan())?;
    session.state = SessionState::Completed;
    session.order_no = Some(order.order_no.clone());
    let mut completed = checkout_view::render_worked(now, &session, &worked, active)?;
    completed["order"]["permalink_url"] =
        Value::String(order_view::permalink(audience, &order.order_no));
    let receipt = jws::sign_checkout(&signing_keys::signer(conn)?, completed)?;
    let receipt_text = serde_json::to_string(&receipt)?;
    checkout::mark_completed(conn, now, id, &order.order_no, &receipt_text)?;
    conn.execute(
        "INSERT INTO checkout_mandate (digest, checkout_id, user_id, device_kid, mandate,
                                       merchant_authorization, order_no, receipt, received_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            digest,
            id,
            conn.user(),
            verified.device,
            presentation,
            merchant_authorization,
            order.order_no,
            receipt_text,
            now
        ],
    )?;
    if let Some(webhook) = active.order_webhook() {
        order_events::subscribe(conn, now, &order.order_no, webhook, audience)?;
    }
    tracing::info!(checkout = id, order = %order.order_no, device = %verified.device,
                   "checkout completed with the shopper's mandate");
    Ok(receipt)
}

/// What the shopper agreed to in a checkout: all of it but the merchant's
/// signature (`ap2`) and the protocol's metadata (`ucp`: which
/// capabilities that request negotiated, not what is bought).
fn terms(checkout: &Value) -> Value {
    let mut terms = jws::checkout_payload(checkout);
    if let Some(members) = terms.as_object_mut() {
        members.remove("ucp");
    }
    terms
}

/// Which of the terms the shopper saw differ from the session's now, in
/// a few words for the refusal.
fn changed_terms(shown: &Value, current: &Value) -> String {
    let changed: Vec<&str> = ["line_items", "totals", "discounts", "fulfillment", "status"]
        .into_iter()
        .filter(|member| shown[*member] != current[*member])
        .collect();
    if changed.is_empty() {
        "结账内容有变化".to_owned()
    } else {
        format!("变化的有 {}", changed.join("、"))
    }
}

/// The standard's refusal for a mandate that did not verify, in the
/// shop's words.
fn refusal(fault: MandateFault) -> MandateRefusal {
    let why = match &fault {
        MandateFault::NotKeyBound => "不是带密钥绑定的 SD-JWT".to_owned(),
        MandateFault::NoKeyId => "签发部分没有指明设备密钥（kid）".to_owned(),
        MandateFault::UnknownDevice(kid) => format!("设备密钥 {kid} 没有绑定到这个用户"),
        MandateFault::IssuerSignature(error) | MandateFault::BindingSignature(error) => {
            error.to_string()
        }
        MandateFault::ConfirmationKey => "cnf.jwk 不是签发它的设备密钥".to_owned(),
        MandateFault::DigestAlgorithm => "只接受 sha-256 的 _sd_alg".to_owned(),
        MandateFault::NoExpiry => "没有 exp".to_owned(),
        MandateFault::BindingNoIssueTime => "密钥绑定没有 iat".to_owned(),
        MandateFault::BindingFromTheFuture => "密钥绑定的签发时间在未来".to_owned(),
        MandateFault::PresentationHash => "sd_hash 与出示的内容不符".to_owned(),
        MandateFault::Audience(audience) => format!("授权给的是 {audience}，不是本商城"),
        MandateFault::NoCheckout => "授权里没有结账".to_owned(),
        MandateFault::Nonce => "密钥绑定的 nonce 不是授权里的结账".to_owned(),
        MandateFault::Expired | MandateFault::BindingTooOld => String::new(),
    };
    match fault.kind() {
        FaultKind::Expired => MandateRefusal::Expired,
        FaultKind::ScopeMismatch => MandateRefusal::ScopeMismatch(why),
        FaultKind::InvalidSignature => MandateRefusal::InvalidSignature(why),
    }
}
