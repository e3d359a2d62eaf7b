//! Batches: the calls of one model turn, judged by the policy, stored,
//! and closed (run, expired or superseded) as a unit. Tool results reach
//! the conversation only when a batch closes, in the model's order.
//!
//! The words, used alike in code, protocol and docs: a *batch* is judged
//! (`judge.rs`: each call's [`FirstMove`]) into a [`JudgedBatch`], stored
//! ([`record`]) as a [`StoredBatch`]; when any call asks, it is shown as a
//! *card* (`card.rs`) and answered by a *reply* (`respond.rs`), which
//! names the batch by its `reply_id`.

use rusqlite::Connection;
use serde_json::Value;

use crate::agent::ending::Ending;
use crate::agent::inner::Inner;
use crate::agent::judge::{FirstMove, JudgedBatch};
use crate::agent::views::call_view;
use crate::error::AgentError;
use crate::instructions::results;
use crate::protocol::{AgentEvent, AuditDecision, CallPreview, Rejection};
use crate::store::StoreError;
use crate::store::audit::{self, NewAudit};
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord, CallUpdate};
use crate::store::messages::{self, NewMessage, Role};
use crate::toolcall::CallStatus;

/// A stored batch, and what the run does next with it.
pub(crate) struct StoredBatch {
    pub batch: BatchRecord,
    pub needs_card: bool,
    /// Calls refused before anyone was asked, to report at once.
    pub rejected: Vec<CallRecord>,
    /// Calls allowed without asking, in the model's order.
    pub allowed: Vec<CallRecord>,
}

/// Stores judged calls as the batch of the assistant message
/// `message_id`, inside the caller's transaction (the one that stores the
/// message, so neither exists without the other).
pub(crate) fn record(
    tx: &Connection,
    judged: JudgedBatch,
    session_id: &str,
    run_id: &str,
    message_id: i64,
    now: i64,
) -> Result<StoredBatch, StoreError> {
    let needs_card = judged
        .first_moves
        .iter()
        .any(|p| matches!(p, FirstMove::Ask));
    let batch = BatchRecord {
        reply_id: judged.reply_id,
        session_id: session_id.to_string(),
        run_id: run_id.to_string(),
        assistant_message_id: message_id,
        state: if needs_card {
            BatchState::Pending
        } else {
            BatchState::Executing
        },
        created_at: now,
        expires_at: now.saturating_add(judged.expiry_ms),
    };
    calls::insert_batch(tx, &batch, &judged.calls, now)?;
    let mut rejected = Vec::new();
    let mut allowed = Vec::new();
    for (seq, (call, first_move)) in judged.calls.iter().zip(judged.first_moves).enumerate() {
        // Each call as just stored: its first move needs no read.
        let proposed = call.record(session_id, &batch.reply_id, seq, CallStatus::Proposed);
        match first_move {
            FirstMove::Ask => {
                calls::move_call(
                    tx,
                    proposed,
                    CallStatus::Asking,
                    &CallUpdate::default(),
                    now,
                )?;
            }
            FirstMove::Allow(decision) => {
                let record = calls::move_call(
                    tx,
                    proposed,
                    CallStatus::Allowed,
                    &CallUpdate::default(),
                    now,
                )?;
                record_audit(tx, &record, decision, None, now)?;
                allowed.push(record);
            }
            FirstMove::Reject {
                output,
                audit,
                rejection,
            } => {
                let update = refused(output, rejection);
                let record = calls::move_call(tx, proposed, CallStatus::Rejected, &update, now)?;
                if let Some(decision) = audit {
                    record_audit(tx, &record, decision, None, now)?;
                }
                rejected.push(record);
            }
        }
    }
    Ok(StoredBatch {
        batch,
        needs_card,
        rejected,
        allowed,
    })
}

/// What a call refused before anyone was asked is stored with.
fn refused(output: String, rejection: Rejection) -> CallUpdate {
    CallUpdate {
        output: Some(output),
        is_error: Some(true),
        rejection: Some(rejection),
        ..CallUpdate::default()
    }
}

pub(crate) fn record_audit(
    conn: &Connection,
    call: &CallRecord,
    decision: AuditDecision,
    reason: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    let hash = call.arguments_hash.as_deref().unwrap_or("");
    record_audit_of(
        conn,
        call,
        decision,
        hash,
        reason,
        call.preview.as_ref(),
        now,
    )
}

/// An audit row about `call` whose hash is `hash` (what was decided on:
/// the arguments, or a request or answer of the call's server).
pub(crate) fn record_audit_of(
    conn: &Connection,
    call: &CallRecord,
    decision: AuditDecision,
    hash: &str,
    reason: Option<&str>,
    preview: Option<&CallPreview>,
    now: i64,
) -> Result<(), StoreError> {
    audit::record(
        conn,
        &NewAudit {
            session_id: &call.session_id,
            call_id: &call.id,
            server: call.server.as_deref().unwrap_or(""),
            tool: call.tool.as_deref().unwrap_or(&call.qualified_name),
            arguments_hash: hash,
            decision,
            reason,
            preview,
        },
        now,
    )
}

/// The model's arguments and those the call went with, when the user
/// changed them on the card.
pub(crate) fn edited_by_user(call: &CallRecord) -> Option<(Value, &Value)> {
    let proposed: Value = serde_json::from_str(&call.proposed_arguments).ok()?;
    let sent = call.arguments.as_ref()?;
    (proposed != *sent).then_some((proposed, sent))
}

/// Appends every call's result in the model's order and closes the batch.
pub(crate) fn finalize(
    conn: &Connection,
    batch: &BatchRecord,
    state: BatchState,
    now: i64,
) -> Result<(), StoreError> {
    append_results(
        conn,
        batch,
        &calls::calls_of_batch(conn, &batch.reply_id)?,
        now,
    )?;
    calls::set_batch_state(conn, &batch.reply_id, state)
}

/// What the model is told of `call` once its batch closes.
pub(crate) fn result_content(call: &CallRecord) -> String {
    let content = call
        .output
        .clone()
        .unwrap_or_else(|| results::call_failed("没有记录结果"));
    match edited_by_user(call) {
        Some((proposed, sent)) => results::edited_by_user(&proposed, sent, &content),
        None => content,
    }
}

/// Appends the results of `calls`, the batch's calls in the model's order.
fn append_results<C: std::borrow::Borrow<CallRecord>>(
    conn: &Connection,
    batch: &BatchRecord,
    calls: &[C],
    now: i64,
) -> Result<(), StoreError> {
    for call in calls {
        let call = call.borrow();
        if !call.status.is_final() {
            tracing::error!(call = %call.id, status = %call.status, "closing a batch with an unfinished call");
        }
        let content = result_content(call);
        messages::append(
            conn,
            &NewMessage {
                session_id: &batch.session_id,
                run_id: Some(&batch.run_id),
                role: Role::Tool,
                content: &content,
                tool_calls: &[],
                tool_call_id: Some(&call.model_call_id),
                call_id: Some(&call.id),
            },
            now,
        )?;
    }
    Ok(())
}

/// A turn whose calls already ran (trusted reads, the rest refused before
/// anyone was asked), held as it will be stored: each call as its moves
/// leave it (proposed and judged at `proposed_at`, ran and ended at
/// `ended_at`). Held first so that the next request can be built from it
/// while it is written (`reads_first.rs`).
pub(crate) struct RanTurn {
    reply_id: String,
    expiry_ms: i64,
    session_id: String,
    run_id: String,
    proposed_at: i64,
    ended_at: i64,
    calls: Vec<RanCall>,
}

/// One call of a [`RanTurn`].
struct RanCall {
    call: calls::NewCall,
    moves: Vec<(CallStatus, i64)>,
    update: CallUpdate,
    audit: Option<AuditDecision>,
    /// The call as it will be stored.
    record: CallRecord,
}

impl RanTurn {
    /// The turn `judged`, whose allowed calls ended as `endings` (one for
    /// each, in order).
    pub(crate) fn new(
        judged: JudgedBatch,
        endings: Vec<Ending>,
        session_id: &str,
        run_id: &str,
        proposed_at: i64,
        ended_at: i64,
    ) -> Result<RanTurn, StoreError> {
        let mut endings = endings.into_iter();
        let mut calls = Vec::with_capacity(judged.calls.len());
        for (seq, (call, first_move)) in
            judged.calls.into_iter().zip(judged.first_moves).enumerate()
        {
            let (moves, update, audit) = match first_move {
                FirstMove::Allow(decision) => {
                    let ending = endings.next().ok_or_else(|| {
                        StoreError::NotFound(format!("the ending of call {}", call.id))
                    })?;
                    let moves = vec![
                        (CallStatus::Allowed, proposed_at),
                        (CallStatus::Running, ended_at),
                        (ending.status, ended_at),
                    ];
                    let update = CallUpdate {
                        output: Some(ending.output),
                        is_error: Some(ending.is_error),
                        structured_output: ending.structured,
                        ..CallUpdate::default()
                    };
                    (moves, update, Some(decision))
                }
                FirstMove::Reject {
                    output,
                    audit,
                    rejection,
                } => (
                    vec![(CallStatus::Rejected, proposed_at)],
                    refused(output, rejection),
                    audit,
                ),
                FirstMove::Ask => return Err(StoreError::RunBeforeStoring(call.id.clone())),
            };
            let status = calls::moved_status(&moves)?;
            let record =
                calls::moved_record(session_id, &judged.reply_id, seq, &call, status, &update);
            calls.push(RanCall {
                call,
                moves,
                update,
                audit,
                record,
            });
        }
        Ok(RanTurn {
            reply_id: judged.reply_id,
            expiry_ms: judged.expiry_ms,
            session_id: session_id.to_string(),
            run_id: run_id.to_string(),
            proposed_at,
            ended_at,
            calls,
        })
    }

    /// Each call as it will be stored, in the model's order.
    pub(crate) fn calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.calls.iter().map(|ran| &ran.record)
    }

    /// Stores the turn as the closed batch of the assistant message
    /// `message_id`, inside the caller's transaction: each call as its
    /// moves left it, then their results in the model's order.
    pub(crate) fn write(&self, tx: &Connection, message_id: i64) -> Result<(), StoreError> {
        let batch = BatchRecord {
            reply_id: self.reply_id.clone(),
            session_id: self.session_id.clone(),
            run_id: self.run_id.clone(),
            assistant_message_id: message_id,
            state: BatchState::Done,
            created_at: self.proposed_at,
            expires_at: self.proposed_at.saturating_add(self.expiry_ms),
        };
        calls::insert_batch_row(tx, &batch)?;
        for (seq, ran) in self.calls.iter().enumerate() {
            calls::insert_moved(
                tx,
                &batch,
                seq,
                &ran.call,
                self.proposed_at,
                &ran.moves,
                &ran.update,
            )?;
            if let Some(decision) = ran.audit {
                record_audit(tx, &ran.record, decision, None, self.proposed_at)?;
            }
        }
        let records: Vec<&CallRecord> = self.calls().collect();
        append_results(tx, &batch, &records, self.ended_at)
    }

    /// What the page is told once the turn is stored: the calls refused,
    /// then the calls that ran.
    pub(crate) fn finished_events(&self) -> Vec<AgentEvent> {
        let (rejected, done): (Vec<&CallRecord>, Vec<&CallRecord>) = self
            .calls()
            .partition(|call| call.status == CallStatus::Rejected);
        rejected
            .into_iter()
            .chain(done)
            .map(|call| AgentEvent::ToolCallFinished {
                call: call_view(call),
            })
            .collect()
    }
}

/// Closes a pending batch whose calls will never run: every waiting call
/// moves to `to` with `output` as what the model is told.
pub(crate) fn close_pending(
    conn: &Connection,
    batch: &BatchRecord,
    to: CallStatus,
    output: &str,
    decision: AuditDecision,
    state: BatchState,
    now: i64,
) -> Result<Vec<(String, CallStatus)>, StoreError> {
    let mut changed = Vec::new();
    for call in calls::calls_of_batch(conn, &batch.reply_id)? {
        if !matches!(
            call.status,
            CallStatus::Asking | CallStatus::Allowed | CallStatus::Approved
        ) {
            continue;
        }
        let update = CallUpdate {
            output: Some(output.to_string()),
            ..CallUpdate::default()
        };
        let record = calls::move_call(conn, call.clone(), to, &update, now)?;
        if call.status == CallStatus::Asking {
            record_audit(conn, &record, decision, None, now)?;
        }
        changed.push((record.id, to));
    }
    finalize(conn, batch, state, now)?;
    Ok(changed)
}

/// Expires the session's pending card if its time is up.
pub(crate) fn expire_card_if_due(inner: &Inner, session_id: &str) -> Result<(), AgentError> {
    let now = inner.now();
    let changed = inner
        .store
        .with_tx(|tx| match calls::open_batch(tx, session_id)? {
            Some(batch) if batch.state == BatchState::Pending && now >= batch.expires_at => {
                close_pending(
                    tx,
                    &batch,
                    CallStatus::Expired,
                    &results::expired(),
                    AuditDecision::Expired,
                    BatchState::Expired,
                    now,
                )
            }
            _ => Ok(Vec::new()),
        })?;
    announce_statuses(inner, session_id, None, changed);
    Ok(())
}

/// Tells the page of each call's new status.
pub(crate) fn announce_statuses(
    inner: &Inner,
    session_id: &str,
    run_id: Option<&str>,
    changed: Vec<(String, CallStatus)>,
) {
    for (call_id, status) in changed {
        inner.emit(
            session_id,
            run_id,
            AgentEvent::CallStatusChanged { call_id, status },
        );
    }
}

/// Tells the page about calls that moved when judged again.
pub(crate) fn announce_moves(
    inner: &Inner,
    session_id: &str,
    run_id: Option<&str>,
    moved: &[CallRecord],
) {
    for call in moved {
        let event = if call.status.is_final() {
            AgentEvent::ToolCallFinished {
                call: call_view(call),
            }
        } else if call.status == CallStatus::Approved && edited_by_user(call).is_some() {
            // The card shows what will be sent, not what the model proposed.
            AgentEvent::ToolCallApprovedEdited {
                call: call_view(call),
            }
        } else {
            AgentEvent::CallStatusChanged {
                call_id: call.id.clone(),
                status: call.status,
            }
        };
        inner.emit(session_id, run_id, event);
    }
}
