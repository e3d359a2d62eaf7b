//! A failed call in the standard's words, the same over REST and MCP: the
//! error response (`ucp.status` `error` and one message with a code) and
//! the HTTP status the REST binding answers it with.

use serde_json::{Value, json};

use super::names::UCP_VERSION;
use crate::error::{Refusal, ShopError};

/// The error response for a failed call, and its HTTP status.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: u16,
    pub body: Value,
}

/// `failure` as the standard answers it.
pub fn of(failure: &ShopError) -> Failure {
    match failure {
        ShopError::Refused(refusal) => {
            let (status, code) = match refusal {
                Refusal::UnknownCheckout { .. }
                | Refusal::UnknownCart { .. }
                | Refusal::UnknownDevice { .. }
                | Refusal::UnknownOrder { .. } => (404, "not_found"),
                Refusal::DeviceBindingRefused { .. } => (403, "device_binding_refused"),
                Refusal::CheckoutClosed { .. } => (409, "checkout_closed"),
                Refusal::IdempotencyConflict { .. } => (409, "idempotency_conflict"),
                Refusal::UnknownSku { .. } => (200, "item_unavailable"),
                Refusal::Mandate(reason) => (403, reason.ucp_code()),
                Refusal::CheckoutNotReady { .. } => (409, "checkout_not_ready"),
                _ => (422, "invalid_input"),
            };
            error(status, code, refusal.for_shopper())
        }
        ShopError::InvalidArgument { .. } => error(422, "invalid_input", failure.to_string()),
        ShopError::Unauthenticated => error(401, "identity_required", failure.to_string()),
        ShopError::Unavailable(reason) => {
            tracing::warn!(%reason, "a commerce request met an unavailable database");
            error(
                503,
                "unavailable",
                "商城暂时无法处理这个请求，请稍后用同一个幂等键再试".to_owned(),
            )
        }
        other => {
            tracing::error!(error = %other, "a commerce request failed");
            error(
                500,
                "internal_error",
                "商城暂时无法处理这个请求，请稍后再试".to_owned(),
            )
        }
    }
}

/// An error response with one message. No resource exists to act on for
/// a 404 or a business outcome (200); anything else the caller can mend.
pub fn error(status: u16, code: &str, content: String) -> Failure {
    let severity = if status == 200 || status == 404 {
        "unrecoverable"
    } else {
        "recoverable"
    };
    let body = json!({
        "ucp": { "version": UCP_VERSION, "status": "error" },
        "messages": [{
            "type": "error",
            "code": code,
            "content": content,
            "severity": severity,
        }],
    });
    Failure { status, body }
}
