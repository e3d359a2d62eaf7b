//! The watch on a call while its server works ([`CallWatch`]): progress
//! goes to the page, and requests for input a server makes on its
//! connection while one of its calls runs (MCP `elicitation/create`, from
//! servers of revisions before 2026-07-28) are put before the user. They
//! are judged and shown as a stored request is (`stored.rs`): the same
//! card, the same checks of the answer, the same refusals and the same
//! audit. But such a request lives on the
//! connection, where the server waits for its answer: the run waits in the
//! call meanwhile, nothing of it is stored but its audit rows, and its
//! card says it ends with the app. The server is told `cancel` when the
//! run is cancelled, when the run stops (the app quits), and when the
//! request has waited longer than the call's time limit. A request of a
//! call that cannot ask the user (a read, whose turn is not stored yet) is
//! declined.
//!
//! The page answers only what the core asked: an answer names a request
//! held (`held_inputs.rs`), and is checked against what was judged when it
//! came (`route.rs`).

use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent::elicitation::judge::{MAX_ROUNDS, refusal_words};
use crate::agent::elicitation::stored::audit_input;
use crate::agent::held_inputs::{ASK_KEY, Waiting, closed_event};
use crate::agent::inner::Inner;
use crate::elicitation;
use crate::instructions::results;
use crate::mcp::{CallListener, LiveRequest};
use crate::protocol::{AgentEvent, AuditDecision, CallProgress, InputCard, InputCardOutcome};
use crate::store::StoreError;
use crate::store::calls::CallRecord;

/// Why a waiting request was closed without the user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    /// The user cancelled the run: the server is told `cancel`.
    RunCancelled,
    /// It waited longer than the call's time limit: `cancel`.
    Expired,
    /// The run stopped while it waited (the app quits): `cancel`.
    RunStopped,
    /// The call ended without waiting for it: nobody is told anything.
    CallEnded,
}

/// Watches a call while its server works: progress goes to the page, and
/// a request for input is judged and put before the user, or declined.
pub(crate) struct CallWatch<'a> {
    inner: &'a Inner,
    call: &'a CallRecord,
    emit: &'a (dyn Fn(AgentEvent) + Send + Sync),
    /// Only a call stored before it was sent can wait for the user.
    may_ask: bool,
    run_cancelled: CancellationToken,
    asked: Mutex<u32>,
    /// Told when a request was put up, so [`CallWatch::wait`] sees it.
    put_up: Notify,
    /// What the model is told beside the result: requests declined for
    /// the user.
    notes: Mutex<Vec<String>>,
}

impl<'a> CallWatch<'a> {
    pub(crate) fn new(
        inner: &'a Inner,
        call: &'a CallRecord,
        emit: &'a (dyn Fn(AgentEvent) + Send + Sync),
    ) -> CallWatch<'a> {
        CallWatch {
            inner,
            call,
            emit,
            may_ask: call.can_change,
            run_cancelled: inner.run_cancel(&call.session_id),
            asked: Mutex::new(0),
            put_up: Notify::new(),
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Waits for `call` (the call being sent, with this as its listener),
    /// meanwhile telling its server `cancel` for each waiting request when
    /// the run is cancelled or the request is due.
    pub(crate) async fn wait<T>(&self, call: impl Future<Output = T>) -> T {
        tokio::pin!(call);
        let done = loop {
            let due = self.inner.live_inputs.next_due(&self.call.id);
            tokio::select! {
                done = &mut call => break done,
                () = self.put_up.notified() => {}
                () = self.run_cancelled.cancelled(), if due.is_some() => {
                    self.close(Closing::RunCancelled, |_| true);
                }
                () = sleep_until_due(due), if due.is_some() => {
                    let now = Instant::now();
                    self.close(Closing::Expired, |w| now >= w.due);
                }
            }
        };
        self.close(Closing::CallEnded, |_| true);
        done
    }

    /// The notes for the model, taken.
    pub(crate) fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notes))
    }

    fn note(&self, text: String) {
        lock(&self.notes).push(text);
    }

    fn audit(&self, decision: AuditDecision, what: &Value, reason: &str) {
        let now = self.inner.now();
        let stored = self
            .inner
            .store
            .with_tx(|tx| audit_input(tx, self.call, decision, what, Some(reason), now));
        if let Err(error) = stored {
            tracing::warn!(%error, call = %self.call.id, "a request for input could not be audited");
        }
    }

    /// Closes the call's waiting requests that `which` picks.
    fn close(&self, why: Closing, which: impl Fn(&Waiting) -> bool) {
        let call_id = &self.call.id;
        let closed = self
            .inner
            .live_inputs
            .take_where(|w| &w.card.call_id != call_id || !which(w));
        for waiting in closed {
            let (decision, outcome, reason) = match why {
                Closing::RunCancelled => (
                    AuditDecision::UserCancelledInput,
                    InputCardOutcome::Cancelled,
                    "the run was cancelled; the server was told cancel",
                ),
                Closing::RunStopped => (
                    AuditDecision::UserCancelledInput,
                    InputCardOutcome::Cancelled,
                    "the run stopped (the app quit); the server was told cancel",
                ),
                Closing::Expired => (
                    AuditDecision::Expired,
                    InputCardOutcome::Expired,
                    "it waited longer than the call's time limit; the server was told cancel",
                ),
                Closing::CallEnded => {
                    tracing::info!(call = %call_id, "a call ended while its server's request waited");
                    (self.emit)(closed_event(&waiting.card, InputCardOutcome::Cancelled));
                    continue;
                }
            };
            let sent = json!({"action": "cancel"});
            self.audit(decision, &sent, reason);
            waiting.request.cancel();
            (self.emit)(closed_event(&waiting.card, outcome));
        }
    }

    fn put_up(&self, request: LiveRequest) -> Result<(), StoreError> {
        if !self.may_ask {
            tracing::warn!(call = %self.call.id, "declined a request for input of a call that cannot ask");
            self.note(results::input_declined_for_the_user(
                "只读的调用不能请求用户输入",
            ));
            request.decline();
            return Ok(());
        }
        let round = {
            let mut asked = lock(&self.asked);
            *asked += 1;
            *asked
        };
        let requests = json!({ ASK_KEY: request.request });
        if round > MAX_ROUNDS {
            let why = format!("服务器已连续 {MAX_ROUNDS} 次请用户补充信息");
            self.audit(AuditDecision::InputRequestRefused, &requests, &why);
            self.note(results::input_declined_for_the_user(&why));
            request.decline();
            return Ok(());
        }
        if self.run_cancelled.is_cancelled() {
            self.audit(
                AuditDecision::UserCancelledInput,
                &requests,
                "the run was cancelled; the server was told cancel",
            );
            request.cancel();
            return Ok(());
        }
        let pages = self
            .inner
            .pages_of(self.call.server.as_deref().unwrap_or_default());
        let asks = match elicitation::judge_arriving(&requests, &pages) {
            Ok(asks) => asks,
            Err(refusal) => {
                let reason = refusal.to_string();
                tracing::warn!(call = %self.call.id, %reason, "refused a server's request for input");
                self.audit(AuditDecision::InputRequestRefused, &requests, &reason);
                self.note(results::input_declined_for_the_user(&refusal_words(
                    &refusal,
                )));
                request.decline();
                return Ok(());
            }
        };
        let now = self.inner.now();
        let waits_ms = i64::try_from(request.waits_at_most.as_millis()).unwrap_or(i64::MAX);
        let card = InputCard {
            request_id: uuid::Uuid::new_v4().to_string(),
            session_id: self.call.session_id.clone(),
            call_id: self.call.id.clone(),
            server: self.call.server.clone().unwrap_or_default(),
            tool: self.call.tool.clone().unwrap_or_default(),
            title: self.call.title.clone(),
            trusted: self.call.trusted,
            round,
            max_rounds: MAX_ROUNDS,
            created_at: now,
            expires_at: now.saturating_add(waits_ms),
            durable: false,
            asks,
        };
        let summary: Vec<&str> = card.asks.iter().map(|a| a.message.as_str()).collect();
        self.audit(
            AuditDecision::ServerRequestedInput,
            &requests,
            &summary.join("\n"),
        );
        let event = AgentEvent::InputRequested { card: card.clone() };
        let year = std::time::Duration::from_secs(365 * 24 * 3600);
        let due = Instant::now() + request.waits_at_most.min(year);
        self.inner.live_inputs.lock().insert(
            card.request_id.clone(),
            Waiting {
                card,
                call: self.call.clone(),
                request,
                due,
            },
        );
        (self.emit)(event);
        self.put_up.notify_one();
        Ok(())
    }
}

impl CallListener for CallWatch<'_> {
    fn progress(&self, progress: CallProgress) {
        (self.emit)(AgentEvent::ToolCallProgress {
            call_id: self.call.id.clone(),
            progress,
        });
    }

    fn asks(&self, request: LiveRequest) {
        if let Err(error) = self.put_up(request) {
            tracing::warn!(%error, call = %self.call.id, "a request for input could not be put up");
        }
    }
}

impl Drop for CallWatch<'_> {
    /// A run stopped mid-call (the app quits): whatever still waits is
    /// cancelled, so the server is not left waiting.
    fn drop(&mut self) {
        self.close(Closing::RunStopped, |_| true);
    }
}

async fn sleep_until_due(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
