//! A session as a window draws it: messages, tool calls with their
//! status after the message that proposed them (each followed by the
//! requests for input the user answered for it), and the pending card.

use std::collections::{BTreeMap, BTreeSet};

use crate::agent::card;
use crate::agent::elicitation::stored::{answered_item, waiting_card};
use crate::agent::inner::Inner;
use crate::agent::views::{view_on_card, was_asked};
use crate::error::AgentError;
use crate::protocol::{Transcript, TranscriptItem};
use crate::store::StoreError;
use crate::store::calls::{self, BatchState, CallRecord};
use crate::store::failures;
use crate::store::inputs::{self, InputRecord};
use crate::store::messages::{self, Role};

pub(crate) fn build(
    inner: &Inner,
    session_id: &str,
    running: bool,
) -> Result<Transcript, AgentError> {
    Ok(inner.store.with_conn(|conn| {
        let session = crate::store::sessions::get(conn, session_id)?;
        let stored = messages::list(conn, session_id)?;
        // Calls hang under the assistant message that proposed them.
        let mut by_message: BTreeMap<i64, Vec<CallRecord>> = BTreeMap::new();
        let mut batch_message: BTreeMap<String, i64> = BTreeMap::new();
        let session_calls = calls::calls_of_session(conn, session_id)?;
        // Answered requests for input hang under their call.
        let mut answered: BTreeMap<String, Vec<InputRecord>> = BTreeMap::new();
        for record in inputs::answered_in_session(conn, session_id)? {
            answered
                .entry(record.call_id.clone())
                .or_default()
                .push(record);
        }
        let carded: BTreeSet<String> = session_calls
            .iter()
            .filter(|call| was_asked(call))
            .map(|call| call.reply_id.clone())
            .collect();
        for call in session_calls {
            let message_id = match batch_message.get(&call.reply_id) {
                Some(id) => *id,
                None => {
                    let id = calls::get_batch(conn, &call.reply_id)?
                        .map(|b| b.assistant_message_id)
                        .unwrap_or_default();
                    batch_message.insert(call.reply_id.clone(), id);
                    id
                }
            };
            by_message.entry(message_id).or_default().push(call);
        }
        let mut items = Vec::new();
        for message in stored {
            match message.role {
                Role::User => items.push(TranscriptItem::User {
                    id: message.id,
                    text: message.content,
                    at: message.created_at,
                }),
                Role::Assistant => {
                    if !message.content.is_empty() {
                        items.push(TranscriptItem::Assistant {
                            id: message.id,
                            text: message.content,
                            at: message.created_at,
                        });
                    }
                    let mut calls = by_message.remove(&message.id).unwrap_or_default();
                    calls.sort_by_key(|c| c.seq);
                    for call in &calls {
                        items.push(TranscriptItem::ToolCall {
                            call: Box::new(view_on_card(call, carded.contains(&call.reply_id))),
                        });
                        items.extend(
                            answered
                                .get(&call.id)
                                .into_iter()
                                .flatten()
                                .filter_map(|record| answered_item(call, record)),
                        );
                    }
                }
                Role::Notice => items.push(TranscriptItem::Notice {
                    id: message.id,
                    text: message.content,
                    at: message.created_at,
                }),
                Role::Tool => {}
            }
        }
        let pending = match calls::open_batch(conn, session_id)? {
            Some(open) if open.state == BatchState::Pending => Some(card::card(conn, &open)?),
            _ => None,
        };
        let pending_input = match waiting_card(conn, session_id)? {
            Some(card) => Some(card),
            None => inner.live_inputs.card_of_session(session_id),
        };
        let failure = if running {
            None
        } else {
            failures::last(conn, session_id)?
        };
        Ok::<_, StoreError>(Transcript {
            session,
            items,
            pending,
            pending_input,
            running,
            failure,
        })
    })?)
}
