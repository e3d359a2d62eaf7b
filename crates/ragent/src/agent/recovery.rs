//! What a crash left behind, put right at start. A card still pending is
//! kept (the window shows it again) unless it expired. A batch that was
//! executing is finished: calls left `running` are sent again with the
//! same idempotency key where the server honours keys, and otherwise
//! marked `interrupted` with the user told the outcome is unknown; calls
//! approved but not yet sent are run. Nothing is ever sent twice to a
//! server that cannot recognise the repeat.

use std::sync::Arc;

use super::{Inner, batch, execute};
use crate::error::AgentError;
use crate::instructions::notices;
use crate::protocol::AgentEvent;
use crate::store::calls::{self, BatchRecord, BatchState};
use crate::store::messages::{self, NewMessage, Role};
use crate::toolcall::CallStatus;

/// What recovery did, by call id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Sent again with the same key, or (reads) simply again.
    pub resent: Vec<String>,
    /// Outcome unknown: the user is told.
    pub interrupted: Vec<String>,
    /// Approved before the crash and run now.
    pub executed: Vec<String>,
    /// Cards that expired while the app was closed.
    pub expired_cards: Vec<String>,
}

impl RecoveryReport {
    pub fn is_empty(&self) -> bool {
        self == &RecoveryReport::default()
    }
}

fn notice(inner: &Inner, session_id: &str, text: &str) -> Result<(), AgentError> {
    let now = inner.now();
    inner.store.with_conn(|c| {
        messages::append(
            c,
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
    })?;
    Ok(())
}

pub(crate) async fn recover(inner: &Arc<Inner>) -> Result<RecoveryReport, AgentError> {
    let mut report = RecoveryReport::default();
    let open = inner.store.with_conn(calls::open_batches)?;
    for open_batch in open {
        let session_id = open_batch.session_id.clone();
        if open_batch.state == BatchState::Pending {
            batch::expire_if_due(inner, &session_id)?;
            let now_state = inner
                .store
                .with_conn(|c| calls::get_batch(c, &open_batch.reply_id))?
                .map(|b| b.state);
            if now_state == Some(BatchState::Expired) {
                report.expired_cards.push(open_batch.reply_id.clone());
            }
            continue;
        }
        let emit = |event: AgentEvent| inner.emit(&session_id, None, event);
        finish_executing(inner, &open_batch, &emit, &mut report).await?;
    }
    Ok(report)
}

/// Finishes a batch left `executing` by a run that ended before it did:
/// `running` calls are re-sent or marked interrupted, decided calls run,
/// and the batch is closed. Used at start, and before a new run in a
/// session whose previous run failed halfway through a batch.
pub(crate) async fn finish_executing(
    inner: &Inner,
    open_batch: &BatchRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    report: &mut RecoveryReport,
) -> Result<(), AgentError> {
    let session_id = &open_batch.session_id;
    for call in inner
        .store
        .with_conn(|c| calls::calls_of_batch(c, &open_batch.reply_id))?
    {
        let title = call
            .title
            .clone()
            .unwrap_or_else(|| call.qualified_name.clone());
        match call.status {
            CallStatus::Running => {
                let done = execute::resume_running(inner, &call, emit).await?;
                if done.status == CallStatus::Interrupted {
                    tracing::warn!(call = %call.id, "call outcome unknown after a restart");
                    notice(inner, session_id, &notices::outcome_unknown(&title))?;
                    report.interrupted.push(call.id);
                } else {
                    notice(inner, session_id, &notices::recovered(&title))?;
                    report.resent.push(call.id);
                }
            }
            CallStatus::Allowed | CallStatus::Approved => {
                execute::run_call(inner, &call, emit, None).await?;
                report.executed.push(call.id);
            }
            _ => {}
        }
    }
    let now = inner.now();
    inner
        .store
        .with_tx(|tx| batch::finalize(tx, open_batch, BatchState::Done, now))?;
    Ok(())
}
