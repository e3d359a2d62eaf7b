//! Calls that waited in a batch are judged again just before the batch
//! runs: after its card was answered (perhaps much later), or after a
//! restart. What counts is the settings and trust in force then, not when
//! the model proposed the calls. A call allowed without a card that would
//! now ask goes back on the card, and the batch waits again; a call whose
//! tool is now denied outright does not run. A call the user approved
//! keeps its approval, unless it is to be asked again (a failed run left
//! it unsent) or its tool is now denied.

use rusqlite::Connection;

use crate::agent::batch::record_audit;
use crate::agent::judge::{Approvals, Now, judge_waiting};
use crate::agent::tools::ToolIndex;
use crate::instructions::results;
use crate::protocol::{AuditDecision, Rejection};
use crate::settings::Settings;
use crate::store::StoreError;
use crate::store::calls::{self, BatchRecord, CallRecord, CallUpdate};
use crate::toolcall::CallStatus;

/// The batch after judging.
pub(crate) struct Rejudged {
    /// The calls that may run now, in the model's order; empty when the
    /// batch waits again.
    pub runnable: Vec<CallRecord>,
    /// The batch waits on its card again.
    pub asks: bool,
    /// Calls that moved, as they are now.
    pub moved: Vec<CallRecord>,
}

/// Judges the batch's waiting calls again inside the caller's
/// transaction, and reopens its card until `expires_at` if any asks.
/// `tools` is the listing in force now; it may be left out when no call
/// is `allowed` (approvals need only the settings).
pub(crate) fn rejudge(
    tx: &Connection,
    batch: &BatchRecord,
    tools: Option<&ToolIndex>,
    settings: &Settings,
    approvals: Approvals,
    expires_at: i64,
    now: i64,
) -> Result<Rejudged, StoreError> {
    let mut runnable = Vec::new();
    let mut moved = Vec::new();
    let mut asks = false;
    for call in calls::calls_of_batch(tx, &batch.reply_id)? {
        if !matches!(call.status, CallStatus::Allowed | CallStatus::Approved) {
            continue;
        }
        match judge_waiting(&call, tools, settings, approvals) {
            Now::Runs => runnable.push(call),
            Now::Asks => {
                asks = true;
                let update = CallUpdate {
                    note: Some("judged again before it ran: asks".into()),
                    ..CallUpdate::default()
                };
                moved.push(calls::move_call(
                    tx,
                    call,
                    CallStatus::Asking,
                    &update,
                    now,
                )?);
            }
            Now::Refused => {
                let update = CallUpdate {
                    output: Some(results::policy_denied()),
                    is_error: Some(true),
                    note: Some("judged again before it ran: denied".into()),
                    rejection: Some(Rejection::PolicyDenied),
                    ..CallUpdate::default()
                };
                let record = calls::move_call(tx, call, CallStatus::Rejected, &update, now)?;
                record_audit(tx, &record, AuditDecision::PolicyDenied, None, now)?;
                moved.push(record);
            }
        }
    }
    if asks {
        calls::reopen_batch(tx, &batch.reply_id, expires_at)?;
        runnable.clear();
    }
    Ok(Rejudged {
        runnable,
        asks,
        moved,
    })
}
