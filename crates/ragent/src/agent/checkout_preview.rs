//! The card of a UCP merchant's completion or cancellation of a checkout,
//! drawn from the checkout as the merchant signed it: read with
//! the binding's `get_checkout`, its signature checked with the keys the
//! merchant publishes, then shown. A checkout that cannot be read, whose
//! signature does not hold, or that this device could not sign a mandate
//! for is shown as not payable, and the reason is told.

use serde_json::Value;

use crate::agent::inner::Inner;
use crate::agent::tools::KnownTool;
use crate::mcp::{ToolInvocation, UNWATCHED};
use crate::protocol::{CheckoutProblem, PreviewOutcome};
use crate::ucp::binding::{GET_CHECKOUT, MerchantBinding, Operation, checkout_id, read_checkout};
use crate::ucp::checkout_card::{self, CheckoutRefusal};
use crate::ucp::device::DeviceKey;

fn not_payable(problem: CheckoutProblem) -> PreviewOutcome {
    PreviewOutcome::NotPayable { problem }
}

/// What a call of `write` with `arguments` would act on.
pub(crate) async fn outcome(
    inner: &Inner,
    write: &KnownTool,
    read: Option<&KnownTool>,
    arguments: &Value,
) -> PreviewOutcome {
    let Some(merchant) = write.info.merchant.as_ref() else {
        return not_payable(CheckoutProblem::NotTrusted);
    };
    // The core reads the checkout by itself only where it may run the
    // read without asking: a trusted server's read.
    let Some(read) = read.filter(|read| !read.facts.can_change()) else {
        return not_payable(CheckoutProblem::NotTrusted);
    };
    let Some(id) = checkout_id(arguments) else {
        return not_payable(CheckoutProblem::CheckoutUnreadable {
            detail: "the call names no checkout (id)".into(),
        });
    };
    let checkout = match read_signed(inner, read, id).await {
        Ok(checkout) => checkout,
        Err(outcome) => return outcome,
    };
    if let Err(problem) = verified(inner, merchant, &checkout).await {
        return not_payable(problem);
    }
    if Operation::of(&write.info.name) == Operation::CompleteCheckout
        && let Err(detail) = bound_device(inner, &write.info.server, merchant).await
    {
        return not_payable(CheckoutProblem::DeviceNotBound { detail });
    }
    PreviewOutcome::Computed {
        content: checkout_card::card_content(&checkout),
    }
}

/// The checkout `id` as the merchant answers it; the merchant's refusal
/// (an unknown checkout) as it words it.
async fn read_signed(inner: &Inner, read: &KnownTool, id: &str) -> Result<Value, PreviewOutcome> {
    let invocation = ToolInvocation {
        server: read.info.server.clone(),
        tool: GET_CHECKOUT.into(),
        arguments: read_checkout(id),
        idempotency_key: None,
        retry: None,
    };
    let output = match inner.tools.call_tool(invocation, UNWATCHED).await {
        Ok(outcome) => outcome.into_output(),
        Err(error) => {
            return Err(PreviewOutcome::Unavailable {
                message: error.to_string(),
            });
        }
    };
    if output.is_error {
        return Err(PreviewOutcome::Refused {
            message: output.text,
        });
    }
    output.structured.filter(Value::is_object).ok_or_else(|| {
        not_payable(CheckoutProblem::CheckoutUnreadable {
            detail: "get_checkout answered without a checkout".into(),
        })
    })
}

/// Whether the merchant's published keys verify `checkout`.
async fn verified(
    inner: &Inner,
    merchant: &MerchantBinding,
    checkout: &Value,
) -> Result<(), CheckoutProblem> {
    let checked = inner
        .merchant_profiles
        .fetch_checked(&merchant.origin, |published| {
            checkout_card::verify(checkout, &published.keys)
        })
        .await
        .map_err(|error| CheckoutProblem::MerchantUnreadable {
            detail: error.to_string(),
        })?;
    checked.map(drop).map_err(|refusal| match refusal {
        CheckoutRefusal::Currency(currency) => CheckoutProblem::Currency { currency },
        other => CheckoutProblem::SignatureInvalid {
            detail: other.to_string(),
        },
    })
}

/// This device's key for `server`, bound to the shopper at the merchant
/// (bound now, with the sign-in's token where there is one, if it was
/// not yet).
async fn bound_device(
    inner: &Inner,
    server: &str,
    merchant: &MerchantBinding,
) -> Result<String, String> {
    let device = DeviceKey::new(server, inner.secrets.clone());
    if let Some(kid) = device.bound_as().await.map_err(|e| e.to_string())? {
        return Ok(kid);
    }
    let token = inner
        .tokens(server)
        .access_token()
        .await
        .map_err(|e| e.to_string())?;
    device
        .bind(&merchant.origin, token.as_deref())
        .await
        .map_err(|e| e.to_string())
}
