//! Batches (one model turn's calls, with the `reply_id` a card answers)
//! and tool calls. A call's status changes only through [`move_call`]
//! (or, for a read stored after it ran, [`insert_moved`]), which ask the
//! state machine and record each move in the history.

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::StoreError;
use crate::hashing::hash_json;
use crate::protocol::{CallPreview, CallRisk, Rejection};
use crate::toolcall::CallStatus;

/// Where a batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchState {
    /// A card waits for the user.
    Pending,
    /// Decided (or allowed) and being run.
    Executing,
    Done,
    Superseded,
    Expired,
}

impl BatchState {
    fn as_str(self) -> &'static str {
        match self {
            BatchState::Pending => "pending",
            BatchState::Executing => "executing",
            BatchState::Done => "done",
            BatchState::Superseded => "superseded",
            BatchState::Expired => "expired",
        }
    }

    fn parse(text: &str) -> Result<BatchState, StoreError> {
        Ok(match text {
            "pending" => BatchState::Pending,
            "executing" => BatchState::Executing,
            "done" => BatchState::Done,
            "superseded" => BatchState::Superseded,
            "expired" => BatchState::Expired,
            other => return Err(StoreError::NotFound(format!("batch state {other:?}"))),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRecord {
    pub reply_id: String,
    pub session_id: String,
    pub run_id: String,
    pub assistant_message_id: i64,
    pub state: BatchState,
    pub created_at: i64,
    pub expires_at: i64,
}

/// A call as first recorded, in status `proposed`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCall {
    pub id: String,
    pub model_call_id: String,
    pub qualified_name: String,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// The model's raw arguments text, kept even when it is not JSON.
    pub proposed_arguments: String,
    /// The parsed arguments, when they parsed.
    pub arguments: Option<Value>,
    /// The tool's input schema, worked out once per listing and shared
    /// by every call of the tool.
    pub schema: Option<Arc<CallSchema>>,
    pub destructive: bool,
    pub definition_changed: bool,
    /// [`crate::policy::ToolFacts::can_change`]: the call carries its id as
    /// idempotency key and is stored as `running` before it is sent.
    pub can_change: bool,
    /// The server was trusted when the call was proposed.
    pub trusted: bool,
    /// The tool declares it only reads (believed only when `trusted`).
    pub declares_read_only: bool,
    /// What the card's badge says the call risks.
    pub risk: CallRisk,
    /// The tool bound to preview the call (`server__tool`): stored with
    /// the call, so a card whose preview was never computed (the app
    /// stopped first) is known to lack one.
    pub preview_tool: Option<String>,
}

impl NewCall {
    /// The call as [`insert_batch`] stores it at `seq` in batch `reply_id`,
    /// then moved to `status`: what it will be once stored.
    pub fn record(
        &self,
        session_id: &str,
        reply_id: &str,
        seq: usize,
        status: CallStatus,
    ) -> CallRecord {
        CallRecord {
            id: self.id.clone(),
            session_id: session_id.to_string(),
            reply_id: reply_id.to_string(),
            seq: i64::try_from(seq).unwrap_or(i64::MAX),
            model_call_id: self.model_call_id.clone(),
            qualified_name: self.qualified_name.clone(),
            server: self.server.clone(),
            tool: self.tool.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            proposed_arguments: self.proposed_arguments.clone(),
            arguments: self.arguments.clone(),
            arguments_hash: self.arguments.as_ref().map(hash_json),
            approved_hash: None,
            destructive: self.destructive,
            definition_changed: self.definition_changed,
            can_change: self.can_change,
            trusted: self.trusted,
            declares_read_only: self.declares_read_only,
            risk: self.risk,
            status,
            output: None,
            is_error: false,
            preview_tool: self.preview_tool.clone(),
            preview: None,
            structured_output: None,
            rejection: None,
            deny_reason: None,
            labels_schema: self
                .schema
                .as_ref()
                .and_then(|schema| schema.labels.as_ref())
                .map(|(labels, _)| Arc::clone(labels)),
        }
    }
}

/// A tool's input schema as its calls keep it: the text a call is judged
/// against, the part that labels its arguments (as a value and as text),
/// and the hash that names both in `tool_schemas`. Worked out once per
/// listing, not once per call.
#[derive(Debug, PartialEq)]
pub struct CallSchema {
    hash: String,
    text: String,
    /// Shared with every call record and view of the tool's calls: a
    /// clone per call would copy the whole value.
    labels: Option<(Arc<Value>, String)>,
}

impl CallSchema {
    pub fn of(schema: &Value) -> CallSchema {
        let labels = crate::argument_labels::labels_schema(schema).map(|labels| {
            let text = labels.to_string();
            (Arc::new(labels), text)
        });
        CallSchema {
            hash: hash_json(schema),
            text: schema.to_string(),
            labels,
        }
    }

    /// Stores the schema under its hash, once for every call of the tool.
    fn keep(&self, conn: &Connection) -> Result<(), StoreError> {
        conn.prepare_cached(
            "INSERT INTO tool_schemas (hash, input_schema, labels_schema) VALUES (?1, ?2, ?3)
             ON CONFLICT (hash) DO NOTHING",
        )?
        .execute(params![self.hash, self.text, self.labels_text()])?;
        Ok(())
    }

    fn labels_text(&self) -> Option<&str> {
        self.labels.as_ref().map(|(_, text)| text.as_str())
    }
}

/// A stored call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub id: String,
    pub session_id: String,
    pub reply_id: String,
    pub seq: i64,
    pub model_call_id: String,
    pub qualified_name: String,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub proposed_arguments: String,
    pub arguments: Option<Value>,
    pub arguments_hash: Option<String>,
    pub approved_hash: Option<String>,
    pub destructive: bool,
    pub definition_changed: bool,
    pub can_change: bool,
    pub trusted: bool,
    pub declares_read_only: bool,
    pub risk: CallRisk,
    pub status: CallStatus,
    pub output: Option<String>,
    pub is_error: bool,
    /// The tool that previews the call (`server__tool`), once bound.
    pub preview_tool: Option<String>,
    /// The preview the card shows.
    pub preview: Option<CallPreview>,
    /// The result's structured content, when the tool gave one.
    pub structured_output: Option<Value>,
    /// Why code refused the call.
    pub rejection: Option<Rejection>,
    /// The user's reason for denying it.
    pub deny_reason: Option<String>,
    /// Its tool's input schema cut down to what labels the arguments
    /// ([`crate::argument_labels`]).
    pub labels_schema: Option<Arc<Value>>,
}

/// What changes along with a status move.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallUpdate {
    /// New arguments to send (an edited approval).
    pub arguments: Option<Value>,
    /// The hash of the exact arguments the user approved.
    pub approved_hash: Option<String>,
    pub output: Option<String>,
    pub is_error: Option<bool>,
    /// Why, for the history.
    pub note: Option<String>,
    pub structured_output: Option<Value>,
    pub rejection: Option<Rejection>,
    pub deny_reason: Option<String>,
}

impl CallUpdate {
    /// The structured output and the rejection as their columns hold them.
    fn json_columns(&self) -> Result<(Option<String>, Option<String>), StoreError> {
        let structured = self.structured_output.as_ref().map(Value::to_string);
        let rejection = self
            .rejection
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?;
        Ok((structured, rejection))
    }
}

/// Stores a batch and its calls, each `proposed`.
pub fn insert_batch(
    conn: &Connection,
    batch: &BatchRecord,
    calls: &[NewCall],
    now: i64,
) -> Result<(), StoreError> {
    insert_batch_row(conn, batch)?;
    for (seq, call) in calls.iter().enumerate() {
        insert_call_row(
            conn,
            batch,
            seq,
            call,
            CallStatus::Proposed,
            &CallUpdate::default(),
            now,
            now,
        )?;
        insert_history(conn, &call.id, None, CallStatus::Proposed, None, now)?;
    }
    Ok(())
}

/// Stores a batch without its calls (see [`insert_moved`]).
pub fn insert_batch_row(conn: &Connection, batch: &BatchRecord) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT INTO batches (reply_id, session_id, run_id, assistant_message_id, state, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?.execute(
        params![
            batch.reply_id,
            batch.session_id,
            batch.run_id,
            batch.assistant_message_id,
            batch.state.as_str(),
            batch.created_at,
            batch.expires_at
        ],
    )?;
    Ok(())
}

/// Stores call `seq` of `batch`, proposed at `proposed_at`, as it stands
/// after `moves` (each move's status and time): one row where its last
/// move left it, and the history of every move, which the state machine
/// must allow. For a read whose moves were made before it was stored (it
/// ran first): the rows [`insert_batch`] and [`move_call`] would leave,
/// written once.
pub fn insert_moved(
    conn: &Connection,
    batch: &BatchRecord,
    seq: usize,
    call: &NewCall,
    proposed_at: i64,
    moves: &[(CallStatus, i64)],
    update: &CallUpdate,
) -> Result<CallRecord, StoreError> {
    let status = moved_status(moves)?;
    if call.can_change && moves.iter().any(|&(to, _)| to == CallStatus::Running) {
        return Err(StoreError::RunBeforeStoring(call.id.clone()));
    }
    let updated_at = moves.last().map_or(proposed_at, |&(_, at)| at);
    insert_call_row(
        conn,
        batch,
        seq,
        call,
        status,
        update,
        proposed_at,
        updated_at,
    )?;
    let last = moves.len();
    let note = |i: usize| (i == last).then_some(update.note.as_deref()).flatten();
    insert_history(
        conn,
        &call.id,
        None,
        CallStatus::Proposed,
        note(0),
        proposed_at,
    )?;
    let mut from = CallStatus::Proposed;
    for (i, &(to, at)) in moves.iter().enumerate() {
        insert_history(conn, &call.id, Some(from), to, note(i + 1), at)?;
        from = to;
    }
    Ok(moved_record(
        &batch.session_id,
        &batch.reply_id,
        seq,
        call,
        status,
        update,
    ))
}

/// Where `moves` take a call from `proposed`, each move checked.
pub fn moved_status(moves: &[(CallStatus, i64)]) -> Result<CallStatus, StoreError> {
    let mut status = CallStatus::Proposed;
    for &(to, _) in moves {
        status.transition(to)?;
        status = to;
    }
    Ok(status)
}

/// The call as [`insert_moved`] stores it at `seq` in batch `reply_id`,
/// moved to `status` with `update`: what a caller can hold before the row
/// exists.
pub fn moved_record(
    session_id: &str,
    reply_id: &str,
    seq: usize,
    call: &NewCall,
    status: CallStatus,
    update: &CallUpdate,
) -> CallRecord {
    updated(call.record(session_id, reply_id, seq, status), update)
}

#[allow(clippy::too_many_arguments)]
fn insert_call_row(
    conn: &Connection,
    batch: &BatchRecord,
    seq: usize,
    call: &NewCall,
    status: CallStatus,
    update: &CallUpdate,
    created_at: i64,
    updated_at: i64,
) -> Result<(), StoreError> {
    let arguments = update.arguments.as_ref().or(call.arguments.as_ref());
    let hash = arguments.map(hash_json);
    let arguments = arguments.map(Value::to_string);
    let (structured, rejection) = update.json_columns()?;
    if let Some(schema) = &call.schema {
        schema.keep(conn)?;
    }
    conn.prepare_cached("INSERT INTO tool_calls (id, session_id, reply_id, seq, model_call_id, qualified_name, server, tool,
             title, description, proposed_arguments, arguments, arguments_hash, schema_hash,
             destructive, definition_changed, can_change, trusted, declares_read_only, preview_tool, status, created_at, updated_at, risk,
             output, is_error, structured_output, rejection, approved_hash, deny_reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)")?.execute(
        params![
            call.id,
            batch.session_id,
            batch.reply_id,
            i64::try_from(seq).unwrap_or(i64::MAX),
            call.model_call_id,
            call.qualified_name,
            call.server,
            call.tool,
            call.title,
            call.description,
            call.proposed_arguments,
            arguments,
            hash,
            call.schema.as_ref().map(|schema| schema.hash.as_str()),
            call.destructive,
            call.definition_changed,
            call.can_change,
            call.trusted,
            call.declares_read_only,
            call.preview_tool,
            status.as_str(),
            created_at,
            updated_at,
            call.risk.as_str(),
            update.output,
            update.is_error.unwrap_or(false),
            structured,
            rejection,
            update.approved_hash,
            update.deny_reason
        ],
    )?;
    Ok(())
}

fn insert_history(
    conn: &Connection,
    call_id: &str,
    from: Option<CallStatus>,
    to: CallStatus,
    note: Option<&str>,
    at: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT INTO tool_call_history (call_id, from_status, to_status, note, at) VALUES (?1, ?2, ?3, ?4, ?5)")?.execute(
        params![call_id, from.map(CallStatus::as_str), to.as_str(), note, at],
    )?;
    Ok(())
}

/// Moves a call the caller holds (as read, or as it was just stored) to
/// `to`, without reading it again. The row must still be where the held
/// call says it is; otherwise nothing changes and the move is refused.
pub fn move_call(
    conn: &Connection,
    mut record: CallRecord,
    to: CallStatus,
    update: &CallUpdate,
    now: i64,
) -> Result<CallRecord, StoreError> {
    let from = record.status;
    from.transition(to)?;
    // A write's `running` row, and the ending that replaces it, must
    // survive a power loss: the caller's transaction has to sync.
    if record.can_change
        && (to == CallStatus::Running || from == CallStatus::Running)
        && !super::commits_durably(conn)?
    {
        return Err(StoreError::NotDurable(record.id));
    }
    let arguments = update.arguments.as_ref().map(Value::to_string);
    let arguments_hash = update.arguments.as_ref().map(hash_json);
    let (structured, rejection) = update.json_columns()?;
    let moved = conn
        .prepare_cached(
            "UPDATE tool_calls SET status = ?2, updated_at = ?3,
                 arguments = coalesce(?4, arguments),
                 arguments_hash = coalesce(?5, arguments_hash),
                 approved_hash = coalesce(?6, approved_hash),
                 output = coalesce(?7, output),
                 is_error = coalesce(?8, is_error),
                 structured_output = coalesce(?10, structured_output),
                 rejection = coalesce(?11, rejection),
                 deny_reason = coalesce(?12, deny_reason)
             WHERE id = ?1 AND status = ?9",
        )?
        .execute(params![
            record.id,
            to.as_str(),
            now,
            arguments,
            arguments_hash,
            update.approved_hash,
            update.output,
            update.is_error,
            from.as_str(),
            structured,
            rejection,
            update.deny_reason
        ])?;
    if moved == 0 {
        return Err(StoreError::NotFound(format!(
            "call {} in status {from}",
            record.id
        )));
    }
    conn.prepare_cached("INSERT INTO tool_call_history (call_id, from_status, to_status, note, at) VALUES (?1, ?2, ?3, ?4, ?5)")?.execute(
        params![record.id, from.as_str(), to.as_str(), update.note, now],
    )?;
    // The row now holds what `record` becomes here; no need to read it again.
    record.status = to;
    Ok(updated(record, update))
}

/// `record` with what `update` sets.
fn updated(mut record: CallRecord, update: &CallUpdate) -> CallRecord {
    if let Some(arguments) = &update.arguments {
        record.arguments = Some(arguments.clone());
        record.arguments_hash = Some(hash_json(arguments));
    }
    if let Some(hash) = &update.approved_hash {
        record.approved_hash = Some(hash.clone());
    }
    if let Some(output) = &update.output {
        record.output = Some(output.clone());
    }
    if let Some(is_error) = update.is_error {
        record.is_error = is_error;
    }
    if let Some(structured) = &update.structured_output {
        record.structured_output = Some(structured.clone());
    }
    if let Some(rejection) = &update.rejection {
        record.rejection = Some(rejection.clone());
    }
    if let Some(reason) = &update.deny_reason {
        record.deny_reason = Some(reason.clone());
    }
    record
}

/// Calls with `$rest` (a filter) after the table: every column but the
/// input schema, which is large and needed only to draw a card or check
/// edited arguments (see [`input_schema`]). Each query a constant.
macro_rules! select_calls {
    ($rest:literal) => {
        concat!(
            "SELECT id, session_id, reply_id, seq, model_call_id, qualified_name, server, tool, title,
                 description, proposed_arguments, arguments, arguments_hash, approved_hash, destructive,
                 definition_changed, can_change, status, output, is_error, trusted, declares_read_only,
                 preview_tool, preview, structured_output, rejection, deny_reason, risk,
                 coalesce(labels_schema,
                          (SELECT labels_schema FROM tool_schemas WHERE hash = schema_hash))
             FROM tool_calls ",
            $rest,
            " ORDER BY created_at, reply_id, seq"
        )
    };
}

/// A row with the columns still to parse: arguments, status, and the
/// JSON of the preview, the structured output, the rejection and the
/// labels schema.
type RawCall = (CallRecord, Option<String>, String, [Option<String>; 4]);

fn call_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawCall> {
    let destructive: bool = row.get(14)?;
    let risk: Option<String> = row.get(27)?;
    let record = CallRecord {
        id: row.get(0)?,
        session_id: row.get(1)?,
        reply_id: row.get(2)?,
        seq: row.get(3)?,
        model_call_id: row.get(4)?,
        qualified_name: row.get(5)?,
        server: row.get(6)?,
        tool: row.get(7)?,
        title: row.get(8)?,
        description: row.get(9)?,
        proposed_arguments: row.get(10)?,
        arguments: None,
        arguments_hash: row.get(12)?,
        approved_hash: row.get(13)?,
        destructive,
        definition_changed: row.get(15)?,
        can_change: row.get(16)?,
        status: CallStatus::Proposed,
        output: row.get(18)?,
        is_error: row.get(19)?,
        trusted: row.get(20)?,
        declares_read_only: row.get(21)?,
        risk: CallRisk::parse(risk.as_deref(), destructive),
        preview_tool: row.get(22)?,
        preview: None,
        structured_output: None,
        rejection: None,
        deny_reason: row.get(26)?,
        labels_schema: None,
    };
    let json_columns = [row.get(23)?, row.get(24)?, row.get(25)?, row.get(28)?];
    Ok((record, row.get(11)?, row.get(17)?, json_columns))
}

fn finish_call(
    (mut record, arguments, status, [preview, structured, rejection, labels]): RawCall,
) -> Result<CallRecord, StoreError> {
    record.arguments = arguments.map(|t| serde_json::from_str(&t)).transpose()?;
    record.status = status.parse()?;
    record.preview = preview.map(|t| serde_json::from_str(&t)).transpose()?;
    record.structured_output = structured.map(|t| serde_json::from_str(&t)).transpose()?;
    record.rejection = rejection.map(|t| serde_json::from_str(&t)).transpose()?;
    record.labels_schema = labels
        .map(|t| serde_json::from_str(&t).map(Arc::new))
        .transpose()?;
    Ok(record)
}

/// Stores the preview a card shows for a call still asking, and the tool
/// that computed it; with `arguments`, the call now proposes those (the
/// user edited them and is to see what they would do before approving).
pub fn set_preview(
    conn: &Connection,
    call: &CallRecord,
    preview: &CallPreview,
    arguments: Option<&Value>,
    now: i64,
) -> Result<CallRecord, StoreError> {
    let text = serde_json::to_string(preview)?;
    let arguments_text = arguments.map(Value::to_string);
    let arguments_hash = arguments.map(hash_json);
    let changed = conn
        .prepare_cached(
            "UPDATE tool_calls SET preview_tool = ?2, preview = ?3, updated_at = ?4,
                 arguments = coalesce(?5, arguments),
                 arguments_hash = coalesce(?6, arguments_hash)
             WHERE id = ?1 AND status = ?7",
        )?
        .execute(params![
            call.id,
            preview.tool,
            text,
            now,
            arguments_text,
            arguments_hash,
            CallStatus::Asking.as_str()
        ])?;
    if changed == 0 {
        return Err(StoreError::NotFound(format!("asking call {}", call.id)));
    }
    let mut record = call.clone();
    record.preview_tool = Some(preview.tool.clone());
    record.preview = Some(preview.clone());
    if let Some(arguments) = arguments {
        record.arguments = Some(arguments.clone());
        record.arguments_hash = arguments_hash;
    }
    Ok(record)
}

/// The input schema the call was judged against, as its tool listed it.
pub fn input_schema(conn: &Connection, call_id: &str) -> Result<Option<Value>, StoreError> {
    let text: Option<String> = conn
        .prepare_cached(
            "SELECT coalesce(input_schema,
                             (SELECT input_schema FROM tool_schemas WHERE hash = schema_hash))
             FROM tool_calls WHERE id = ?1",
        )?
        .query_row(params![call_id], |row| row.get(0))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("tool call {call_id}")))?;
    Ok(text.map(|t| serde_json::from_str(&t)).transpose()?)
}

fn query_calls(conn: &Connection, sql: &str, value: &str) -> Result<Vec<CallRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params![value], call_from_row)?;
    rows.map(|row| finish_call(row?)).collect()
}

/// A call by id, which must exist.
pub fn get_call(conn: &Connection, call_id: &str) -> Result<CallRecord, StoreError> {
    find_call(conn, call_id)?.ok_or_else(|| StoreError::NotFound(format!("tool call {call_id}")))
}

/// A call by id; `None` once its session was deleted.
pub fn find_call(conn: &Connection, call_id: &str) -> Result<Option<CallRecord>, StoreError> {
    Ok(query_calls(conn, select_calls!("WHERE id = ?1"), call_id)?.pop())
}

/// A batch's calls in the model's order.
pub fn calls_of_batch(conn: &Connection, reply_id: &str) -> Result<Vec<CallRecord>, StoreError> {
    query_calls(conn, select_calls!("WHERE reply_id = ?1"), reply_id)
}

pub fn calls_of_session(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<CallRecord>, StoreError> {
    query_calls(conn, select_calls!("WHERE session_id = ?1"), session_id)
}

/// Batches with `$rest` (a filter, an order) after the table.
macro_rules! select_batches {
    ($rest:literal) => {
        concat!(
            "SELECT reply_id, session_id, run_id, assistant_message_id, state, created_at, expires_at
             FROM batches ",
            $rest
        )
    };
}

fn batch_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(BatchRecord, String)> {
    Ok((
        BatchRecord {
            reply_id: row.get(0)?,
            session_id: row.get(1)?,
            run_id: row.get(2)?,
            assistant_message_id: row.get(3)?,
            state: BatchState::Done,
            created_at: row.get(5)?,
            expires_at: row.get(6)?,
        },
        row.get(4)?,
    ))
}

fn finish_batch((mut batch, state): (BatchRecord, String)) -> Result<BatchRecord, StoreError> {
    batch.state = BatchState::parse(&state)?;
    Ok(batch)
}

pub fn get_batch(conn: &Connection, reply_id: &str) -> Result<Option<BatchRecord>, StoreError> {
    conn.prepare_cached(select_batches!("WHERE reply_id = ?1"))?
        .query_row(params![reply_id], batch_from_row)
        .optional()?
        .map(finish_batch)
        .transpose()
}

/// The session's batch that is pending or executing, if any (at most one).
pub fn open_batch(conn: &Connection, session_id: &str) -> Result<Option<BatchRecord>, StoreError> {
    conn.prepare_cached(select_batches!(
        "WHERE session_id = ?1 AND state IN ('pending', 'executing')"
    ))?
    .query_row(params![session_id], batch_from_row)
    .optional()?
    .map(finish_batch)
    .transpose()
}

/// Every open batch of every session (for recovery at start).
pub fn open_batches(conn: &Connection) -> Result<Vec<BatchRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(select_batches!(
        "WHERE state IN ('pending', 'executing') ORDER BY created_at"
    ))?;
    let rows = stmt.query_map([], batch_from_row)?;
    rows.map(|row| finish_batch(row?)).collect()
}

pub fn set_batch_state(
    conn: &Connection,
    reply_id: &str,
    state: BatchState,
) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE batches SET state = ?2 WHERE reply_id = ?1")?
        .execute(params![reply_id, state.as_str()])?;
    Ok(())
}

/// Puts a batch back before the user: its card waits again until `expires_at`.
pub fn reopen_batch(conn: &Connection, reply_id: &str, expires_at: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE batches SET state = 'pending', expires_at = ?2 WHERE reply_id = ?1",
    )?
    .execute(params![reply_id, expires_at])?;
    Ok(())
}

#[cfg(any(test, feature = "internals"))]
/// One recorded move: from (none for the first record), to, and why.
pub type Move = (Option<CallStatus>, CallStatus, Option<String>);

#[cfg(any(test, feature = "internals"))]
/// A call's moves, oldest first.
pub fn history(conn: &Connection, call_id: &str) -> Result<Vec<Move>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT from_status, to_status, note FROM tool_call_history WHERE call_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map(params![call_id], |row| {
        Ok((
            row.get::<_, Option<String>>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (from, to, note) = row?;
        out.push((from.map(|f| f.parse()).transpose()?, to.parse()?, note));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::store::{Store, sessions};

    fn pay_order() -> NewCall {
        NewCall {
            id: "c".into(),
            model_call_id: "m".into(),
            qualified_name: "shop__pay_order".into(),
            server: Some("shop".into()),
            tool: Some("pay_order".into()),
            title: Some("付款".into()),
            description: None,
            proposed_arguments: r#"{"orderNo":"1"}"#.into(),
            arguments: Some(json!({"orderNo": "1"})),
            schema: Some(Arc::new(CallSchema::of(&json!({"type": "object"})))),
            destructive: false,
            definition_changed: false,
            can_change: true,
            trusted: true,
            declares_read_only: false,
            risk: CallRisk::MovesMoney,
            preview_tool: None,
        }
    }

    #[test]
    fn a_call_foreseen_before_it_is_stored_is_the_call_as_stored() {
        let store = store_with_batch();
        let stored = store.with_conn(|c| get_call(c, "c")).unwrap();
        assert_eq!(
            pay_order().record("s", "r", 0, CallStatus::Proposed),
            stored
        );
    }

    #[test]
    fn a_held_call_moves_only_from_where_the_row_still_is() {
        let store = store_with_batch();
        let held = store.with_conn(|c| get_call(c, "c")).unwrap();
        let update = CallUpdate::default();
        let asking = store
            .with_tx(|tx| move_call(tx, held.clone(), CallStatus::Asking, &update, 2))
            .unwrap();
        assert_eq!(asking, store.with_conn(|c| get_call(c, "c")).unwrap());

        // The held copy is stale now: the row is no longer `proposed`.
        let stale = store.with_tx(|tx| move_call(tx, held, CallStatus::Allowed, &update, 3));
        assert!(matches!(stale, Err(StoreError::NotFound(_))), "{stale:?}");
        let row = store.with_conn(|c| get_call(c, "c")).unwrap();
        assert_eq!(row.status, CallStatus::Asking, "nothing changed");
        assert_eq!(store.with_conn(|c| history(c, "c")).unwrap().len(), 2);
    }

    #[test]
    fn a_write_call_moves_to_running_and_to_its_ending_only_in_a_durable_transaction() {
        let store = store_with_batch();
        let update = CallUpdate::default();
        store
            .with_tx(|tx| move_call(tx, get_call(tx, "c")?, CallStatus::Allowed, &update, 2))
            .unwrap();
        let normal =
            store.with_tx(|tx| move_call(tx, get_call(tx, "c")?, CallStatus::Running, &update, 3));
        assert!(
            matches!(normal, Err(StoreError::NotDurable(_))),
            "{normal:?}"
        );
        assert_eq!(
            store.with_conn(|c| get_call(c, "c")).unwrap().status,
            CallStatus::Allowed
        );
        store
            .with_durable_tx(|tx| {
                move_call(tx, get_call(tx, "c")?, CallStatus::Running, &update, 4)
            })
            .unwrap();
        let normal = store
            .with_tx(|tx| move_call(tx, get_call(tx, "c")?, CallStatus::Succeeded, &update, 5));
        assert!(
            matches!(normal, Err(StoreError::NotDurable(_))),
            "{normal:?}"
        );
        store
            .with_durable_tx(|tx| {
                move_call(tx, get_call(tx, "c")?, CallStatus::Succeeded, &update, 6)
            })
            .unwrap();
    }

    fn store_with_session() -> Store {
        let store = Store::open_in_memory().unwrap();
        store
            .with_tx(|tx| sessions::create(tx, "s", "t", 1))
            .unwrap();
        store
    }

    fn store_with_batch() -> Store {
        let store = Store::open_in_memory().unwrap();
        store
            .with_tx(|tx| {
                sessions::create(tx, "s", "t", 1)?;
                let batch = BatchRecord {
                    reply_id: "r".into(),
                    session_id: "s".into(),
                    run_id: "run".into(),
                    assistant_message_id: 1,
                    state: BatchState::Pending,
                    created_at: 1,
                    expires_at: 100,
                };
                insert_batch(tx, &batch, &[pay_order()], 1)
            })
            .unwrap();
        store
    }

    #[test]
    fn moves_are_checked_and_recorded_in_the_history() {
        let store = store_with_batch();
        let update = CallUpdate::default();
        store
            .with_tx(|tx| move_call(tx, get_call(tx, "c")?, CallStatus::Asking, &update, 2))
            .unwrap();
        let illegal =
            store.with_tx(|tx| move_call(tx, get_call(tx, "c")?, CallStatus::Running, &update, 3));
        assert!(
            matches!(illegal, Err(StoreError::Transition(_))),
            "{illegal:?}"
        );
        let approved = store
            .with_tx(|tx| {
                move_call(
                    tx,
                    get_call(tx, "c")?,
                    CallStatus::Approved,
                    &CallUpdate {
                        arguments: Some(json!({"orderNo": "2"})),
                        approved_hash: Some("h".into()),
                        note: Some("edited".into()),
                        ..CallUpdate::default()
                    },
                    4,
                )
            })
            .unwrap();
        assert_eq!(approved.status, CallStatus::Approved);
        assert_eq!(approved.arguments, Some(json!({"orderNo": "2"})));
        assert_eq!(
            approved.arguments_hash,
            Some(hash_json(&json!({"orderNo": "2"})))
        );
        assert_eq!(approved.approved_hash.as_deref(), Some("h"));
        let stored = store.with_conn(|c| get_call(c, "c")).unwrap();
        assert_eq!(approved, stored, "a move returns the row as stored");
        let history = store.with_conn(|c| history(c, "c")).unwrap();
        assert_eq!(
            history,
            vec![
                (None, CallStatus::Proposed, None),
                (Some(CallStatus::Proposed), CallStatus::Asking, None),
                (
                    Some(CallStatus::Asking),
                    CallStatus::Approved,
                    Some("edited".into())
                ),
            ]
        );
    }

    #[test]
    fn a_move_returns_the_row_as_stored() {
        let store = store_with_batch();
        let moves = [
            (CallStatus::Allowed, CallUpdate::default()),
            (CallStatus::Running, CallUpdate::default()),
            (
                CallStatus::Failed,
                CallUpdate {
                    output: Some("库存不足".into()),
                    is_error: Some(true),
                    ..CallUpdate::default()
                },
            ),
        ];
        for (at, (to, update)) in (2..).zip(moves) {
            let returned = store
                .with_durable_tx(|tx| move_call(tx, get_call(tx, "c")?, to, &update, at))
                .unwrap();
            let stored = store.with_conn(|c| get_call(c, "c")).unwrap();
            assert_eq!(returned, stored);
        }
        let failed = store.with_conn(|c| get_call(c, "c")).unwrap();
        assert_eq!(failed.output.as_deref(), Some("库存不足"));
        assert!(failed.is_error);
    }

    fn search(id: &str) -> NewCall {
        NewCall {
            id: id.into(),
            qualified_name: "shop__search_product".into(),
            tool: Some("search_product".into()),
            title: Some("搜索商品".into()),
            proposed_arguments: r#"{"keyword":"耳机"}"#.into(),
            arguments: Some(json!({"keyword": "耳机"})),
            schema: Some(Arc::new(CallSchema::of(&json!({
                "type": "object",
                "properties": {"keyword": {"type": "string", "title": "关键词", "maxLength": 50}}
            })))),
            can_change: false,
            declares_read_only: true,
            risk: CallRisk::Reads,
            ..pay_order()
        }
    }

    fn read_batch(reply_id: &str) -> BatchRecord {
        BatchRecord {
            reply_id: reply_id.into(),
            session_id: "s".into(),
            run_id: "run".into(),
            assistant_message_id: 1,
            state: BatchState::Done,
            created_at: 1,
            expires_at: 100,
        }
    }

    #[test]
    fn a_read_stored_after_it_ran_is_stored_as_its_moves_one_by_one_would_leave_it() {
        let store = store_with_session();
        let ended = CallUpdate {
            output: Some("找到 3 件商品".into()),
            is_error: Some(false),
            structured_output: Some(json!({"matched": 3})),
            ..CallUpdate::default()
        };
        let moves = [
            (CallStatus::Allowed, 1),
            (CallStatus::Running, 2),
            (CallStatus::Succeeded, 2),
        ];
        let at_once = store
            .with_tx(|tx| {
                insert_batch_row(tx, &read_batch("at-once"))?;
                insert_moved(
                    tx,
                    &read_batch("at-once"),
                    0,
                    &search("a"),
                    1,
                    &moves,
                    &ended,
                )
            })
            .unwrap();
        let one_by_one = store
            .with_tx(|tx| {
                insert_batch(tx, &read_batch("one-by-one"), &[search("b")], 1)?;
                let mut call = get_call(tx, "b")?;
                for (to, at) in moves {
                    let update = if to == CallStatus::Succeeded {
                        &ended
                    } else {
                        &CallUpdate::default()
                    };
                    call = move_call(tx, call, to, update, at)?;
                }
                Ok::<_, StoreError>(call)
            })
            .unwrap();

        let stored = store.with_conn(|c| get_call(c, "a")).unwrap();
        assert_eq!(at_once, stored, "the record returned is the row as stored");
        let like = |call: CallRecord| CallRecord {
            id: String::new(),
            reply_id: String::new(),
            ..call
        };
        assert_eq!(
            like(stored),
            like(store.with_conn(|c| get_call(c, "b")).unwrap())
        );
        assert_eq!(like(at_once), like(one_by_one));
        assert_eq!(
            store.with_conn(|c| history(c, "a")).unwrap(),
            store.with_conn(|c| history(c, "b")).unwrap()
        );
        assert_eq!(
            store.with_conn(|c| input_schema(c, "a")).unwrap(),
            store.with_conn(|c| input_schema(c, "b")).unwrap()
        );
        assert_eq!(
            stored_labels(&store, "a"),
            Some(
                json!({"type": "object", "properties": {"keyword": {"type": "string", "title": "关键词"}}})
            )
        );
    }

    #[test]
    fn a_tools_schema_is_kept_once_however_many_calls_name_it() {
        let store = store_with_session();
        let (first, second) = (search("a"), search("b"));
        store
            .with_tx(|tx| insert_batch(tx, &read_batch("r"), &[first, second], 1))
            .unwrap();
        let (schemas, copies): (i64, i64) = store
            .with_conn(|c| {
                Ok::<_, StoreError>(c.query_row(
                    "SELECT (SELECT count(*) FROM tool_schemas),
                            (SELECT count(*) FROM tool_calls WHERE input_schema IS NOT NULL OR labels_schema IS NOT NULL)",
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )?)
            })
            .unwrap();
        assert_eq!((schemas, copies), (1, 0));
        let schema = store.with_conn(|c| input_schema(c, "b")).unwrap();
        assert_eq!(
            schema
                .as_ref()
                .and_then(|s| s.pointer("/properties/keyword/maxLength")),
            Some(&json!(50))
        );
        assert_eq!(stored_labels(&store, "a"), stored_labels(&store, "b"));
    }

    #[test]
    fn a_call_stored_with_its_own_copy_of_the_schema_reads_as_before() {
        let store = store_with_batch();
        store
            .with_conn(|c| {
                c.execute(
                    "UPDATE tool_calls SET schema_hash = NULL,
                         input_schema = '{\"type\":\"object\",\"title\":\"旧\"}',
                         labels_schema = '{\"title\":\"旧\"}'",
                    [],
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
        assert_eq!(
            store.with_conn(|c| input_schema(c, "c")).unwrap(),
            Some(json!({"type": "object", "title": "旧"}))
        );
        assert_eq!(stored_labels(&store, "c"), Some(json!({"title": "旧"})));
    }

    fn stored_labels(store: &Store, call_id: &str) -> Option<Value> {
        store
            .with_conn(|c| get_call(c, call_id))
            .unwrap()
            .labels_schema
            .as_deref()
            .cloned()
    }

    #[test]
    fn only_a_read_allowed_without_asking_is_stored_after_it_ran() {
        let store = store_with_session();
        let ran = [
            (CallStatus::Allowed, 1),
            (CallStatus::Running, 2),
            (CallStatus::Succeeded, 2),
        ];
        let write = store.with_tx(|tx| {
            insert_batch_row(tx, &read_batch("w"))?;
            insert_moved(
                tx,
                &read_batch("w"),
                0,
                &pay_order(),
                1,
                &ran,
                &CallUpdate::default(),
            )
        });
        assert!(
            matches!(write, Err(StoreError::RunBeforeStoring(_))),
            "{write:?}"
        );
        let skipped_approval = [(CallStatus::Running, 1)];
        let illegal = store.with_tx(|tx| {
            insert_batch_row(tx, &read_batch("i"))?;
            insert_moved(
                tx,
                &read_batch("i"),
                0,
                &search("i"),
                1,
                &skipped_approval,
                &CallUpdate::default(),
            )
        });
        assert!(
            matches!(illegal, Err(StoreError::Transition(_))),
            "{illegal:?}"
        );
        let calls = store.with_conn(|c| calls_of_session(c, "s")).unwrap();
        assert_eq!(calls, vec![], "neither was stored");
    }

    #[test]
    fn a_session_has_at_most_one_open_batch() {
        let store = store_with_batch();
        let second = store.with_tx(|tx| {
            insert_batch(
                tx,
                &BatchRecord {
                    reply_id: "r2".into(),
                    session_id: "s".into(),
                    run_id: "run".into(),
                    assistant_message_id: 2,
                    state: BatchState::Pending,
                    created_at: 2,
                    expires_at: 100,
                },
                &[],
                2,
            )
        });
        assert!(second.is_err());
        let open = store.with_conn(|c| open_batch(c, "s")).unwrap().unwrap();
        assert_eq!(open.reply_id, "r");
        store
            .with_conn(|c| set_batch_state(c, "r", BatchState::Done))
            .unwrap();
        assert_eq!(store.with_conn(|c| open_batch(c, "s")).unwrap(), None);
    }
}
