//! A model turn whose calls are all trusted reads (or refused before anyone
//! is asked) runs them first and is stored after: the assistant message,
//! its batch, every call with each of its moves, their results and the
//! closed batch, in one transaction, on a thread of its own while the next
//! request goes out and the model answers it. The next request is built
//! from the turn as held, which is what the store will give back.
//!
//! A read changes nothing, so there is nothing to write ahead of it: a
//! crash before the turn is stored loses it, exactly as a crash while the
//! model streams does, and the user's message is answered again when they
//! ask. Calls that can change something never come here: they are stored
//! as `running` before they are sent. The run waits for the turn to be
//! stored before it stores anything else, reads the conversation again or
//! ends, so the turns are stored in order; the page hears of the turn (its
//! message and its calls' endings) once it is stored, and of the session's
//! later events only after that (`events.rs`). Storing a turn
//! is about half of what a round of reads costs the agent
//! (docs/benchmarks.md).

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::agent::batch::{self, RanTurn};
use crate::agent::context::Windows;
use crate::agent::execute;
use crate::agent::inner::Inner;
use crate::agent::judge::JudgedBatch;
use crate::error::AgentError;
use crate::history::{self, Counted};
use crate::llm::{AssistantTurn, ChatMessage, ToolCallRequest, turn};
use crate::protocol::AgentEvent;
use crate::store::StoreError;
use crate::store::messages::{self, NewMessage, Role};

/// A turn of reads that ran, held until it is stored.
pub(crate) struct ReadTurn {
    session_id: String,
    run_id: String,
    text: String,
    /// The calls as the model is shown them again.
    calls: Vec<ToolCallRequest>,
    proposed_at: i64,
    ran: RanTurn,
}

/// Runs the turn's reads in the model's order.
pub(crate) async fn run(
    inner: &Inner,
    session_id: &str,
    run_id: &str,
    answer: &AssistantTurn,
    judged: JudgedBatch,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<ReadTurn, AgentError> {
    let proposed_at = inner.now();
    let reads = judged.allowed(session_id);
    let endings = execute::send_unstored(inner, &reads, emit).await;
    let ended_at = inner.now();
    let ran = RanTurn::new(judged, endings, session_id, run_id, proposed_at, ended_at)?;
    Ok(ReadTurn {
        session_id: session_id.to_string(),
        run_id: run_id.to_string(),
        text: answer.text.clone(),
        calls: turn::sendable_calls(&answer.tool_calls).into_owned(),
        proposed_at,
        ran,
    })
}

impl ReadTurn {
    /// The turn as the model reads it back once stored: the assistant's
    /// message, then each call's result in the model's order, each with its
    /// estimated tokens. Sent in the next request, and given to the
    /// session's window once stored.
    pub(crate) fn messages(&self) -> Vec<Counted<Arc<ChatMessage>>> {
        let assistant = ChatMessage::Assistant {
            content: self.text.clone(),
            tool_calls: self.calls.clone(),
        };
        let results = self.ran.calls().map(|call| ChatMessage::Tool {
            tool_call_id: call.model_call_id.clone(),
            content: batch::result_content(call),
        });
        std::iter::once(assistant)
            .chain(results)
            .map(|message| {
                let tokens = history::message_tokens(&message);
                (Arc::new(message), tokens)
            })
            .collect()
    }

    /// Stores the turn on a thread of its own. The session's events wait
    /// until it is stored, then follow the turn's own.
    pub(crate) fn store(self, inner: &Inner, held: Vec<Counted<Arc<ChatMessage>>>) -> StoringTurn {
        let hold = inner.events.hold(&self.session_id, &self.run_id);
        let session_id = self.session_id.clone();
        let store = Arc::clone(&inner.store);
        let task = tokio::task::spawn_blocking(move || {
            let (message_id, stored) = store.with_tx(|tx| {
                let after = messages::newest_id(tx, &self.session_id)?;
                let message_id = messages::append(
                    tx,
                    &NewMessage {
                        session_id: &self.session_id,
                        run_id: Some(&self.run_id),
                        role: Role::Assistant,
                        content: &self.text,
                        tool_calls: &self.calls,
                        tool_call_id: None,
                        call_id: None,
                    },
                    self.proposed_at,
                )?;
                self.ran.write(tx, message_id)?;
                let last_id = messages::newest_id(tx, &self.session_id)?;
                Ok::<_, StoreError>((message_id, StoredIds { after, last_id }))
            })?;
            let mut told = Vec::new();
            if !self.text.is_empty() {
                told.push(AgentEvent::AssistantMessage {
                    message_id,
                    text: self.text,
                });
            }
            told.extend(self.ran.finished_events());
            hold.release(told);
            Ok(stored)
        });
        StoringTurn {
            task,
            session_id,
            held,
        }
    }
}

/// Where a stored turn's messages fall among the session's: after message
/// `after`, through message `last_id`.
struct StoredIds {
    after: i64,
    last_id: i64,
}

/// A turn of reads being stored, and its messages as held.
pub(crate) struct StoringTurn {
    task: JoinHandle<Result<StoredIds, StoreError>>,
    session_id: String,
    held: Vec<Counted<Arc<ChatMessage>>>,
}

impl StoringTurn {
    /// Waits until the turn is stored, or says why it was not; once stored,
    /// the session's window takes the turn's messages as held, rather than
    /// reading them back.
    pub(crate) async fn stored(self, windows: &Windows) -> Result<(), AgentError> {
        match self.task.await {
            Ok(Ok(ids)) => {
                windows.take_stored(&self.session_id, ids.after, ids.last_id, &self.held);
                Ok(())
            }
            Ok(Err(error)) => Err(error.into()),
            Err(error) => {
                tracing::error!(%error, "the thread storing a turn of reads stopped");
                Err(StoreError::Poisoned.into())
            }
        }
    }
}
