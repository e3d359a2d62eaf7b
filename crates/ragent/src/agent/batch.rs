//! Batches: the calls of one model turn, judged by the policy, stored,
//! and closed (run, expired or superseded) as a unit. Tool results reach
//! the conversation only when a batch closes, in the model's order.
//!
//! The words, used alike in code, protocol and docs: a *batch* is judged
//! ([`judge`]: each call's [`FirstMove`]) into a [`JudgedBatch`], stored
//! ([`record`]) as a [`StoredBatch`]; when any call asks, it is shown as a
//! *card* ([`ConfirmationCard`]) and answered by a *reply*
//! (`Agent::respond`), which names the batch by its `reply_id`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rusqlite::Connection;
use serde_json::Value;

use super::{DEFAULT_SESSION_TITLE, Inner};
use crate::error::AgentError;
use crate::instructions::results;
use crate::llm::{ToolCallRequest, turn};
use crate::mcp::ToolInfo;
use crate::policy::{self, AllowedBy, ToolFacts, Verdict};
use crate::protocol::{AgentEvent, AuditDecision, CallRisk, CardCall, ConfirmationCard, Rejection};
use crate::settings::Settings;
use crate::store::audit::{self, NewAudit};
use crate::store::calls::{self, BatchRecord, BatchState, CallRecord, CallUpdate, NewCall};
use crate::store::messages::{self, NewMessage, Role};
use crate::store::{StoreError, sessions};
use crate::toolcall::CallStatus;

/// A tool offered to the model in this turn, with its facts.
#[derive(Debug, Clone)]
pub(crate) struct KnownTool {
    pub info: ToolInfo,
    /// Worked out once, from the definition, its pin and the server's trust.
    pub facts: ToolFacts,
    /// The input schema as JSON text: written once, stored with each call.
    schema_text: Arc<str>,
}

impl KnownTool {
    /// `changed`: the definition differs from its pin.
    pub(crate) fn new(info: ToolInfo, changed: bool) -> KnownTool {
        let schema_text = info.input_schema.to_string().into();
        KnownTool {
            facts: ToolFacts::of(&info, changed),
            info,
            schema_text,
        }
    }
}

/// Tools by `server__tool`: lookups are exact.
pub(crate) type ToolIndex = BTreeMap<String, KnownTool>;

/// A stored batch, and what the run does next with it.
pub(crate) struct StoredBatch {
    pub batch: BatchRecord,
    pub needs_card: bool,
    /// Calls refused before anyone was asked, to report at once.
    pub rejected: Vec<CallRecord>,
    /// Calls allowed without asking, in the model's order.
    pub allowed: Vec<CallRecord>,
}

/// The first move of a proposed call.
enum FirstMove {
    Ask,
    Allow(AuditDecision),
    Reject {
        output: String,
        audit: Option<AuditDecision>,
        rejection: Rejection,
    },
}

/// A call's arguments that are not an object: what the model is told,
/// and what the user is shown.
#[derive(Debug, Clone)]
struct BadArguments {
    output: String,
    problem: String,
}

/// A call's arguments as an object, or what is wrong with them (`""`,
/// which models often send for no arguments, is `{}`).
fn parse_arguments(text: &str) -> Result<Value, BadArguments> {
    turn::parse_object(text)
        .map(Value::Object)
        .map_err(|problem| BadArguments {
            output: results::invalid_arguments(&problem, text),
            problem: match problem {
                turn::ArgumentsProblem::NotJson(error) => format!("not JSON: {error}"),
                turn::ArgumentsProblem::NotAnObject(kind) => {
                    format!("a JSON {kind}, not an object")
                }
            },
        })
}

/// What the policy makes of a call of this tool under the user's settings.
pub(crate) fn verdict(known: &KnownTool, settings: &Settings) -> Verdict {
    let user_override = settings
        .tool_overrides
        .get(&known.info.qualified_name)
        .copied();
    policy::decide(&known.facts, user_override)
}

fn judge_call(
    known: &KnownTool,
    arguments: &Result<Value, BadArguments>,
    inner: &Inner,
    settings: &Settings,
) -> FirstMove {
    let arguments = match arguments {
        Ok(arguments) => arguments,
        Err(bad) => {
            return FirstMove::Reject {
                output: bad.output.clone(),
                audit: None,
                rejection: Rejection::InvalidArguments {
                    details: vec![bad.problem.clone()],
                },
            };
        }
    };
    let schema = &known.info.input_schema;
    // The definition's hash names the schema inside it.
    if let Err(details) =
        inner
            .schemas
            .validate_keyed(&known.info.definition_hash, schema, arguments)
    {
        return FirstMove::Reject {
            output: results::schema_mismatch(&details),
            audit: None,
            rejection: Rejection::InvalidArguments { details },
        };
    }
    match verdict(known, settings) {
        Verdict::Ask => FirstMove::Ask,
        Verdict::Allow(AllowedBy::TrustedReadOnly) => {
            FirstMove::Allow(AuditDecision::PolicyAllowed)
        }
        Verdict::Allow(AllowedBy::UserSetting) => {
            FirstMove::Allow(AuditDecision::AutoApprovedByUserSetting)
        }
        Verdict::Deny => FirstMove::Reject {
            output: results::policy_denied(),
            audit: Some(AuditDecision::PolicyDenied),
            rejection: Rejection::PolicyDenied,
        },
    }
}

fn new_call(
    request: &ToolCallRequest,
    known: Option<&KnownTool>,
    arguments: Option<Value>,
    tools: &ToolIndex,
) -> NewCall {
    let info = known.map(|k| &k.info);
    let preview_tool = known
        .and_then(|k| super::preview::bound_preview(k, tools))
        .map(|preview| preview.info.qualified_name.clone());
    NewCall {
        id: uuid::Uuid::new_v4().to_string(),
        model_call_id: request.id.clone(),
        qualified_name: request.name.clone(),
        server: info.map(|i| i.server.clone()),
        tool: info.map(|i| i.name.clone()),
        title: info.and_then(|i| i.title.clone()),
        description: info.and_then(|i| i.description.clone()),
        proposed_arguments: request.arguments.clone(),
        arguments,
        input_schema: known.map(|k| k.schema_text.clone()),
        destructive: known.is_some_and(|k| k.facts.treated_as_destructive()),
        definition_changed: known.is_some_and(|k| k.facts.definition_changed),
        can_change: known.is_some_and(|k| k.facts.can_change()),
        trusted: known.is_some_and(|k| k.facts.trust == policy::Trust::Trusted),
        declares_read_only: known.is_some_and(|k| k.facts.declares_read_only()),
        // A tool no server lists is taken at its worst.
        risk: known.map_or(CallRisk::Irreversible, |k| k.facts.risk()),
        preview_tool,
    }
}

/// The calls of one model turn, judged and ready to be stored as a batch.
pub(crate) struct JudgedBatch {
    reply_id: String,
    /// Its calls ran before it is stored: it is stored closed.
    ran: bool,
    calls: Vec<NewCall>,
    first_moves: Vec<FirstMove>,
    expiry_ms: i64,
}

impl JudgedBatch {
    /// Whether every call that would run is a trusted read (the rest are
    /// refused outright): nothing to ask, nothing a crash could leave
    /// half-done.
    pub(crate) fn reads_only(&self) -> bool {
        self.calls
            .iter()
            .zip(&self.first_moves)
            .all(|(call, first_move)| match first_move {
                FirstMove::Ask => false,
                FirstMove::Allow(_) => !call.can_change,
                FirstMove::Reject { .. } => true,
            })
    }

    /// Marks its calls as run: [`record`] stores the batch closed, so it is
    /// never among a session's open batches, not even inside the
    /// transaction.
    pub(crate) fn ran(self) -> JudgedBatch {
        JudgedBatch { ran: true, ..self }
    }

    /// The calls allowed without asking, as [`record`] will store them.
    pub(crate) fn allowed(&self, session_id: &str) -> Vec<CallRecord> {
        self.calls
            .iter()
            .zip(&self.first_moves)
            .enumerate()
            .filter(|(_, (_, first_move))| matches!(first_move, FirstMove::Allow(_)))
            .map(|(seq, (call, _))| {
                call.record(session_id, &self.reply_id, seq, CallStatus::Allowed)
            })
            .collect()
    }
}

/// How long a card may wait under these settings.
pub(crate) fn expiry_ms(settings: &Settings) -> i64 {
    i64::try_from(settings.card_expiry_secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

/// Judges the calls of one model turn against the tools offered in the
/// run and the user's settings. Nothing is stored yet.
pub(crate) fn judge(
    inner: &Inner,
    settings: &Settings,
    requests: &[ToolCallRequest],
    tools: &ToolIndex,
) -> JudgedBatch {
    let mut calls = Vec::new();
    let mut first_moves = Vec::new();
    for request in requests {
        let known = tools.get(&request.name);
        let Some(known) = known else {
            let available: Vec<String> = tools.keys().cloned().collect();
            calls.push(new_call(request, None, None, tools));
            first_moves.push(FirstMove::Reject {
                output: results::unknown_tool(&request.name, &available),
                audit: None,
                rejection: Rejection::UnknownTool,
            });
            continue;
        };
        let arguments = parse_arguments(&request.arguments);
        first_moves.push(judge_call(known, &arguments, inner, settings));
        calls.push(new_call(request, Some(known), arguments.ok(), tools));
    }
    JudgedBatch {
        reply_id: uuid::Uuid::new_v4().to_string(),
        ran: false,
        calls,
        first_moves,
        expiry_ms: expiry_ms(settings),
    }
}

/// Stores judged calls as the batch of the assistant message
/// `message_id`, inside the caller's transaction (the one that stores the
/// message, so neither exists without the other).
pub(crate) fn record(
    tx: &Connection,
    judged: JudgedBatch,
    session_id: &str,
    run_id: &str,
    message_id: i64,
    now: i64,
) -> Result<StoredBatch, StoreError> {
    let needs_card = judged
        .first_moves
        .iter()
        .any(|p| matches!(p, FirstMove::Ask));
    let batch = BatchRecord {
        reply_id: judged.reply_id,
        session_id: session_id.to_string(),
        run_id: run_id.to_string(),
        assistant_message_id: message_id,
        state: if judged.ran {
            BatchState::Done
        } else if needs_card {
            BatchState::Pending
        } else {
            BatchState::Executing
        },
        created_at: now,
        expires_at: now.saturating_add(judged.expiry_ms),
    };
    calls::insert_batch(tx, &batch, &judged.calls, now)?;
    let mut rejected = Vec::new();
    let mut allowed = Vec::new();
    for (seq, (call, first_move)) in judged.calls.iter().zip(judged.first_moves).enumerate() {
        // Each call as just stored: its first move needs no read.
        let proposed = call.record(session_id, &batch.reply_id, seq, CallStatus::Proposed);
        match first_move {
            FirstMove::Ask => {
                calls::move_call(
                    tx,
                    proposed,
                    CallStatus::Asking,
                    &CallUpdate::default(),
                    now,
                )?;
            }
            FirstMove::Allow(decision) => {
                let record = calls::move_call(
                    tx,
                    proposed,
                    CallStatus::Allowed,
                    &CallUpdate::default(),
                    now,
                )?;
                record_audit(tx, &record, decision, None, now)?;
                allowed.push(record);
            }
            FirstMove::Reject {
                output,
                audit,
                rejection,
            } => {
                let update = CallUpdate {
                    output: Some(output),
                    is_error: Some(true),
                    rejection: Some(rejection),
                    ..CallUpdate::default()
                };
                let record = calls::move_call(tx, proposed, CallStatus::Rejected, &update, now)?;
                if let Some(decision) = audit {
                    record_audit(tx, &record, decision, None, now)?;
                }
                rejected.push(record);
            }
        }
    }
    Ok(StoredBatch {
        batch,
        needs_card,
        rejected,
        allowed,
    })
}

pub(crate) fn record_audit(
    conn: &Connection,
    call: &CallRecord,
    decision: AuditDecision,
    reason: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    let hash = call.arguments_hash.as_deref().unwrap_or("");
    record_audit_of(
        conn,
        call,
        decision,
        hash,
        reason,
        call.preview.as_ref(),
        now,
    )
}

/// An audit row about `call` whose hash is `hash` (what was decided on:
/// the arguments, or a request or answer of the call's server).
pub(crate) fn record_audit_of(
    conn: &Connection,
    call: &CallRecord,
    decision: AuditDecision,
    hash: &str,
    reason: Option<&str>,
    preview: Option<&crate::protocol::CallPreview>,
    now: i64,
) -> Result<(), StoreError> {
    audit::record(
        conn,
        &NewAudit {
            session_id: &call.session_id,
            call_id: &call.id,
            server: call.server.as_deref().unwrap_or(""),
            tool: call.tool.as_deref().unwrap_or(&call.qualified_name),
            arguments_hash: hash,
            decision,
            reason,
            preview,
        },
        now,
    )
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

/// The model's arguments and those the call went with, when the user
/// changed them on the card.
pub(crate) fn edited_by_user(call: &CallRecord) -> Option<(Value, &Value)> {
    let proposed: Value = serde_json::from_str(&call.proposed_arguments).ok()?;
    let sent = call.arguments.as_ref()?;
    (proposed != *sent).then_some((proposed, sent))
}

/// Appends every call's result in the model's order and closes the batch.
pub(crate) fn finalize(
    conn: &Connection,
    batch: &BatchRecord,
    state: BatchState,
    now: i64,
) -> Result<(), StoreError> {
    for call in calls::calls_of_batch(conn, &batch.reply_id)? {
        if !call.status.is_final() {
            tracing::error!(call = %call.id, status = %call.status, "closing a batch with an unfinished call");
        }
        let mut content = call
            .output
            .clone()
            .unwrap_or_else(|| results::call_failed("没有记录结果"));
        if let Some((proposed, sent)) = edited_by_user(&call) {
            content = results::edited_by_user(&proposed, sent, &content);
        }
        messages::append(
            conn,
            &NewMessage {
                session_id: &batch.session_id,
                run_id: Some(&batch.run_id),
                role: Role::Tool,
                content: &content,
                tool_calls: &[],
                tool_call_id: Some(&call.model_call_id),
                call_id: Some(&call.id),
            },
            now,
        )?;
    }
    calls::set_batch_state(conn, &batch.reply_id, state)
}

/// Closes a pending batch whose calls will never run: every waiting call
/// moves to `to` with `output` as what the model is told.
fn close_pending(
    conn: &Connection,
    batch: &BatchRecord,
    to: CallStatus,
    output: &str,
    decision: AuditDecision,
    state: BatchState,
    now: i64,
) -> Result<Vec<(String, CallStatus)>, StoreError> {
    let mut changed = Vec::new();
    for call in calls::calls_of_batch(conn, &batch.reply_id)? {
        if !matches!(
            call.status,
            CallStatus::Asking | CallStatus::Allowed | CallStatus::Approved
        ) {
            continue;
        }
        let update = CallUpdate {
            output: Some(output.to_string()),
            ..CallUpdate::default()
        };
        let record = calls::move_call(conn, call.clone(), to, &update, now)?;
        if call.status == CallStatus::Asking {
            record_audit(conn, &record, decision, None, now)?;
        }
        changed.push((record.id, to));
    }
    finalize(conn, batch, state, now)?;
    Ok(changed)
}

/// Expires the session's pending card if its time is up.
pub(crate) fn expire_if_due(inner: &Inner, session_id: &str) -> Result<(), AgentError> {
    let now = inner.now();
    let changed = inner
        .store
        .with_tx(|tx| match calls::open_batch(tx, session_id)? {
            Some(batch) if batch.state == BatchState::Pending && now >= batch.expires_at => {
                close_pending(
                    tx,
                    &batch,
                    CallStatus::Expired,
                    &results::expired(),
                    AuditDecision::Expired,
                    BatchState::Expired,
                    now,
                )
            }
            _ => Ok(Vec::new()),
        })?;
    for (call_id, status) in changed {
        inner.emit(
            session_id,
            None,
            AgentEvent::CallStatusChanged { call_id, status },
        );
    }
    Ok(())
}

/// Supersedes a pending card and appends the user's new message, in one
/// transaction: the model reads why the calls did not run, then the message.
pub(crate) fn supersede_and_append(
    inner: &Inner,
    session_id: &str,
    run_id: &str,
    text: &str,
) -> Result<(), AgentError> {
    let now = inner.now();
    let (changed, input_closed) = inner.store.with_tx(|tx| {
        let input_closed = super::input::supersede_waiting(tx, session_id, now)?;
        let changed = match calls::open_batch(tx, session_id)? {
            Some(batch) if batch.state == BatchState::Pending => close_pending(
                tx,
                &batch,
                CallStatus::Superseded,
                &results::superseded(),
                AuditDecision::Superseded,
                BatchState::Superseded,
                now,
            )?,
            _ => Vec::new(),
        };
        messages::append(
            tx,
            &NewMessage {
                session_id,
                run_id: Some(run_id),
                role: Role::User,
                content: text,
                tool_calls: &[],
                tool_call_id: None,
                call_id: None,
            },
            now,
        )?;
        let session = sessions::get(tx, session_id)?;
        if session.title == DEFAULT_SESSION_TITLE {
            let title: String = text.chars().take(24).collect();
            sessions::rename(tx, session_id, &title, now)?;
        }
        Ok::<_, StoreError>((changed, input_closed))
    })?;
    super::input::announce_superseded(inner, session_id, run_id, input_closed);
    for (call_id, status) in changed {
        inner.emit(
            session_id,
            Some(run_id),
            AgentEvent::CallStatusChanged { call_id, status },
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::parse_arguments;

    #[test]
    fn empty_arguments_mean_an_empty_object_and_garbage_is_an_error() {
        assert_eq!(parse_arguments("").unwrap(), json!({}));
        assert_eq!(parse_arguments(" {\"a\":1} ").unwrap(), json!({"a": 1}));
        assert!(parse_arguments("{\"a\":").is_err());
    }
}
