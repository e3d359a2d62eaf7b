//! Where a call is sent: the one executor. Every call that runs goes out
//! through [`send`], and is stored by one rule, [`Storing`]:
//!
//! - a call that can change something is stored as `running` (with full
//!   sync) before it is sent and its ending after, so a crash while it is
//!   out is known; found `running` later (after a restart, or behind a
//!   failed run), it is sent again with the same idempotency key where
//!   that is safe ([`crate::policy::resend_is_safe`]) and otherwise marked
//!   `interrupted`, its outcome unknown;
//! - a trusted read is stored after it is sent, its moves with its result:
//!   a read cut off by a crash is still `allowed` or `approved` and simply
//!   runs again. A turn of only such reads is sent before the turn is
//!   stored at all ([`send_unstored`], used by `reads_first.rs`).
//!
//! [`execute`] runs one stored call by that rule, whatever brought it
//! there: a batch running, a batch a failed run left, recovery at start.

use serde_json::Value;

use crate::agent::batch::finalize;
use crate::agent::elicitation::judge::only_state;
use crate::agent::elicitation::live::CallWatch;
use crate::agent::elicitation::stored::{Parked, park, pass_state, retry_of};
use crate::agent::ending::Ending;
use crate::agent::inner::Inner;
use crate::agent::mandates;
use crate::agent::views::call_view;
use crate::error::AgentError;
use crate::hashing::hash_json;
use crate::instructions::results;
use crate::mcp::{CallAnswer, InputRequired, InputRetry, McpError, ToolInvocation};
use crate::policy::{self, Trust};
use crate::protocol::AgentEvent;
use crate::store::StoreError;
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord, CallUpdate};
use crate::store::mandates as store_mandates;
use crate::toolcall::CallStatus;
use crate::ucp::binding::Operation;

/// What sending a call brought back.
enum Sent {
    Ended(Ending),
    /// The server needs the user's input before it can finish.
    AsksInput(InputRequired),
}

fn ending_of(result: Result<crate::mcp::CallOutcome, McpError>) -> Sent {
    Sent::Ended(match result {
        Ok(outcome) => match outcome.answer {
            CallAnswer::InputRequired(required) => return Sent::AsksInput(required),
            CallAnswer::Done(output) => Ending {
                status: if output.is_error {
                    CallStatus::Failed
                } else {
                    CallStatus::Succeeded
                },
                output: output.text,
                is_error: output.is_error,
                structured: output.structured,
            },
        },
        Err(e) if e.outcome_unknown() => {
            Ending::error(CallStatus::Interrupted, results::interrupted())
        }
        Err(e) => Ending::error(CallStatus::Failed, results::call_failed(&e.to_string())),
    })
}

fn invocation(call: &CallRecord, retry: Option<InputRetry>) -> Option<ToolInvocation> {
    let Some(Value::Object(arguments)) = call.arguments.clone() else {
        return None;
    };
    Some(ToolInvocation {
        server: call.server.clone()?,
        tool: call.tool.clone()?,
        arguments,
        idempotency_key: call.can_change.then(|| call.id.clone()),
        retry,
    })
}

/// Whether sending the call twice cannot do its work twice: a trusted read
/// carries no key, and a write is safe where a server trusted now says it
/// honours keys (an untrusted server's claim is not believed).
async fn safe_to_resend(inner: &Inner, call: &CallRecord) -> bool {
    if !call.can_change {
        return true;
    }
    let Some(server) = call.server.as_deref() else {
        return false;
    };
    let trust = inner.trust_of(server);
    if trust == Trust::Untrusted {
        return false;
    }
    // A merchant's completion or cancellation carries the key the binding
    // requires (in `meta`), so every merchant recognises its repeat.
    let required_by_the_binding = inner
        .settings()
        .mcp_servers
        .get(server)
        .is_some_and(|config| config.ucp.is_some())
        && call
            .tool
            .as_deref()
            .is_some_and(|tool| Operation::of(tool).key_required());
    let declares = required_by_the_binding
        || inner
            .tools
            .honours_idempotency_keys(server)
            .await
            .unwrap_or(false);
    policy::resend_is_safe(call.can_change, trust, declares)
}

/// Sends the call; if the connection broke while it was out and sending
/// again is safe, sends it once more (the server is restarted first).
/// What its server asks the user on the connection meanwhile is put
/// before the user (`elicitation/live.rs`); what was declined for the user is
/// told to the model before the result.
async fn send(
    inner: &Inner,
    call: &CallRecord,
    retry: Option<InputRetry>,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Sent {
    let Some(invocation) = invocation(call, retry) else {
        return Sent::Ended(Ending::error(
            CallStatus::Failed,
            results::call_failed("调用缺少服务器、工具或参数"),
        ));
    };
    let invocation = match mandates::attach(inner, call, invocation) {
        Ok(invocation) => invocation,
        Err(why) => {
            return Sent::Ended(Ending::error(
                CallStatus::Failed,
                results::call_failed(&why),
            ));
        }
    };
    let watch = CallWatch::new(inner, call, emit);
    let first = watch
        .wait(inner.tools.call_tool(invocation.clone(), &watch))
        .await;
    let result = match first {
        Err(e) if e.outcome_unknown() && safe_to_resend(inner, call).await => {
            emit(AgentEvent::ServerRestarted {
                server: invocation.server.clone(),
                reason: e.to_string(),
            });
            watch.wait(inner.tools.call_tool(invocation, &watch)).await
        }
        other => other,
    };
    if let Ok(outcome) = &result
        && let Some(reason) = &outcome.restarted
    {
        emit(AgentEvent::ServerRestarted {
            server: call.server.clone().unwrap_or_default(),
            reason: reason.clone(),
        });
    }
    let mut sent = ending_of(result);
    if let Sent::Ended(ending) = &mut sent {
        let notes = watch.take_notes();
        if !notes.is_empty() {
            ending.output = format!("{}\n\n{}", notes.join("\n"), ending.output);
        }
    }
    sent
}

fn to_running(
    conn: &rusqlite::Connection,
    call: &CallRecord,
    now: i64,
) -> Result<CallRecord, StoreError> {
    calls::move_call(
        conn,
        call.clone(),
        CallStatus::Running,
        &CallUpdate::default(),
        now,
    )
}

/// Stores how the call ended, and closes `closing` in the same
/// transaction when this was the last call of that batch to run.
fn finish(
    inner: &Inner,
    call: &CallRecord,
    ending: Ending,
    closing: Option<&BatchRecord>,
) -> Result<CallRecord, AgentError> {
    let now = inner.now();
    let store = |tx: &rusqlite::Connection| {
        let done = store_ending(tx, call, ending, now)?;
        if let Some(batch) = closing {
            finalize(tx, batch, BatchState::Done, now)?;
        }
        Ok::<_, StoreError>(done)
    };
    // A write's ending replaces its `running` row: both must survive a
    // power loss. A trusted read's may be lost: it runs again.
    Ok(match Storing::of(call) {
        Storing::BeforeSending => inner.store.with_durable_tx(store)?,
        Storing::AfterSending => inner.store.with_tx(store)?,
    })
}

/// Moves `call` to its ending, by way of `running` if it is not there
/// yet, inside the caller's transaction.
pub(crate) fn store_ending(
    tx: &rusqlite::Connection,
    call: &CallRecord,
    ending: Ending,
    now: i64,
) -> Result<CallRecord, StoreError> {
    let running = if call.status == CallStatus::Running {
        call.clone()
    } else {
        to_running(tx, call, now)?
    };
    // A completion that carried the shopper's mandate keeps the
    // merchant's signed receipt beside it.
    if ending.status == CallStatus::Succeeded
        && mandates::completes_checkout(call)
        && let Some(receipt) = &ending.structured
    {
        store_mandates::set_receipt(tx, &call.id, receipt, now)?;
    }
    let update = CallUpdate {
        output: Some(ending.output),
        is_error: Some(ending.is_error),
        structured_output: ending.structured,
        ..CallUpdate::default()
    };
    calls::move_call(tx, running, ending.status, &update, now)
}

/// When a call's moves are stored, relative to sending it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storing {
    /// `running` is stored (durably) before the call is sent.
    BeforeSending,
    /// The call's moves are stored with its result.
    AfterSending,
}

impl Storing {
    pub(crate) fn of(call: &CallRecord) -> Storing {
        if call.can_change {
            Storing::BeforeSending
        } else {
            Storing::AfterSending
        }
    }
}

/// Runs a stored call and stores how it ended, closing `closing` in the
/// same transaction when given (the batch's last call). An `allowed` or
/// `approved` call is sent (an approval binds to the exact arguments the
/// user saw: changed ones are not sent); one found `running` is sent again
/// only where that is safe, and otherwise ends `interrupted`.
pub(crate) async fn execute(
    inner: &Inner,
    call: &CallRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    closing: Option<&BatchRecord>,
) -> Result<CallRecord, AgentError> {
    let (sent, outcome) = if call.status == CallStatus::Running {
        (
            call.clone(),
            send_again_or_interrupt(inner, call, emit).await?,
        )
    } else {
        let started = match Storing::of(call) {
            Storing::BeforeSending => {
                let now = inner.now();
                inner
                    .store
                    .with_durable_tx(|tx| to_running(tx, call, now))?
            }
            Storing::AfterSending => call.clone(),
        };
        let mut shown = started.clone();
        shown.status = CallStatus::Running;
        emit(AgentEvent::ToolCallStarted {
            call: call_view(&shown),
        });
        let outcome = if approval_holds(call) {
            send(inner, &started, None, emit).await
        } else {
            Sent::Ended(Ending::error(
                CallStatus::Failed,
                results::approval_mismatch(),
            ))
        };
        (started, outcome)
    };
    settle(inner, &sent, outcome, emit, closing).await
}

/// Sends a call again with the user's answers to its server's request
/// for input (`call` was moved back to `running` with the answer).
pub(crate) async fn resume(
    inner: &Inner,
    call: &CallRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<CallRecord, AgentError> {
    let retry = inner.store.with_conn(|c| retry_of(c, &call.id))?;
    emit(AgentEvent::ToolCallStarted {
        call: call_view(call),
    });
    let outcome = send(inner, call, retry, emit).await;
    settle(inner, call, outcome, emit, None).await
}

/// Stores what sending brought: the call's ending, or, when its server
/// asks the user for input, the request (the call then awaits input and
/// is returned so). A request that carries only the server's state is
/// sent back at once.
async fn settle(
    inner: &Inner,
    sent: &CallRecord,
    outcome: Sent,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    closing: Option<&BatchRecord>,
) -> Result<CallRecord, AgentError> {
    let mut outcome = outcome;
    let outcome = loop {
        outcome = match outcome {
            Sent::AsksInput(required) if only_state(&required) => {
                match pass_state(inner, sent, required)? {
                    Ok(retry) => send(inner, sent, Some(retry), emit).await,
                    Err(ending) => Sent::Ended(ending),
                }
            }
            other => break other,
        };
    };
    let ending = match outcome {
        Sent::Ended(ending) => ending,
        Sent::AsksInput(required) => match park(inner, sent, required, emit)? {
            Parked::Waiting(waiting) => return Ok(*waiting),
            Parked::Refused(ending) => ending,
        },
    };
    let done = finish(inner, sent, ending, closing)?;
    emit(AgentEvent::ToolCallFinished {
        call: call_view(&done),
    });
    Ok(done)
}

/// An approval binds to the exact arguments the user saw.
fn approval_holds(call: &CallRecord) -> bool {
    call.status != CallStatus::Approved
        || (call.approved_hash.is_some()
            && call.approved_hash == call.arguments.as_ref().map(hash_json))
}

/// A call found `running`: its outcome is unknown. Sent again, it
/// carries the answers to its server's last request for input, if any.
async fn send_again_or_interrupt(
    inner: &Inner,
    call: &CallRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<Sent, AgentError> {
    Ok(if safe_to_resend(inner, call).await {
        let retry = inner.store.with_conn(|c| retry_of(c, &call.id))?;
        send(inner, call, retry, emit).await
    } else {
        Sent::Ended(Ending::error(
            CallStatus::Interrupted,
            results::interrupted(),
        ))
    })
}

/// Sends calls that are not stored yet, in order, and returns how each
/// ended, for the caller to store with its turn. Only for trusted reads
/// ([`Storing::AfterSending`]): a call that can change something must be
/// stored before it goes out, and is refused here unsent.
pub(crate) async fn send_unstored(
    inner: &Inner,
    reads: &[CallRecord],
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Vec<Ending> {
    let mut endings = Vec::with_capacity(reads.len());
    for read in reads {
        if Storing::of(read) == Storing::BeforeSending {
            endings.push(Ending::error(
                CallStatus::Failed,
                results::call_failed(
                    "a call that can change something must be stored before it is sent",
                ),
            ));
            continue;
        }
        let mut shown = read.clone();
        shown.status = CallStatus::Running;
        emit(AgentEvent::ToolCallStarted {
            call: call_view(&shown),
        });
        endings.push(match send(inner, read, None, emit).await {
            Sent::Ended(ending) => ending,
            // A read's turn is not stored yet: it cannot wait for the user.
            Sent::AsksInput(_) => {
                Ending::failed(results::input_refused("只读的调用不能请求用户输入"))
            }
        });
    }
    endings
}
