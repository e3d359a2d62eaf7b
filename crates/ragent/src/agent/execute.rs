//! Sending one call to its server. A write carries its call id as the
//! idempotency key, so sending it again (after a broken connection or a
//! crash) is safe exactly when the server honours keys.

use serde_json::Value;

use super::Inner;
use super::batch::finalize;
use super::transcript::call_view;
use crate::error::AgentError;
use crate::hashing::hash_json;
use crate::instructions::results;
use crate::mcp::{McpError, ToolInvocation};
use crate::policy::{self, Trust};
use crate::protocol::AgentEvent;
use crate::store::StoreError;
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord, CallUpdate};
use crate::toolcall::CallStatus;

/// How a call ended.
pub(super) struct Ending {
    status: CallStatus,
    output: String,
    is_error: bool,
}

fn ending_of(result: Result<crate::mcp::CallOutcome, McpError>) -> Ending {
    match result {
        Ok(outcome) => Ending {
            status: if outcome.output.is_error {
                CallStatus::Failed
            } else {
                CallStatus::Succeeded
            },
            output: outcome.output.text,
            is_error: outcome.output.is_error,
        },
        Err(e) if e.outcome_unknown() => Ending {
            status: CallStatus::Interrupted,
            output: results::interrupted(),
            is_error: true,
        },
        Err(e) => Ending {
            status: CallStatus::Failed,
            output: results::call_failed(&e.to_string()),
            is_error: true,
        },
    }
}

fn invocation(call: &CallRecord) -> Option<ToolInvocation> {
    let Some(Value::Object(arguments)) = call.arguments.clone() else {
        return None;
    };
    Some(ToolInvocation {
        server: call.server.clone()?,
        tool: call.tool.clone()?,
        arguments,
        idempotency_key: call.can_change.then(|| call.id.clone()),
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
    let declares = inner
        .tools
        .honours_idempotency_keys(server)
        .await
        .unwrap_or(false);
    policy::resend_is_safe(call.can_change, trust, declares)
}

/// Sends the call; if the connection broke while it was out and sending
/// again is safe, sends it once more (the server is restarted first).
pub(super) async fn send(
    inner: &Inner,
    call: &CallRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Ending {
    let Some(invocation) = invocation(call) else {
        return Ending {
            status: CallStatus::Failed,
            output: results::call_failed("调用缺少服务器、工具或参数"),
            is_error: true,
        };
    };
    let first = inner.tools.call_tool(invocation.clone()).await;
    let result = match first {
        Err(e) if e.outcome_unknown() && safe_to_resend(inner, call).await => {
            emit(AgentEvent::ServerRestarted {
                server: invocation.server.clone(),
                reason: e.to_string(),
            });
            inner.tools.call_tool(invocation).await
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
    ending_of(result)
}

fn to_running(
    conn: &rusqlite::Connection,
    call: &CallRecord,
    now: i64,
) -> Result<CallRecord, StoreError> {
    calls::move_held(
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
    // power loss. A trusted read's may be lost with the turn.
    Ok(if call.can_change {
        inner.store.with_durable_tx(store)?
    } else {
        inner.store.with_tx(store)?
    })
}

/// Moves `call` to its ending, by way of `running` if it is not there
/// yet, inside the caller's transaction.
pub(super) fn store_ending(
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
    let update = CallUpdate {
        output: Some(ending.output),
        is_error: Some(ending.is_error),
        ..CallUpdate::default()
    };
    calls::move_held(tx, running, ending.status, &update, now)
}

/// Runs an allowed or approved call: `running`, sent, then its ending.
/// A call that can change something is stored as `running` before it is
/// sent, so a crash while it is out is known. A trusted read is not: its
/// moves are stored with its result, and a read cut off by a crash is
/// still `allowed` or `approved`, and simply runs again.
pub(crate) async fn run_call(
    inner: &Inner,
    call: &CallRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
    closing: Option<&BatchRecord>,
) -> Result<CallRecord, AgentError> {
    let now = inner.now();
    // An approval binds to the exact arguments the user saw.
    let approval_holds = call.status != CallStatus::Approved
        || (call.approved_hash.is_some()
            && call.approved_hash == call.arguments.as_ref().map(hash_json));
    let started = if call.can_change {
        inner
            .store
            .with_durable_tx(|tx| to_running(tx, call, now))?
    } else {
        call.clone()
    };
    let mut shown = started.clone();
    shown.status = CallStatus::Running;
    emit(AgentEvent::ToolCallStarted {
        call: call_view(&shown),
    });
    let ending = if approval_holds {
        send(inner, &started, emit).await
    } else {
        Ending {
            status: CallStatus::Failed,
            output: results::approval_mismatch(),
            is_error: true,
        }
    };
    let done = finish(inner, &started, ending, closing)?;
    emit(AgentEvent::ToolCallFinished {
        call: call_view(&done),
    });
    Ok(done)
}

/// A call found `running` after a restart: sent again with the same key
/// if that is safe, otherwise marked `interrupted` (outcome unknown).
pub(crate) async fn resume_running(
    inner: &Inner,
    call: &CallRecord,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<CallRecord, AgentError> {
    let ending = if safe_to_resend(inner, call).await {
        send(inner, call, emit).await
    } else {
        Ending {
            status: CallStatus::Interrupted,
            output: results::interrupted(),
            is_error: true,
        }
    };
    let done = finish(inner, call, ending, None)?;
    emit(AgentEvent::ToolCallFinished {
        call: call_view(&done),
    });
    Ok(done)
}
