//! What a crash left behind, put right at start. A card still pending is
//! kept (the window shows it again) unless it expired. A batch that was
//! executing is settled: calls left `running` are sent again with the same
//! idempotency key where a trusted server honours keys, and otherwise
//! marked `interrupted` with the user told the outcome is unknown. Calls
//! approved but not yet sent never run silently: they are put back on the
//! card if it has not expired, and otherwise expire with the user told;
//! calls allowed without a card are judged again and run only if the
//! policy still lets them. Nothing is ever sent twice to a server that
//! cannot be believed to recognise the repeat.

use std::sync::Arc;

use crate::agent::batch::{self, announce_moves};
use crate::agent::elicitation::stored::expire_request_if_due;
use crate::agent::execute;
use crate::agent::inner::Inner;
use crate::agent::judge::Approvals;
use crate::agent::rejudge;
use crate::agent::tools::tool_index;
use crate::error::AgentError;
use crate::instructions::{notices, results};
use crate::protocol::{AgentEvent, AuditDecision};
use crate::store::StoreError;
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord, CallUpdate};
use crate::store::messages::{self, NewMessage, Role};
use crate::toolcall::CallStatus;

/// What recovery did, by call id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Sent again with the same key, or (reads) simply again.
    pub resent: Vec<String>,
    /// Outcome unknown: the user is told.
    pub interrupted: Vec<String>,
    /// Allowed without a card before the crash, still allowed, and run now.
    pub executed: Vec<String>,
    /// Approved (or allowed) but never sent: back on the card.
    pub asked_again: Vec<String>,
    /// Approved but never sent, and not sent now: the card expired, or the
    /// user wrote a new message after the run failed.
    pub not_sent: Vec<String>,
    /// Cards that expired while the app was closed.
    pub expired_cards: Vec<String>,
}

impl RecoveryReport {
    pub fn is_empty(&self) -> bool {
        self == &RecoveryReport::default()
    }
}

fn append_notice(
    conn: &rusqlite::Connection,
    session_id: &str,
    text: &str,
    now: i64,
) -> Result<i64, StoreError> {
    messages::append(
        conn,
        &NewMessage {
            session_id,
            run_id: None,
            role: Role::Notice,
            content: text,
            tool_calls: &[],
            tool_call_id: None,
            call_id: None,
        },
        now,
    )
}

fn notice(inner: &Inner, session_id: &str, text: &str) -> Result<(), AgentError> {
    let now = inner.now();
    inner
        .store
        .with_conn(|c| append_notice(c, session_id, text, now))?;
    Ok(())
}

pub(crate) async fn recover(inner: &Arc<Inner>) -> Result<RecoveryReport, AgentError> {
    let mut report = RecoveryReport::default();
    let open = inner.store.with_conn(calls::open_batches)?;
    for open_batch in open {
        let session_id = open_batch.session_id.clone();
        if open_batch.state == BatchState::Pending {
            batch::expire_card_if_due(inner, &session_id)?;
            let now_state = inner
                .store
                .with_conn(|c| calls::get_batch(c, &open_batch.reply_id))?
                .map(|b| b.state);
            if now_state == Some(BatchState::Expired) {
                report.expired_cards.push(open_batch.reply_id.clone());
            }
            continue;
        }
        // A call whose server asked the user for input waits on its card
        // across the restart, like a pending batch.
        let awaiting = inner
            .store
            .with_conn(|c| calls::calls_of_batch(c, &open_batch.reply_id))?
            .iter()
            .any(|call| call.status == CallStatus::AwaitingInput);
        if awaiting {
            expire_request_if_due(inner, &session_id)?;
            continue;
        }
        let emit = |event: AgentEvent| inner.emit(&session_id, None, event);
        settle_leftover(inner, &open_batch, &emit, &mut report, Leftover::AtStart).await?;
    }
    Ok(report)
}

/// When a batch left `executing` is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leftover {
    /// At start, after a crash: unsent calls go back on the card, unless
    /// it expired.
    AtStart,
    /// Before a new message, in a session whose previous run failed
    /// halfway through the batch: unsent calls are dropped, as a pending
    /// card's are when the user writes instead of deciding.
    BeforeNewMessage,
}

/// Settles a batch left `executing` by a run that ended before it did:
/// `running` calls are re-sent or marked interrupted; calls not yet sent
/// are handled as `when` says; the batch is closed unless its card is out
/// again.
pub(crate) async fn settle_leftover(
    inner: &Inner,
    open_batch: &BatchRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    report: &mut RecoveryReport,
    when: Leftover,
) -> Result<(), AgentError> {
    let session_id = &open_batch.session_id;
    let mut unsent = Vec::new();
    for call in inner
        .store
        .with_conn(|c| calls::calls_of_batch(c, &open_batch.reply_id))?
    {
        match call.status {
            CallStatus::Running => {
                let title = title_of(&call);
                let done = execute::execute(inner, &call, emit, None).await?;
                if done.status == CallStatus::Interrupted {
                    tracing::warn!(call = %call.id, "call outcome unknown after a restart");
                    notice(inner, session_id, &notices::outcome_unknown(&title))?;
                    report.interrupted.push(call.id);
                } else {
                    notice(inner, session_id, &notices::recovered(&title))?;
                    report.resent.push(call.id);
                }
            }
            CallStatus::Allowed | CallStatus::Approved => unsent.push(call),
            _ => {}
        }
    }
    let now = inner.now();
    if unsent.is_empty() {
        inner
            .store
            .with_tx(|tx| batch::finalize(tx, open_batch, BatchState::Done, now))?;
        return Ok(());
    }
    match when {
        Leftover::BeforeNewMessage => drop_unsent(
            inner,
            open_batch,
            &unsent,
            CallStatus::Superseded,
            results::not_sent_superseded(),
            notices::not_sent_superseded,
            BatchState::Superseded,
            emit,
            report,
        ),
        Leftover::AtStart if now >= open_batch.expires_at => drop_unsent(
            inner,
            open_batch,
            &unsent,
            CallStatus::Expired,
            results::not_sent_expired(),
            notices::not_sent_expired,
            BatchState::Expired,
            emit,
            report,
        ),
        Leftover::AtStart => ask_again(inner, open_batch, &unsent, emit, report).await,
    }
}

fn title_of(call: &CallRecord) -> String {
    call.title
        .clone()
        .unwrap_or_else(|| call.qualified_name.clone())
}

/// Closes the batch without sending its unsent calls; the model reads
/// `output` for each, and the user a notice for each write.
#[allow(clippy::too_many_arguments)]
fn drop_unsent(
    inner: &Inner,
    open_batch: &BatchRecord,
    unsent: &[CallRecord],
    to: CallStatus,
    output: String,
    tell_user: fn(&str) -> String,
    state: BatchState,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    report: &mut RecoveryReport,
) -> Result<(), AgentError> {
    let now = inner.now();
    let audit = match to {
        CallStatus::Expired => AuditDecision::Expired,
        _ => AuditDecision::Superseded,
    };
    inner.store.with_tx(|tx| {
        for call in unsent {
            let update = CallUpdate {
                output: Some(output.clone()),
                note: Some("not sent: the run that held it stopped first".into()),
                ..CallUpdate::default()
            };
            let record = calls::move_call(tx, call.clone(), to, &update, now)?;
            if call.status == CallStatus::Approved {
                batch::record_audit(tx, &record, audit, None, now)?;
            }
            // The user hears of every write that did not go out; a read
            // left unsent changed nothing.
            if call.status == CallStatus::Approved || call.can_change {
                append_notice(tx, &open_batch.session_id, &tell_user(&title_of(call)), now)?;
            }
        }
        batch::finalize(tx, open_batch, state, now)
    })?;
    for call in unsent {
        tracing::warn!(call = %call.id, status = %to, "an approved call was never sent");
        report.not_sent.push(call.id.clone());
        emit(AgentEvent::CallStatusChanged {
            call_id: call.id.clone(),
            status: to,
        });
    }
    Ok(())
}

/// At start, within the card's time: approvals are asked for again and
/// allowed calls judged again. If nothing asks, the allowed calls run.
async fn ask_again(
    inner: &Inner,
    open_batch: &BatchRecord,
    unsent: &[CallRecord],
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    report: &mut RecoveryReport,
) -> Result<(), AgentError> {
    let settings = inner.settings();
    let tools = if unsent.iter().any(|c| c.status == CallStatus::Allowed) {
        Some(tool_index(inner, emit).await?)
    } else {
        None
    };
    let now = inner.now();
    let judged = inner.store.with_tx(|tx| {
        let judged = rejudge::rejudge(
            tx,
            open_batch,
            tools.as_ref(),
            &settings,
            Approvals::AskAgain,
            open_batch.expires_at,
            now,
        )?;
        for call in &judged.moved {
            let was = unsent.iter().find(|c| c.id == call.id).map(|c| c.status);
            if call.status == CallStatus::Asking && was == Some(CallStatus::Approved) {
                append_notice(
                    tx,
                    &open_batch.session_id,
                    &notices::asked_again(&title_of(call)),
                    now,
                )?;
            }
        }
        Ok::<_, StoreError>(judged)
    })?;
    announce_moves(inner, &open_batch.session_id, None, &judged.moved);
    if judged.asks {
        report.asked_again.extend(
            judged
                .moved
                .iter()
                .filter(|c| c.status == CallStatus::Asking)
                .map(|c| c.id.clone()),
        );
        return Ok(());
    }
    for call in &judged.runnable {
        execute::execute(inner, call, emit, None).await?;
        report.executed.push(call.id.clone());
    }
    let now = inner.now();
    inner
        .store
        .with_tx(|tx| batch::finalize(tx, open_batch, BatchState::Done, now))?;
    Ok(())
}
