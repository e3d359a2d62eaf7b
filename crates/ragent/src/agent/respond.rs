//! A reply to a confirmation card, on one path:
//!
//! 1. the card's expiry is checked, once;
//! 2. the reply is validated by one rule, [`Reply::validate`], used alike to
//!    say what is wrong with a reply while a run is busy ([`diagnose`]) and
//!    inside the transaction that records it;
//! 3. each approved call with a preview is previewed again with the
//!    arguments that would be sent: when one would now do something else,
//!    nothing is recorded and the card is shown again with the new preview;
//!    the tools listed for this are handed to the run;
//! 4. each approved completion of a merchant's checkout gets the shopper's
//!    mandate over the signed checkout its card showed (`mandates.rs`);
//!    one that cannot be made refuses the reply;
//! 5. the decisions are recorded in one transaction, so a reply that is
//!    wrong in any part changes nothing, and the page is told each call's
//!    new status by events (the command's answer says only what comes next).

use std::collections::HashSet;

use rusqlite::Connection;
use serde_json::Value;

use crate::agent::batch::{announce_moves, edited_by_user, expire_card_if_due, record_audit};
use crate::agent::card;
use crate::agent::inner::Inner;
use crate::agent::mandates;
use crate::agent::preview::{again, promises_what_was_shown};
use crate::agent::start::Start;
use crate::agent::tools::{ToolIndex, tool_index};
use crate::error::AgentError;
use crate::hashing::hash_json;
use crate::instructions::results;
use crate::protocol::{AuditDecision, CallDecision, Decision};
use crate::schema::SchemaCache;
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord, CallUpdate};
use crate::store::mandates as store_mandates;
use crate::toolcall::CallStatus;

/// A reply to a card as the page sent it.
pub(crate) struct Reply<'a> {
    pub session_id: &'a str,
    pub reply_id: &'a str,
    pub decisions: &'a [CallDecision],
}

/// What comes after a recorded reply.
pub(crate) enum Replied {
    /// These calls still wait for a decision.
    Waiting(Vec<String>),
    /// Every call on the card is decided: a run runs the batch.
    Run(Start),
}

impl Reply<'_> {
    /// The reply checked against what is stored: the batch it names must be
    /// the session's pending card, and each decision must name one of its
    /// asking calls once, with edited arguments that fit the call's schema.
    /// Returns the batch and its calls.
    pub(crate) fn validate(
        &self,
        conn: &Connection,
        schemas: &SchemaCache,
    ) -> Result<(BatchRecord, Vec<CallRecord>), AgentError> {
        let stale = || AgentError::StaleReply {
            given: self.reply_id.to_string(),
        };
        let Some(batch) =
            calls::get_batch(conn, self.reply_id)?.filter(|b| b.session_id == self.session_id)
        else {
            return Err(match calls::open_batch(conn, self.session_id)? {
                Some(_) => stale(),
                None => AgentError::NoPendingConfirmation,
            });
        };
        match batch.state {
            BatchState::Expired => {
                return Err(AgentError::ConfirmationExpired {
                    reply_id: self.reply_id.to_string(),
                });
            }
            BatchState::Superseded => return Err(stale()),
            BatchState::Pending | BatchState::Executing | BatchState::Done => {}
        }
        let batch_calls = calls::calls_of_batch(conn, self.reply_id)?;
        check_decisions(conn, schemas, &batch_calls, self.decisions)?;
        if batch.state != BatchState::Pending {
            // Nothing is asking in a batch that already ran.
            return Err(stale());
        }
        Ok((batch, batch_calls))
    }
}

/// Checks every decision before any is applied.
fn check_decisions(
    conn: &Connection,
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

/// What is wrong with a reply, judged without changing anything; `None`
/// when it could be accepted.
pub(crate) fn diagnose(inner: &Inner, reply: &Reply<'_>) -> Option<AgentError> {
    inner
        .store
        .with_conn(|conn| reply.validate(conn, &inner.schemas).map(|_| ()))
        .err()
}

/// Takes a reply to a card: see the module's steps.
pub(crate) async fn respond(inner: &Inner, reply: &Reply<'_>) -> Result<Replied, AgentError> {
    expire_card_if_due(inner, reply.session_id)?;
    let tools = preview_again(inner, reply).await?;
    let (_, shown) = inner
        .store
        .with_conn(|c| reply.validate(c, &inner.schemas))?;
    let made = mandates::for_approvals(inner, reply.decisions, &shown, tools.as_ref()).await?;
    let now = inner.now();
    let mut decided = Vec::new();
    let remaining = inner.store.with_tx(|tx| {
        let (_, batch_calls) = reply.validate(tx, &inner.schemas)?;
        for mandate in &made {
            store_mandates::keep(tx, mandate)?;
        }
        for decision in reply.decisions {
            if let Some(call) = batch_calls.iter().find(|c| c.id == decision.call_id) {
                decided.push(apply(tx, call, &decision.decision, now)?);
            }
        }
        let remaining: Vec<String> = calls::calls_of_batch(tx, reply.reply_id)?
            .into_iter()
            .filter(|c| c.status == CallStatus::Asking)
            .map(|c| c.id)
            .collect();
        if remaining.is_empty() {
            calls::set_batch_state(tx, reply.reply_id, BatchState::Executing)?;
        }
        Ok::<_, AgentError>(remaining)
    })?;
    // A denial is final: its event carries the call with the user's reason.
    announce_moves(inner, reply.session_id, None, &decided);
    Ok(if remaining.is_empty() {
        Replied::Run(Start::ResumeBatch {
            reply_id: reply.reply_id.to_string(),
            tools,
        })
    } else {
        Replied::Waiting(remaining)
    })
}

/// Computes again, before an approval is recorded, the preview of each
/// approved call that has one, with the arguments that would be sent, and
/// returns the listing it used (none when no call needed it). When any
/// differs from what its card showed, nothing is recorded: the new
/// previews (and edited arguments) are stored, audited and shown on the
/// card, and the reply is refused.
async fn preview_again(inner: &Inner, reply: &Reply<'_>) -> Result<Option<ToolIndex>, AgentError> {
    // Whatever else is wrong with the reply is refused before any preview
    // is computed or edited arguments are stored.
    let (_, batch_calls) = inner
        .store
        .with_conn(|c| reply.validate(c, &inner.schemas))?;
    let mut to_check = Vec::new();
    for decision in reply.decisions {
        let edited = match &decision.decision {
            Decision::Approve => None,
            Decision::ApproveEdited { arguments } => Some(arguments),
            Decision::Deny { .. } => continue,
        };
        if let Some(call) = batch_calls.iter().find(|c| c.id == decision.call_id)
            && call.preview_tool.is_some()
        {
            // The arguments the card proposed, sent back as they were, are
            // no edit.
            let edited = edited.filter(|edited| Some(*edited) != call.arguments.as_ref());
            to_check.push((call, edited));
        }
    }
    if to_check.is_empty() {
        return Ok(None);
    }
    let tools = tool_index(inner, &|_| {}).await?;
    let mut changed = Vec::new();
    for (call, edited) in to_check {
        let arguments = edited
            .or(call.arguments.as_ref())
            .cloned()
            .unwrap_or(Value::Null);
        let fresh = again(inner, &tools, call, &arguments).await;
        if !promises_what_was_shown(call, &fresh) || edited.is_some() {
            changed.push((call.clone(), fresh, edited.cloned()));
        }
    }
    let Some((first, _, _)) = changed.first() else {
        return Ok(Some(tools));
    };
    // The user's own edit is not news about the shop: only a call whose
    // consequences changed without an edit is a price, stock or total that
    // moved.
    let refused = match changed.iter().find(|(_, _, edited)| edited.is_none()) {
        Some((moved, _, _)) => AgentError::PreviewChanged {
            call_id: moved.id.clone(),
        },
        None => AgentError::EditPreviewed {
            call_id: first.id.clone(),
        },
    };
    let now = inner.now();
    inner.store.with_tx(|tx| {
        for (call, fresh, edited) in &changed {
            let revised = calls::set_preview(tx, call, fresh, edited.as_ref(), now)?;
            let reason = edited
                .is_some()
                .then_some("arguments edited: their preview is shown for a new decision");
            record_audit(tx, &revised, AuditDecision::PreviewChanged, reason, now)?;
        }
        Ok::<_, AgentError>(())
    })?;
    card::show(inner, reply.session_id, None, reply.reply_id, None).await?;
    Err(refused)
}

fn apply(
    conn: &Connection,
    call: &CallRecord,
    decision: &Decision,
    now: i64,
) -> Result<CallRecord, AgentError> {
    let (to, update, audit, reason) = match decision {
        Decision::Approve => (
            CallStatus::Approved,
            CallUpdate {
                approved_hash: call.arguments_hash.clone(),
                ..CallUpdate::default()
            },
            // The card may propose arguments the user edited earlier (a
            // call with a preview shows the edit's preview first).
            if edited_by_user(call).is_some() {
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
    Ok(record)
}
