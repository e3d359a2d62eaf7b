//! A reply to a confirmation card: validated and recorded in one
//! transaction, so a reply that is wrong in any part changes nothing.

use std::collections::HashSet;
use std::sync::Arc;

use super::batch::{self, record_audit};
use super::{Inner, RunSlot, run};
use crate::error::AgentError;
use crate::hashing::hash_json;
use crate::instructions::results;
use crate::protocol::{AgentEvent, AuditDecision, CallDecision, Decision, InputOutcome};
use crate::schema::SchemaCache;
use crate::store::calls::{self, BatchState, CallRecord, CallUpdate};
use crate::toolcall::CallStatus;

/// Where a card stands once a reply is recorded.
enum ReplyState {
    /// Every call on it is decided: the batch runs.
    Complete,
    /// These calls still wait for a decision.
    Waiting(Vec<String>),
}

/// Checks every decision before any is applied.
fn check(
    conn: &rusqlite::Connection,
    schemas: &SchemaCache,
    calls: &[CallRecord],
    decisions: &[CallDecision],
) -> Result<(), AgentError> {
    let mut seen = HashSet::new();
    for decision in decisions {
        if !seen.insert(decision.call_id.as_str()) {
            return Err(AgentError::DuplicateDecision(decision.call_id.clone()));
        }
        let call = calls
            .iter()
            .find(|c| c.id == decision.call_id)
            .ok_or_else(|| AgentError::UnknownCall(decision.call_id.clone()))?;
        if call.status != CallStatus::Asking {
            return Err(AgentError::AlreadyDecided {
                call_id: call.id.clone(),
                status: call.status,
            });
        }
        if let Decision::ApproveEdited { arguments } = &decision.decision {
            let schema = calls::input_schema(conn, &call.id)?.unwrap_or_default();
            schemas.validate(&schema, arguments).map_err(|details| {
                AgentError::InvalidArguments {
                    call_id: call.id.clone(),
                    details,
                }
            })?;
        }
    }
    Ok(())
}

fn apply(
    conn: &rusqlite::Connection,
    call: &CallRecord,
    decision: &Decision,
    now: i64,
) -> Result<CallStatus, AgentError> {
    let (to, update, audit, reason) = match decision {
        Decision::Approve => (
            CallStatus::Approved,
            CallUpdate {
                approved_hash: call.arguments_hash.clone(),
                ..CallUpdate::default()
            },
            // The card may propose arguments the user edited earlier (a
            // call with a preview shows the edit's preview first).
            if batch::edited_by_user(call).is_some() {
                AuditDecision::UserApprovedEdited
            } else {
                AuditDecision::UserApproved
            },
            None,
        ),
        Decision::ApproveEdited { arguments } => (
            CallStatus::Approved,
            CallUpdate {
                arguments: Some(arguments.clone()),
                approved_hash: Some(hash_json(arguments)),
                note: Some("approved with edited arguments".into()),
                ..CallUpdate::default()
            },
            AuditDecision::UserApprovedEdited,
            None,
        ),
        Decision::Deny { reason } => (
            CallStatus::Denied,
            CallUpdate {
                output: Some(results::declined(reason.as_deref())),
                note: reason.clone(),
                deny_reason: reason.clone(),
                ..CallUpdate::default()
            },
            AuditDecision::UserDenied,
            reason.as_deref(),
        ),
    };
    let record = calls::move_call(conn, call.clone(), to, &update, now)?;
    record_audit(conn, &record, audit, reason, now)?;
    Ok(to)
}

/// What is wrong with a reply, judged without changing anything; `None`
/// when it could be accepted.
pub(crate) fn diagnose(
    inner: &Inner,
    session_id: &str,
    reply_id: &str,
    decisions: &[CallDecision],
) -> Option<AgentError> {
    inner
        .store
        .with_conn(|conn| {
            if calls::get_batch(conn, reply_id)?
                .filter(|b| b.session_id == session_id)
                .is_none()
            {
                return Err(AgentError::StaleReply {
                    given: reply_id.to_string(),
                });
            }
            let calls = calls::calls_of_batch(conn, reply_id)?;
            check(conn, &inner.schemas, &calls, decisions)
        })
        .err()
}

pub(crate) fn respond(
    inner: &Arc<Inner>,
    slot: RunSlot,
    session_id: &str,
    reply_id: &str,
    decisions: Vec<CallDecision>,
) -> Result<InputOutcome, AgentError> {
    batch::expire_if_due(inner, session_id)?;
    let now = inner.now();
    let mut changed = Vec::new();
    let recorded = inner.store.with_tx(|tx| {
        let Some(batch) = calls::get_batch(tx, reply_id)?.filter(|b| b.session_id == session_id)
        else {
            return Err(match calls::open_batch(tx, session_id)? {
                Some(_) => AgentError::StaleReply {
                    given: reply_id.to_string(),
                },
                None => AgentError::NoPendingConfirmation,
            });
        };
        match batch.state {
            BatchState::Expired => {
                return Err(AgentError::ConfirmationExpired {
                    reply_id: reply_id.to_string(),
                });
            }
            BatchState::Superseded => {
                return Err(AgentError::StaleReply {
                    given: reply_id.to_string(),
                });
            }
            BatchState::Pending | BatchState::Executing | BatchState::Done => {}
        }
        let batch_calls = calls::calls_of_batch(tx, reply_id)?;
        check(tx, &inner.schemas, &batch_calls, &decisions)?;
        if batch.state != BatchState::Pending {
            // Nothing is asking in a batch that already ran.
            return Err(AgentError::StaleReply {
                given: reply_id.to_string(),
            });
        }
        for decision in &decisions {
            if let Some(call) = batch_calls.iter().find(|c| c.id == decision.call_id) {
                let status = apply(tx, call, &decision.decision, now)?;
                changed.push((call.id.clone(), status));
            }
        }
        let remaining: Vec<String> = calls::calls_of_batch(tx, reply_id)?
            .into_iter()
            .filter(|c| c.status == CallStatus::Asking)
            .map(|c| c.id)
            .collect();
        if remaining.is_empty() {
            calls::set_batch_state(tx, reply_id, BatchState::Executing)?;
            Ok(ReplyState::Complete)
        } else {
            Ok(ReplyState::Waiting(remaining))
        }
    });
    let recorded = match recorded {
        Ok(recorded) => recorded,
        Err(error) => {
            changed.clear();
            return Err(error);
        }
    };
    for (call_id, status) in changed {
        inner.emit(
            session_id,
            None,
            AgentEvent::CallStatusChanged { call_id, status },
        );
    }
    Ok(match recorded {
        ReplyState::Waiting(remaining) => InputOutcome::AwaitingDecisions { remaining },
        ReplyState::Complete => InputOutcome::RunStarted {
            run_id: slot.spawn(run::Start::ResumeBatch {
                reply_id: reply_id.to_string(),
            }),
        },
    })
}
