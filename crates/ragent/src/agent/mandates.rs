//! The shopper's mandate for a UCP merchant's `complete_checkout`: made
//! in the core when they approve the card ([`for_approvals`]), over the
//! signed checkout the card showed and nothing else, kept with the call,
//! and put into the completion by the core when it is sent ([`attach`]).
//! The model never sees it and cannot supply one: whatever it wrote in its
//! place is replaced, and a completion without a kept mandate is not sent.

use serde_json::Value;

use crate::agent::inner::Inner;
use crate::agent::tools::ToolIndex;
use crate::error::AgentError;
use crate::mcp::ToolInvocation;
use crate::protocol::{CallDecision, Decision, PreviewOutcome};
use crate::store::calls::CallRecord;
use crate::store::mandates::{self, MandateRecord};
use crate::ucp::binding::{Operation, checkout_id, with_mandate};
use crate::ucp::checkout_card::{self, SIGNED_CHECKOUT};
use crate::ucp::device::DeviceKey;

/// Whether `call` is a checkout's completion: the only call a mandate is
/// made for, so the only one whose sending or ending looks for one.
pub(crate) fn completes_checkout(call: &CallRecord) -> bool {
    call.tool
        .as_deref()
        .is_some_and(|tool| Operation::of(tool) == Operation::CompleteCheckout)
}

/// The mandates of the approved completions among `decisions`, made
/// before the approval is recorded: one that cannot be made refuses the
/// whole reply, and nothing is recorded.
pub(crate) async fn for_approvals(
    inner: &Inner,
    decisions: &[CallDecision],
    batch_calls: &[CallRecord],
    tools: Option<&ToolIndex>,
) -> Result<Vec<MandateRecord>, AgentError> {
    let mut made = Vec::new();
    for decision in decisions {
        if matches!(decision.decision, Decision::Deny { .. }) {
            continue;
        }
        let Some(call) = batch_calls.iter().find(|c| c.id == decision.call_id) else {
            continue;
        };
        let merchant = tools
            .and_then(|tools| tools.get(&call.qualified_name))
            .and_then(|known| known.info.merchant.as_ref());
        let (Some(merchant), true) = (merchant, completes_checkout(call)) else {
            continue;
        };
        let refused = |reason: String| AgentError::NotPayable {
            call_id: call.id.clone(),
            reason,
        };
        let checkout = match call.preview.as_ref().map(|p| &p.outcome) {
            Some(PreviewOutcome::Computed { content }) => content[SIGNED_CHECKOUT].clone(),
            _ => Value::Null,
        };
        let shown_id = checkout["id"].as_str();
        let called_id = call.arguments.as_ref().and_then(checkout_id);
        if shown_id.is_none() || shown_id != called_id {
            return Err(refused(
                "the card shows no signed checkout for this call".into(),
            ));
        }
        // The merchant's keys (as the card was computed with them, when
        // that was moments ago) kept with the mandate: the signature is
        // checked once more with them, and the record can be verified
        // offline later.
        let published = inner
            .merchant_profiles
            .fetch_checked(&merchant.origin, |published| {
                checkout_card::verify(&checkout, &published.keys)
            })
            .await
            .map_err(|error| refused(error.to_string()))?
            .map_err(|error| refused(error.to_string()))?;
        let merchant_keys =
            serde_json::to_value(&published.keys).map_err(|error| refused(error.to_string()))?;
        let signature = checkout["ap2"]["merchant_authorization"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let server = call.server.clone().unwrap_or_default();
        let now = inner.now();
        let mandate = DeviceKey::new(&server, inner.secrets.clone())
            .mandate(&checkout, &merchant.origin, now / 1000)
            .await
            .map_err(|error| refused(error.to_string()))?;
        made.push(MandateRecord {
            call_id: call.id.clone(),
            session_id: call.session_id.clone(),
            server,
            merchant: merchant.origin.clone(),
            checkout_id: shown_id.unwrap_or_default().to_owned(),
            checkout,
            merchant_signature: signature,
            merchant_keys,
            mandate,
            created_at: now,
            receipt: None,
            completed_at: None,
        });
    }
    Ok(made)
}

/// `invocation` of `call` with the shopper's kept mandate in it; a
/// completion at a merchant without one is not sent.
pub(crate) fn attach(
    inner: &Inner,
    call: &CallRecord,
    mut invocation: ToolInvocation,
) -> Result<ToolInvocation, String> {
    if !completes_checkout(call) {
        return Ok(invocation);
    }
    let kept = inner
        .store
        .with_conn(|c| mandates::of_call(c, &call.id))
        .map_err(|e| e.to_string())?;
    match kept {
        Some(kept) => {
            invocation.arguments = with_mandate(invocation.arguments, &kept.mandate);
            Ok(invocation)
        }
        None if is_merchant(inner, call) => {
            Err("完成结账需要你在确认卡片上批准后由应用签署的授权；这次调用没有，未发送".into())
        }
        None => Ok(invocation),
    }
}

fn is_merchant(inner: &Inner, call: &CallRecord) -> bool {
    let settings = inner.settings();
    call.server
        .as_deref()
        .and_then(|server| settings.mcp_servers.get(server))
        .is_some_and(|config| config.ucp.is_some())
}
