//! A model turn whose calls are all trusted reads (or refused before anyone
//! is asked) runs them first and is stored after: the assistant message,
//! its batch, every call with each of its moves, their results and the
//! closed batch, in one transaction.
//!
//! A read changes nothing, so there is nothing to write ahead of it: a
//! crash while one is out loses the turn, exactly as a crash while the
//! model streams does, and the user's message is answered again when
//! they ask. Calls that can change something never come here: they are
//! stored as `running` before they are sent. A round of reads makes one
//! commit, not two: each commit writes every page it touched to the log
//! (docs/benchmarks.md).

use crate::agent::batch;
use crate::agent::execute;
use crate::agent::inner::Inner;
use crate::agent::judge::JudgedBatch;
use crate::agent::views::call_view;
use crate::error::AgentError;
use crate::llm::{AssistantTurn, turn};
use crate::protocol::AgentEvent;
use crate::store::StoreError;
use crate::store::messages::{self, NewMessage, Role};

/// Runs the turn's reads in the model's order, then stores the turn.
/// Returns the assistant message's id.
pub(crate) async fn run(
    inner: &Inner,
    session_id: &str,
    run_id: &str,
    answer: &AssistantTurn,
    judged: JudgedBatch,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<i64, AgentError> {
    let proposed_at = inner.now();
    let reads = judged.allowed(session_id);
    let endings = execute::send_unstored(inner, &reads, emit).await;
    let ended_at = inner.now();
    let (message_id, ran) = inner.store.with_tx(|tx| {
        let message_id = messages::append(
            tx,
            &NewMessage {
                session_id,
                run_id: Some(run_id),
                role: Role::Assistant,
                content: &answer.text,
                tool_calls: &turn::sendable_calls(&answer.tool_calls),
                tool_call_id: None,
                call_id: None,
            },
            proposed_at,
        )?;
        let ran = batch::record_ran(
            tx,
            judged,
            endings,
            session_id,
            run_id,
            message_id,
            proposed_at,
            ended_at,
        )?;
        Ok::<_, StoreError>((message_id, ran))
    })?;
    if !answer.text.is_empty() {
        emit(AgentEvent::AssistantMessage {
            message_id,
            text: answer.text.clone(),
        });
    }
    for call in ran.rejected.iter().chain(&ran.done) {
        emit(AgentEvent::ToolCallFinished {
            call: call_view(call),
        });
    }
    Ok(message_id)
}
