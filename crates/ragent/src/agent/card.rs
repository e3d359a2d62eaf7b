//! The confirmation card: a stored batch as the user sees it, built from
//! what is stored and put before the user by one function, [`show`],
//! whichever step asks (a new turn, a batch judged again, a preview that
//! moved).

use rusqlite::Connection;
use serde_json::Value;

use crate::agent::inner::Inner;
use crate::agent::preview::fill_card;
use crate::agent::tools::ToolIndex;
use crate::error::AgentError;
use crate::protocol::{AgentEvent, CardCall, ConfirmationCard};
use crate::store::StoreError;
use crate::store::calls::{self, BatchRecord};

/// Puts the batch `reply_id` before the user as a card: first, when
/// `tools` is given, the preview of every asking call that has none yet is
/// computed by the tool that binds it there; then the card is built from
/// what is stored and sent.
pub(crate) async fn show(
    inner: &Inner,
    session_id: &str,
    run_id: Option<&str>,
    reply_id: &str,
    tools: Option<&ToolIndex>,
) -> Result<(), AgentError> {
    if let Some(tools) = tools {
        fill_card(inner, reply_id, tools).await?;
    }
    let card = inner.store.with_conn(|c| {
        let batch = calls::get_batch(c, reply_id)?
            .ok_or_else(|| StoreError::NotFound(format!("batch {reply_id}")))?;
        card(c, &batch)
    })?;
    inner.emit(
        session_id,
        run_id,
        AgentEvent::ConfirmationRequested { card },
    );
    Ok(())
}

/// The card for a stored batch.
pub(crate) fn card(conn: &Connection, batch: &BatchRecord) -> Result<ConfirmationCard, StoreError> {
    let mut shown = Vec::new();
    for call in calls::calls_of_batch(conn, &batch.reply_id)? {
        let input_schema = calls::input_schema(conn, &call.id)?.unwrap_or(Value::Null);
        let arguments = call.arguments.unwrap_or(Value::Null);
        shown.push(CardCall {
            call_id: call.id,
            qualified_name: call.qualified_name,
            server: call.server.unwrap_or_default(),
            tool: call.tool.unwrap_or_default(),
            title: call.title,
            description: call.description,
            // Written as the call is sent: serde_json, no reformatting.
            arguments_text: serde_json::to_string(&arguments)?,
            arguments,
            input_schema,
            destructive: call.destructive,
            trusted: call.trusted,
            declares_read_only: call.declares_read_only,
            definition_changed: call.definition_changed,
            risk: call.risk,
            status: call.status,
            preview: call.preview,
        });
    }
    Ok(ConfirmationCard {
        reply_id: batch.reply_id.clone(),
        session_id: batch.session_id.clone(),
        created_at: batch.created_at,
        expires_at: batch.expires_at,
        calls: shown,
    })
}
