//! The user's answer to a server's request for input, taken where the
//! request waits: on its server's connection (`live.rs`), where the run
//! holding the call goes on, or stored with its call (`stored.rs`), where
//! a new run sends the call again. The page answers only what the core
//! asked: an answer names a request held here, and is checked against
//! what was judged when it came.

use serde_json::Value;

use crate::agent::elicitation::judge::outcome_of;
use crate::agent::elicitation::stored::{self, audit_input};
use crate::agent::held_inputs::{ASK_KEY, closed_event};
use crate::agent::inner::Inner;
use crate::agent::start::Start;
use crate::elicitation;
use crate::error::AgentError;
use crate::protocol::{AuditDecision, InputReply, KeyedReply};
use crate::web_page::web_page;

/// Records the answer to a request stored with its call: the run to start
/// sends the call again.
pub(crate) fn answer_stored(
    inner: &Inner,
    session_id: &str,
    request_id: &str,
    replies: &[KeyedReply],
) -> Result<Start, AgentError> {
    let call_id = stored::record_answer(inner, session_id, request_id, replies)?;
    Ok(Start::ResumeInput { call_id })
}

/// Sends the user's answer to a request waiting on its connection, when
/// `request_id` names one of the session's, and answers with the id of the
/// run that goes on; `None` when it does not. An answer that does not fit
/// the request changes nothing.
pub(crate) fn answer_live(
    inner: &Inner,
    session_id: &str,
    request_id: &str,
    replies: &[KeyedReply],
) -> Result<Option<String>, AgentError> {
    let (waiting, response) = {
        let mut held = inner.live_inputs.lock();
        let Some(waiting) = held
            .get(request_id)
            .filter(|w| w.card.session_id == session_id)
        else {
            return Ok(None);
        };
        let mut responses = elicitation::responses(&waiting.card.asks, replies)?;
        let response = responses.remove(ASK_KEY).unwrap_or(Value::Null);
        let Some(waiting) = held.remove(request_id) else {
            return Ok(None);
        };
        (waiting, response)
    };
    let decision = match replies.first().map(|r| &r.reply) {
        Some(InputReply::Accept { .. }) => AuditDecision::UserAcceptedInput,
        Some(InputReply::Decline) => AuditDecision::UserDeclinedInput,
        _ => AuditDecision::UserCancelledInput,
    };
    let now = inner.now();
    inner
        .store
        .with_tx(|tx| audit_input(tx, &waiting.call, decision, &response, Some(ASK_KEY), now))?;
    if !waiting.request.answer(&response) {
        tracing::warn!(
            request = request_id,
            "the server no longer waited for the answer"
        );
    }
    inner.emit(
        session_id,
        None,
        closed_event(&waiting.card, outcome_of(replies)),
    );
    Ok(Some(inner.run_id(session_id).unwrap_or_default()))
}

/// The address of the waiting request's page `key` (a URL-mode request),
/// for the shell to open in the browser: only an address the server asked
/// for and code judged is ever opened, never one the page names.
pub(crate) fn url_to_open(
    inner: &Inner,
    session_id: &str,
    request_id: &str,
    key: &str,
) -> Result<String, AgentError> {
    let url = match inner.live_inputs.url(session_id, request_id, key) {
        Some(url) => url,
        None => stored::url_of_waiting(inner, session_id, request_id, key)?,
    };
    // Judged when the request came; again here for a request stored by an
    // older version that judged less.
    web_page(&url)?;
    Ok(url)
}
