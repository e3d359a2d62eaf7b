//! A call that moves money, approved on a preview, is previewed once more
//! before it is sent when another write of its card went out first
//! (adding to the cart changes the order's total): if it would now do
//! something else than its card showed, it is not sent but asks again.

use rusqlite::Connection;
use serde_json::Value;

use crate::agent::batch::record_audit;
use crate::agent::card;
use crate::agent::inner::Inner;
use crate::agent::preview::{again, promises_what_was_shown};
use crate::agent::tools::ToolIndex;
use crate::error::AgentError;
use crate::protocol::{AgentEvent, AuditDecision, CallRisk};
use crate::store::StoreError;
use crate::store::calls::{self, CallRecord, CallUpdate};
use crate::toolcall::CallStatus;

/// Whether `call` must be previewed again before it is sent: it moves
/// money, was approved on a preview, and another write of its card has
/// been sent since the card was made (adding to the cart changes the
/// order's total), so what it would do may no longer be what was shown.
pub(crate) fn recheck_before_sending(
    conn: &Connection,
    call: &CallRecord,
) -> Result<bool, StoreError> {
    if call.status != CallStatus::Approved
        || call.risk != CallRisk::MovesMoney
        || call.preview.is_none()
    {
        return Ok(false);
    }
    Ok(calls::calls_of_batch(conn, &call.reply_id)?
        .iter()
        .any(|other| other.id != call.id && other.can_change && other.status.was_sent()))
}

/// Before a call [`recheck_before_sending`] names is sent: its preview
/// computed again by the tool that binds it in `tools` (the listing the
/// batch runs under). When it now promises other consequences than the
/// card showed, the call is not sent: it asks again with the new preview,
/// its batch reopens until `expires_at`, and the card is shown; `true` is
/// returned then.
pub(crate) async fn ask_again_if_moved(
    inner: &Inner,
    tools: &ToolIndex,
    call: &CallRecord,
    expires_at: i64,
) -> Result<bool, AgentError> {
    let arguments = call.arguments.clone().unwrap_or(Value::Null);
    let fresh = again(inner, tools, call, &arguments).await;
    if promises_what_was_shown(call, &fresh) {
        return Ok(false);
    }
    let now = inner.now();
    inner.store.with_tx(|tx| {
        let update = CallUpdate {
            note: Some("an earlier call of its card changed what it would do: asks again".into()),
            ..CallUpdate::default()
        };
        let asking = calls::move_call(tx, call.clone(), CallStatus::Asking, &update, now)?;
        let revised = calls::set_preview(tx, &asking, &fresh, None, now)?;
        record_audit(
            tx,
            &revised,
            AuditDecision::PreviewChanged,
            Some("an earlier call of its card ran: its new preview is shown for a new decision"),
            now,
        )?;
        calls::reopen_batch(tx, &call.reply_id, expires_at)
    })?;
    // The page holds the call as approved: it is told of the move first,
    // so the card sent again is not read as a stale one.
    inner.emit(
        &call.session_id,
        None,
        AgentEvent::CallStatusChanged {
            call_id: call.id.clone(),
            status: CallStatus::Asking,
        },
    );
    card::show(inner, &call.session_id, None, &call.reply_id, None).await?;
    Ok(true)
}
