//! Previews: what a write would do, computed by its own server. A write
//! tool may name in its definition's `_meta["ragent/preview"]` a tool of
//! the same server that takes the same arguments and only reads. The core
//! believes that only of a trusted server ([`bound_preview`]), calls the
//! preview when the card is made ([`fill_card`]) and again when the user
//! approves ([`check_approvals`]): an approval whose call would now do
//! something else is refused, and the card shows the new preview. A call
//! that moves money is previewed once more before it is sent behind a
//! write of its card that went out ([`ask_again_if_moved`]).

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde_json::{Map, Value};

use super::Inner;
use super::batch::{KnownTool, ToolIndex, record_audit};
use crate::error::AgentError;
use crate::mcp::{ToolInvocation, UNWATCHED, qualified_name};
use crate::policy::Trust;
use crate::protocol::{
    AgentEvent, AuditDecision, CallDecision, CallPreview, CallRisk, Decision, PreviewOutcome,
};
use crate::store::StoreError;
use crate::store::calls::{self, BatchState, CallRecord, CallUpdate};
use crate::toolcall::CallStatus;

/// The tool that previews calls of `write`, when its word can be taken:
/// `write` is a trusted server's unchanged definition naming a tool of the
/// same server, and that tool is listed, unchanged, a trusted read, and
/// takes exactly the same input schema. Anything else has no preview: an
/// untrusted server could name a "preview" that writes.
pub(crate) fn bound_preview<'a>(write: &KnownTool, tools: &'a ToolIndex) -> Option<&'a KnownTool> {
    let name = write.info.preview.as_deref()?;
    if write.facts.trust != Trust::Trusted || write.facts.definition_changed {
        return None;
    }
    let preview = tools.get(&qualified_name(&write.info.server, name))?;
    let takes_same_arguments = preview.info.input_schema == write.info.input_schema;
    let reads = preview.facts.trust == Trust::Trusted && !preview.facts.can_change();
    (preview.info.server == write.info.server
        && reads
        && takes_same_arguments
        && !preview.facts.definition_changed
        && preview.info.qualified_name != write.info.qualified_name)
        .then_some(preview)
}

/// Asks `preview` what a call with `arguments` would do.
async fn compute(inner: &Inner, preview: &KnownTool, arguments: &Value, now: i64) -> CallPreview {
    let outcome = match arguments {
        Value::Object(arguments) => ask(inner, preview, arguments.clone()).await,
        _ => PreviewOutcome::Unavailable {
            message: "the call's arguments are not an object".into(),
        },
    };
    CallPreview {
        tool: preview.info.qualified_name.clone(),
        computed_at: now,
        outcome,
    }
}

async fn ask(inner: &Inner, preview: &KnownTool, arguments: Map<String, Value>) -> PreviewOutcome {
    let invocation = ToolInvocation {
        server: preview.info.server.clone(),
        tool: preview.info.name.clone(),
        arguments,
        idempotency_key: None,
        retry: None,
    };
    match inner
        .tools
        .call_tool(invocation, UNWATCHED)
        .await
        .map(|o| o.into_output())
    {
        // The shopper reads the card: the server's own sentence for them
        // (`{error: {message}}`) when it gives one, else its text.
        Ok(output) if output.is_error => PreviewOutcome::Refused {
            message: output
                .structured
                .as_ref()
                .and_then(|content| content.pointer("/error/message"))
                .and_then(Value::as_str)
                .filter(|message| !message.trim().is_empty())
                .map_or(output.text, str::to_owned),
        },
        Ok(output) => match output.structured {
            Some(content) => PreviewOutcome::Computed { content },
            None => PreviewOutcome::Unavailable {
                message: "the preview answered without structured content".into(),
            },
        },
        Err(error) => PreviewOutcome::Unavailable {
            message: error.to_string(),
        },
    }
}

/// What a preview tool that can no longer be believed stands for.
fn unbound(tool: &str, now: i64) -> CallPreview {
    CallPreview {
        tool: tool.to_string(),
        computed_at: now,
        outcome: PreviewOutcome::Unavailable {
            message: "the server's preview is no longer available or trusted".into(),
        },
    }
}

/// `call`'s preview computed again with `arguments`, by the tool that
/// binds it in `tools` now (none bound: unavailable).
async fn again(
    inner: &Inner,
    tools: &ToolIndex,
    call: &CallRecord,
    arguments: &Value,
) -> CallPreview {
    let now = inner.now();
    match tools
        .get(&call.qualified_name)
        .and_then(|write| bound_preview(write, tools))
    {
        Some(preview) => compute(inner, preview, arguments, now).await,
        None => unbound(call.preview_tool.as_deref().unwrap_or_default(), now),
    }
}

/// Whether `fresh` promises what `call`'s card showed.
fn promises_what_was_shown(call: &CallRecord, fresh: &CallPreview) -> bool {
    call.preview
        .as_ref()
        .is_some_and(|shown| shown.outcome.same_consequences(&fresh.outcome))
}

/// Computes the preview of every asking call of the batch that has none
/// yet and whose tool binds one, and stores it with the call, before the
/// card is shown. `tools` is the listing the calls were judged against.
pub(crate) async fn fill_card(
    inner: &Inner,
    reply_id: &str,
    tools: &ToolIndex,
) -> Result<(), StoreError> {
    let waiting = inner
        .store
        .with_conn(|c| calls::calls_of_batch(c, reply_id))?;
    for call in waiting {
        if call.status != CallStatus::Asking || call.preview.is_some() {
            continue;
        }
        let Some(write) = tools.get(&call.qualified_name) else {
            continue;
        };
        let Some(preview) = bound_preview(write, tools) else {
            continue;
        };
        let arguments = call.arguments.clone().unwrap_or(Value::Null);
        let computed = compute(inner, preview, &arguments, inner.now()).await;
        let now = inner.now();
        inner
            .store
            .with_tx(|tx| calls::set_preview(tx, &call, &computed, None, now))?;
    }
    Ok(())
}

/// Computes again, before an approval is recorded, the preview of each
/// approved call that has one, with the arguments that would be sent. When
/// any differs from what its card showed, nothing is recorded: the new
/// previews (and edited arguments) are stored, audited and shown on the
/// card, and the reply is refused. A reply that is wrong in another way is
/// left for [`super::respond`] to refuse.
pub(crate) async fn check_approvals(
    inner: &Inner,
    session_id: &str,
    reply_id: &str,
    decisions: &[CallDecision],
) -> Result<(), AgentError> {
    super::batch::expire_if_due(inner, session_id)?;
    let asking = inner
        .store
        .with_conn(|c| asking_calls(c, session_id, reply_id))?;
    let mut to_check = Vec::new();
    for decision in decisions {
        let edited = match &decision.decision {
            Decision::Approve => None,
            Decision::ApproveEdited { arguments } => Some(arguments),
            Decision::Deny { .. } => continue,
        };
        if let Some(call) = asking.get(&decision.call_id)
            && call.preview_tool.is_some()
        {
            // The arguments the card proposed, sent back as they were, are
            // no edit.
            let edited = edited.filter(|edited| Some(*edited) != call.arguments.as_ref());
            to_check.push((call, edited));
        }
    }
    if to_check.is_empty() {
        return Ok(());
    }
    // Whatever else is wrong with the reply is refused before any preview
    // is computed or edited arguments are stored.
    if let Some(error) = super::respond::diagnose(inner, session_id, reply_id, decisions) {
        return Err(error);
    }
    let tools = super::run::tool_index(inner, &|_| {}).await?;
    let mut changed = Vec::new();
    for (call, edited) in to_check {
        let arguments = edited
            .or(call.arguments.as_ref())
            .cloned()
            .unwrap_or(Value::Null);
        let fresh = again(inner, &tools, call, &arguments).await;
        if !promises_what_was_shown(call, &fresh) || edited.is_some() {
            changed.push((call.clone(), fresh, edited.cloned()));
        }
    }
    let Some((first, _, _)) = changed.first() else {
        return Ok(());
    };
    // The user's own edit is not news about the shop: only a call whose
    // consequences changed without an edit is a price, stock or total that
    // moved.
    let refused = match changed.iter().find(|(_, _, edited)| edited.is_none()) {
        Some((moved, _, _)) => AgentError::PreviewChanged {
            call_id: moved.id.clone(),
        },
        None => AgentError::EditPreviewed {
            call_id: first.id.clone(),
        },
    };
    let now = inner.now();
    let card = inner.store.with_tx(|tx| {
        for (call, fresh, edited) in &changed {
            let revised = calls::set_preview(tx, call, fresh, edited.as_ref(), now)?;
            let reason = edited
                .is_some()
                .then_some("arguments edited: their preview is shown for a new decision");
            record_audit(tx, &revised, AuditDecision::PreviewChanged, reason, now)?;
        }
        let batch = calls::get_batch(tx, reply_id)?
            .ok_or_else(|| StoreError::NotFound(format!("batch {reply_id}")))?;
        super::batch::card(tx, &batch)
    })?;
    inner.emit(session_id, None, AgentEvent::ConfirmationRequested { card });
    Err(refused)
}

/// Whether `call` must be previewed again before it is sent: it moves
/// money, was approved on a preview, and another write of its card has
/// been sent since the card was made (adding to the cart changes the
/// order's total), so what it would do may no longer be what was shown.
pub(crate) fn recheck_before_sending(
    conn: &Connection,
    call: &CallRecord,
) -> Result<bool, StoreError> {
    if call.status != CallStatus::Approved
        || call.risk != CallRisk::MovesMoney
        || call.preview.is_none()
    {
        return Ok(false);
    }
    Ok(calls::calls_of_batch(conn, &call.reply_id)?
        .iter()
        .any(|other| other.id != call.id && other.can_change && other.status.was_sent()))
}

/// Before a call [`recheck_before_sending`] names is sent: its preview
/// computed again. When it now promises other consequences than the card
/// showed, the call is not sent: it asks again with the new preview, its
/// batch reopens until `expires_at`, and the card is shown; `true` is
/// returned then.
pub(crate) async fn ask_again_if_moved(
    inner: &Inner,
    call: &CallRecord,
    expires_at: i64,
) -> Result<bool, AgentError> {
    let tools = super::run::tool_index(inner, &|_| {}).await?;
    let arguments = call.arguments.clone().unwrap_or(Value::Null);
    let fresh = again(inner, &tools, call, &arguments).await;
    if promises_what_was_shown(call, &fresh) {
        return Ok(false);
    }
    let now = inner.now();
    let card = inner.store.with_tx(|tx| {
        let update = CallUpdate {
            note: Some("an earlier call of its card changed what it would do: asks again".into()),
            ..CallUpdate::default()
        };
        let asking = calls::move_call(tx, call.clone(), CallStatus::Asking, &update, now)?;
        let revised = calls::set_preview(tx, &asking, &fresh, None, now)?;
        record_audit(
            tx,
            &revised,
            AuditDecision::PreviewChanged,
            Some("an earlier call of its card ran: its new preview is shown for a new decision"),
            now,
        )?;
        calls::reopen_batch(tx, &call.reply_id, expires_at)?;
        let batch = calls::get_batch(tx, &call.reply_id)?
            .ok_or_else(|| StoreError::NotFound(format!("batch {}", call.reply_id)))?;
        super::batch::card(tx, &batch)
    })?;
    // The page holds the call as approved: it is told of the move first,
    // so the card sent again is not read as a stale one.
    inner.emit(
        &call.session_id,
        None,
        AgentEvent::CallStatusChanged {
            call_id: call.id.clone(),
            status: CallStatus::Asking,
        },
    );
    inner.emit(
        &call.session_id,
        None,
        AgentEvent::ConfirmationRequested { card },
    );
    Ok(true)
}

/// The asking calls of a pending batch of the session, by id; none when
/// the reply does not name such a batch.
fn asking_calls(
    conn: &Connection,
    session_id: &str,
    reply_id: &str,
) -> Result<BTreeMap<String, CallRecord>, StoreError> {
    let pending = calls::get_batch(conn, reply_id)?
        .filter(|b| b.session_id == session_id && b.state == BatchState::Pending);
    if pending.is_none() {
        return Ok(BTreeMap::new());
    }
    Ok(calls::calls_of_batch(conn, reply_id)?
        .into_iter()
        .filter(|c| c.status == CallStatus::Asking)
        .map(|c| (c.id.clone(), c))
        .collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::{ToolHints, ToolInfo};

    fn tool(server: &str, name: &str, read_only: bool, trusted: bool) -> ToolInfo {
        ToolInfo {
            server: server.into(),
            name: name.into(),
            qualified_name: qualified_name(server, name),
            title: None,
            description: None,
            input_schema: json!({"type": "object", "properties": {"orderNo": {"type": "string"}}}),
            hints: ToolHints {
                read_only: Some(read_only),
                destructive: Some(!read_only),
                idempotent: None,
                open_world: Some(false),
            },
            moves_money: false,
            changes_cart: false,
            undoable: false,
            preview: None,
            definition: json!({}),
            definition_hash: String::new(),
            trusted,
        }
    }

    fn pay_order(trusted: bool) -> ToolInfo {
        ToolInfo {
            preview: Some("preview_pay_order".into()),
            ..tool("shop", "pay_order", false, trusted)
        }
    }

    fn index(tools: Vec<(ToolInfo, bool)>) -> ToolIndex {
        tools
            .into_iter()
            .map(|(info, changed)| (info.qualified_name.clone(), KnownTool::new(info, changed)))
            .collect()
    }

    fn bound(tools: &ToolIndex) -> Option<String> {
        bound_preview(&tools["shop__pay_order"], tools).map(|p| p.info.qualified_name.clone())
    }

    #[test]
    fn a_trusted_writes_preview_is_bound_when_it_is_a_trusted_read_taking_the_same_arguments() {
        let tools = index(vec![
            (pay_order(true), false),
            (tool("shop", "preview_pay_order", true, true), false),
        ]);
        assert_eq!(bound(&tools).as_deref(), Some("shop__preview_pay_order"));
    }

    #[test]
    fn an_untrusted_servers_preview_is_ignored() {
        let tools = index(vec![
            (pay_order(false), false),
            (tool("shop", "preview_pay_order", true, false), false),
        ]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_preview_that_may_write_is_not_called() {
        let tools = index(vec![
            (pay_order(true), false),
            (tool("shop", "preview_pay_order", false, true), false),
        ]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_preview_taking_other_arguments_is_not_bound() {
        let mut preview = tool("shop", "preview_pay_order", true, true);
        preview.input_schema =
            json!({"type": "object", "properties": {"orderNo": {"type": "integer"}}});
        let tools = index(vec![(pay_order(true), false), (preview, false)]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_preview_is_looked_up_on_the_writes_own_server_only() {
        let tools = index(vec![
            (pay_order(true), false),
            (tool("other", "preview_pay_order", true, true), false),
        ]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_changed_definition_of_either_tool_unbinds_the_preview() {
        let write_changed = index(vec![
            (pay_order(true), true),
            (tool("shop", "preview_pay_order", true, true), false),
        ]);
        assert_eq!(bound(&write_changed), None);
        let preview_changed = index(vec![
            (pay_order(true), false),
            (tool("shop", "preview_pay_order", true, true), true),
        ]);
        assert_eq!(bound(&preview_changed), None);
    }

    #[test]
    fn a_write_naming_itself_as_its_preview_has_none() {
        let mut write = pay_order(true);
        write.preview = Some("pay_order".into());
        let tools = index(vec![(write, false)]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn previews_differ_when_any_consequence_differs_and_two_failures_are_alike() {
        let computed = |pay: i64| PreviewOutcome::Computed {
            content: json!({"totals": [{"kind": "pay", "amountFen": pay}]}),
        };
        assert!(computed(679_900).same_consequences(&computed(679_900)));
        assert!(!computed(679_900).same_consequences(&computed(699_900)));
        let refused = |message: &str| PreviewOutcome::Refused {
            message: message.into(),
        };
        assert!(!refused("库存不足").same_consequences(&computed(679_900)));
        assert!(!refused("库存不足").same_consequences(&refused("订单不存在")));
        let unavailable = |message: &str| PreviewOutcome::Unavailable {
            message: message.into(),
        };
        assert!(unavailable("timeout").same_consequences(&unavailable("stopped")));
        assert!(!unavailable("timeout").same_consequences(&computed(1)));
    }
}
