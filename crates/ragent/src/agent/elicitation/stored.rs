//! When a call's server asks the user for input (MCP `input_required`):
//! the request is judged by code, stored with its call, shown as a card
//! and the run ends; no task waits. [`record_answer`] checks the user's
//! answer against the request and records it, and a run sends the call
//! again with the answers and the server's `requestState` echoed exactly
//! as received. A server may ask again, [`MAX_ROUNDS`] times at most; a
//! round that carries only its `requestState` is sent back at once.
//!
//! A request lives as long as its card would: a new message supersedes
//! it, and it expires like a card. Nothing of it is lost to a restart.

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::agent::batch::{finalize, record_audit, record_audit_of};
use crate::agent::elicitation::judge::{
    MAX_ROUNDS, card_of, outcome_of, refusal_words, replies_of,
};
use crate::agent::ending::Ending;
use crate::agent::inner::Inner;
use crate::agent::judge::expiry_ms;
use crate::elicitation;
use crate::error::AgentError;
use crate::hashing::hash_json;
use crate::instructions::results;
use crate::mcp::{InputRequired, InputRetry};
use crate::protocol::{
    AgentEvent, AuditDecision, InputCard, InputCardOutcome, InputReply, KeyedReply, TranscriptItem,
};
use crate::store::StoreError;
use crate::store::calls::{self, BatchState, CallRecord, CallUpdate};
use crate::store::inputs::{self, InputRecord};
use crate::toolcall::CallStatus;

/// What became of a request for input when it arrived.
pub(crate) enum Parked {
    /// Stored; the call awaits the user's answer. (Boxed: a call record is
    /// far larger than an ending.)
    Waiting(Box<CallRecord>),
    /// Not shown: the call ends this way instead.
    Refused(Ending),
}

pub(crate) fn audit_input(
    conn: &Connection,
    call: &CallRecord,
    decision: AuditDecision,
    what: &Value,
    reason: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    record_audit_of(conn, call, decision, &hash_json(what), reason, None, now)
}

/// The number of the round a new request for `call` opens, or how the
/// call ends when it may not open one.
fn next_round(inner: &Inner, call: &CallRecord) -> Result<Result<u32, Ending>, AgentError> {
    let round = inner
        .store
        .with_conn(|c| inputs::latest_of_call(c, &call.id))?
        .map_or(0, |r| r.round)
        + 1;
    if round > MAX_ROUNDS {
        return Ok(Err(Ending::failed(results::input_rounds_exceeded(
            MAX_ROUNDS,
        ))));
    }
    Ok(Ok(round))
}

/// Records a round that carried only the server's state, answered at
/// once with no responses, and gives what to send again; or how the call
/// ends when the round may not be opened. The round counts toward
/// [`MAX_ROUNDS`] like any other, so a server cannot loop the call.
pub(crate) fn pass_state(
    inner: &Inner,
    call: &CallRecord,
    required: InputRequired,
) -> Result<Result<InputRetry, Ending>, AgentError> {
    if call.status != CallStatus::Running || !call.can_change {
        return Ok(Err(Ending::failed(results::input_refused(
            "只读的调用不能请求用户输入",
        ))));
    }
    let round = match next_round(inner, call)? {
        Ok(round) => round,
        Err(ending) => return Ok(Err(ending)),
    };
    let now = inner.now();
    let record = InputRecord {
        id: uuid::Uuid::new_v4().to_string(),
        call_id: call.id.clone(),
        session_id: call.session_id.clone(),
        round,
        requests: Value::Object(Map::new()),
        request_state: required.request_state,
        created_at: now,
        expires_at: now,
        responses: None,
        answered_at: None,
    };
    // Stored answered, so a restart mid-retry sends the same state again.
    inner.store.with_durable_tx(|tx| {
        inputs::insert(tx, &record)?;
        inputs::answer(tx, &record.id, &Map::new(), now)?;
        audit_input(
            tx,
            call,
            AuditDecision::ServerRequestedInput,
            &record.requests,
            Some("only its requestState; sent again at once"),
            now,
        )
    })?;
    tracing::debug!(call = %call.id, round, "a server's state-only request sent back at once");
    Ok(Ok(InputRetry {
        responses: Map::new(),
        request_state: record.request_state,
    }))
}

/// Stores a request that arrived for `call` (stored `running`), or says
/// how the call ends when it cannot be shown.
pub(crate) fn park(
    inner: &Inner,
    call: &CallRecord,
    required: InputRequired,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<Parked, AgentError> {
    // Only a call stored before it was sent can wait: a read's turn is
    // not stored until its calls have ended.
    if call.status != CallStatus::Running || !call.can_change {
        return Ok(Parked::Refused(Ending::failed(results::input_refused(
            "只读的调用不能请求用户输入",
        ))));
    }
    let round = match next_round(inner, call)? {
        Ok(round) => round,
        Err(ending) => return Ok(Parked::Refused(ending)),
    };
    let now = inner.now();
    let pages = inner.pages_of(call.server.as_deref().unwrap_or_default());
    let asks = match elicitation::judge_arriving(&required.requests, &pages) {
        Ok(asks) => asks,
        Err(refusal) => {
            let reason = refusal.to_string();
            inner.store.with_tx(|tx| {
                audit_input(
                    tx,
                    call,
                    AuditDecision::InputRequestRefused,
                    &required.requests,
                    Some(&reason),
                    now,
                )
            })?;
            tracing::warn!(call = %call.id, %reason, "refused a server's request for input");
            return Ok(Parked::Refused(Ending::failed(results::input_refused(
                &refusal_words(&refusal),
            ))));
        }
    };
    let expires_at = now.saturating_add(expiry_ms(&inner.settings()));
    let record = InputRecord {
        id: uuid::Uuid::new_v4().to_string(),
        call_id: call.id.clone(),
        session_id: call.session_id.clone(),
        round,
        requests: required.requests.clone(),
        request_state: required.request_state,
        created_at: now,
        expires_at,
        responses: None,
        answered_at: None,
    };
    let summary: Vec<&str> = asks.iter().map(|a| a.message.as_str()).collect();
    let waiting = inner.store.with_durable_tx(|tx| {
        let update = CallUpdate {
            note: Some(format!("the server asked for input (round {round})")),
            ..CallUpdate::default()
        };
        let waiting = calls::move_call(tx, call.clone(), CallStatus::AwaitingInput, &update, now)?;
        inputs::insert(tx, &record)?;
        audit_input(
            tx,
            call,
            AuditDecision::ServerRequestedInput,
            &record.requests,
            Some(&summary.join("\n")),
            now,
        )?;
        Ok::<_, StoreError>(waiting)
    })?;
    emit(AgentEvent::CallStatusChanged {
        call_id: call.id.clone(),
        status: CallStatus::AwaitingInput,
    });
    emit(AgentEvent::InputRequested {
        card: card_of(&waiting, &record, asks),
    });
    Ok(Parked::Waiting(Box::new(waiting)))
}

/// The session's request that waits for the user, as its card.
pub(crate) fn waiting_card(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<InputCard>, StoreError> {
    let Some(record) = inputs::waiting_in_session(conn, session_id)? else {
        return Ok(None);
    };
    let call = calls::get_call(conn, &record.call_id)?;
    // It was judged when it arrived; a stored one that no longer passes
    // (a rule grew stricter) is shown with nothing to fill.
    let asks = elicitation::judge_requests(&record.requests).unwrap_or_default();
    Ok(Some(card_of(&call, &record, asks)))
}

/// An answered round as the transcript shows it, after its call; none for
/// a round that carried only the server's state (nothing was asked).
pub(crate) fn answered_item(call: &CallRecord, record: &InputRecord) -> Option<TranscriptItem> {
    let replies = replies_of(record);
    if replies.is_empty() {
        return None;
    }
    let asks = elicitation::judge_requests(&record.requests).unwrap_or_default();
    Some(TranscriptItem::Input {
        card: Box::new(card_of(call, record, asks)),
        outcome: outcome_of(&replies),
        replies,
    })
}

/// The answers to send with a call found `running` after its server had
/// asked: the last answered round's, so a retry cut off is sent alike.
pub(crate) fn retry_of(conn: &Connection, call_id: &str) -> Result<Option<InputRetry>, StoreError> {
    Ok(inputs::latest_of_call(conn, call_id)?.and_then(|record| {
        record.responses.map(|responses| InputRetry {
            responses,
            request_state: record.request_state,
        })
    }))
}

/// Closes the session's waiting request and its batch: the call and any
/// call after it that never ran end as `to`.
fn close_waiting(
    conn: &Connection,
    record: &InputRecord,
    to: CallStatus,
    now: i64,
) -> Result<Vec<(String, CallStatus)>, StoreError> {
    let (output, unsent, decision, state) = match to {
        CallStatus::Expired => (
            results::input_expired(),
            results::not_sent_expired(),
            AuditDecision::Expired,
            BatchState::Expired,
        ),
        _ => (
            results::input_superseded(),
            results::not_sent_superseded(),
            AuditDecision::Superseded,
            BatchState::Superseded,
        ),
    };
    let waiting = calls::get_call(conn, &record.call_id)?;
    let mut changed = Vec::new();
    for call in calls::calls_of_batch(conn, &waiting.reply_id)? {
        let text = match call.status {
            CallStatus::AwaitingInput => &output,
            CallStatus::Allowed | CallStatus::Approved => &unsent,
            _ => continue,
        };
        let update = CallUpdate {
            output: Some(text.clone()),
            ..CallUpdate::default()
        };
        let moved = calls::move_call(conn, call.clone(), to, &update, now)?;
        if call.status == CallStatus::AwaitingInput {
            record_audit(conn, &moved, decision, None, now)?;
        }
        changed.push((moved.id, to));
    }
    if let Some(batch) = calls::get_batch(conn, &waiting.reply_id)? {
        finalize(conn, &batch, state, now)?;
    }
    Ok(changed)
}

pub(crate) fn announce_closed(
    inner: &Inner,
    session_id: &str,
    run_id: Option<&str>,
    request_id: &str,
    outcome: InputCardOutcome,
    changed: Vec<(String, CallStatus)>,
) {
    for (call_id, status) in changed {
        inner.emit(
            session_id,
            run_id,
            AgentEvent::CallStatusChanged { call_id, status },
        );
    }
    inner.emit(
        session_id,
        run_id,
        AgentEvent::InputClosed {
            request_id: request_id.to_string(),
            outcome,
        },
    );
}

/// Expires the session's waiting request if its time is up.
pub(crate) fn expire_request_if_due(inner: &Inner, session_id: &str) -> Result<(), AgentError> {
    let now = inner.now();
    let closed = inner
        .store
        .with_tx(|tx| match inputs::waiting_in_session(tx, session_id)? {
            Some(record) if now >= record.expires_at => {
                let changed = close_waiting(tx, &record, CallStatus::Expired, now)?;
                Ok::<_, StoreError>(Some((record.id, changed)))
            }
            _ => Ok(None),
        })?;
    if let Some((request_id, changed)) = closed {
        announce_closed(
            inner,
            session_id,
            None,
            &request_id,
            InputCardOutcome::Expired,
            changed,
        );
    }
    Ok(())
}

/// A request closed by a new message: its id, and each call it moved with
/// the status it moved to.
pub(crate) type Superseded = (String, Vec<(String, CallStatus)>);

/// A new message instead of an answer: the waiting request is closed,
/// inside the caller's transaction. Returns what to announce.
pub(crate) fn supersede_waiting(
    conn: &Connection,
    session_id: &str,
    now: i64,
) -> Result<Option<Superseded>, StoreError> {
    match inputs::waiting_in_session(conn, session_id)? {
        Some(record) => {
            let changed = close_waiting(conn, &record, CallStatus::Superseded, now)?;
            Ok(Some((record.id, changed)))
        }
        None => Ok(None),
    }
}

pub(crate) fn announce_superseded(
    inner: &Inner,
    session_id: &str,
    run_id: &str,
    closed: Option<(String, Vec<(String, CallStatus)>)>,
) {
    if let Some((request_id, changed)) = closed {
        announce_closed(
            inner,
            session_id,
            Some(run_id),
            &request_id,
            InputCardOutcome::Superseded,
            changed,
        );
    }
}

/// Records the user's answer to the waiting request `request_id` and
/// moves its call back to `running`, to be sent again by a run; returns
/// the call's id. An answer that does not fit the request, a request not
/// waiting (answered, closed, another session's) or expired changes
/// nothing.
pub(crate) fn record_answer(
    inner: &Inner,
    session_id: &str,
    request_id: &str,
    replies: &[KeyedReply],
) -> Result<String, AgentError> {
    expire_request_if_due(inner, session_id)?;
    let now = inner.now();
    let call_id = inner.store.with_durable_tx(|tx| {
        let record = inputs::get(tx, request_id)?
            .filter(|r| r.session_id == session_id)
            .ok_or_else(|| AgentError::NoPendingInput(request_id.to_string()))?;
        let call = calls::get_call(tx, &record.call_id)?;
        if record.is_answered() || call.status != CallStatus::AwaitingInput {
            return Err(if call.status == CallStatus::Expired {
                AgentError::InputExpired(request_id.to_string())
            } else {
                AgentError::NoPendingInput(request_id.to_string())
            });
        }
        let asks = elicitation::judge_requests(&record.requests)
            .map_err(|_| AgentError::NoPendingInput(request_id.to_string()))?;
        let responses = elicitation::responses(&asks, replies)?;
        inputs::answer(tx, &record.id, &responses, now)?;
        for reply in replies {
            let decision = match reply.reply {
                InputReply::Accept { .. } => AuditDecision::UserAcceptedInput,
                InputReply::Decline => AuditDecision::UserDeclinedInput,
                InputReply::Cancel => AuditDecision::UserCancelledInput,
            };
            let sent = responses.get(&reply.key).cloned().unwrap_or(Value::Null);
            audit_input(tx, &call, decision, &sent, Some(&reply.key), now)?;
        }
        let update = CallUpdate {
            note: Some(format!("answered round {}; sent again", record.round)),
            ..CallUpdate::default()
        };
        calls::move_call(tx, call, CallStatus::Running, &update, now)?;
        Ok(record.call_id)
    })?;
    announce_closed(
        inner,
        session_id,
        None,
        request_id,
        outcome_of(replies),
        vec![(call_id.clone(), CallStatus::Running)],
    );
    Ok(call_id)
}

/// The page address of the waiting request's URL ask `key`, for the shell
/// to open in the browser: only an address the server asked for and code
/// judged is ever opened, never one the page names.
pub(crate) fn url_of_waiting(
    inner: &Inner,
    session_id: &str,
    request_id: &str,
    key: &str,
) -> Result<String, AgentError> {
    let card = inner.store.with_conn(|c| waiting_card(c, session_id))?;
    card.filter(|card| card.request_id == request_id)
        .and_then(|card| {
            card.asks.into_iter().find_map(|ask| match ask.kind {
                crate::protocol::InputAskKind::Url { url, .. } if ask.key == key => Some(url),
                _ => None,
            })
        })
        .ok_or_else(|| AgentError::NoPendingInput(request_id.to_string()))
}
