//! The conversation, append-only: user and assistant messages, tool
//! results (in the model's order), and notices for the user alone. An
//! answer written again is withdrawn, not changed: its row stays, and
//! nothing here reads it.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::llm::ToolCallRequest;

/// Who a stored message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    /// A tool result, sent to the model after its assistant message.
    Tool,
    /// Shown to the user, never sent to the model.
    Notice,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Notice => "notice",
        }
    }

    fn parse(text: &str) -> Result<Role, StoreError> {
        match text {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            "tool" => Ok(Role::Tool),
            "notice" => Ok(Role::Notice),
            other => Err(StoreError::NotFound(format!("message role {other:?}"))),
        }
    }
}

/// A message to append.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage<'a> {
    pub session_id: &'a str,
    pub run_id: Option<&'a str>,
    pub role: Role,
    pub content: &'a str,
    pub tool_calls: &'a [ToolCallRequest],
    /// For a tool result: the model's id of the call it answers.
    pub tool_call_id: Option<&'a str>,
    /// For a tool result: our id of the call.
    pub call_id: Option<&'a str>,
}

/// A stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRecord {
    pub id: i64,
    pub session_id: String,
    pub run_id: Option<String>,
    pub role: Role,
    pub content: String,
    pub tool_calls: Vec<ToolCallRequest>,
    pub tool_call_id: Option<String>,
    pub call_id: Option<String>,
    pub created_at: i64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct StoredCall {
    id: String,
    name: String,
    arguments: String,
}

pub fn append(conn: &Connection, message: &NewMessage<'_>, now: i64) -> Result<i64, StoreError> {
    let tool_calls = if message.tool_calls.is_empty() {
        None
    } else {
        let calls: Vec<StoredCall> = message
            .tool_calls
            .iter()
            .map(|c| StoredCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        Some(serde_json::to_string(&calls)?)
    };
    conn.prepare_cached("INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id, call_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?.execute(
        params![
            message.session_id,
            message.run_id,
            message.role.as_str(),
            message.content,
            tool_calls,
            message.tool_call_id,
            message.call_id,
            now
        ],
    )?;
    super::sessions::touch(conn, message.session_id, now)?;
    Ok(conn.last_insert_rowid())
}

/// A session's messages, with `$rest` (ordering, more filters) after the
/// session filter: each query a constant, prepared once.
macro_rules! session_messages {
    ($rest:literal) => {
        concat!(
            "SELECT id, session_id, run_id, role, content, tool_calls, tool_call_id, call_id, created_at
             FROM messages WHERE session_id = ?1
               AND id NOT IN (SELECT message_id FROM withdrawn_messages) ",
            $rest
        )
    };
}

fn record(row: &rusqlite::Row<'_>) -> Result<MessageRecord, StoreError> {
    let calls: Option<String> = row.get(5)?;
    let tool_calls = match calls {
        Some(text) => serde_json::from_str::<Vec<StoredCall>>(&text)?
            .into_iter()
            .map(|c| ToolCallRequest {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            })
            .collect(),
        None => Vec::new(),
    };
    let role: String = row.get(3)?;
    Ok(MessageRecord {
        id: row.get(0)?,
        session_id: row.get(1)?,
        run_id: row.get(2)?,
        role: Role::parse(&role)?,
        content: row.get(4)?,
        tool_calls,
        tool_call_id: row.get(6)?,
        call_id: row.get(7)?,
        created_at: row.get(8)?,
    })
}

/// Runs `sql` and hands each message to `visit` until it returns false.
fn visit_rows(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    mut visit: impl FnMut(MessageRecord) -> bool,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(params)?;
    while let Some(row) = rows.next()? {
        if !visit(record(row)?) {
            break;
        }
    }
    Ok(())
}

/// Takes message `id` out of the conversation (a final answer the user asked
/// the model to write again).
pub fn withdraw(conn: &Connection, id: i64, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO withdrawn_messages (message_id, withdrawn_at) VALUES (?1, ?2)",
        params![id, now],
    )?;
    Ok(())
}

/// A session's messages, oldest first.
pub fn list(conn: &Connection, session_id: &str) -> Result<Vec<MessageRecord>, StoreError> {
    let mut out = Vec::new();
    visit_rows(
        conn,
        session_messages!("ORDER BY id"),
        params![session_id],
        |message| {
            out.push(message);
            true
        },
    )?;
    Ok(out)
}

/// A session's messages from the newest back, handed to `visit` one by
/// one until it returns false: the cost of reading is what is used, not
/// the length of the history.
pub fn visit_newest_first(
    conn: &Connection,
    session_id: &str,
    visit: impl FnMut(MessageRecord) -> bool,
) -> Result<(), StoreError> {
    visit_rows(
        conn,
        session_messages!("ORDER BY id DESC"),
        params![session_id],
        visit,
    )
}

/// The id of the session's newest message in its conversation (not
/// withdrawn), 0 when it has none: what a reader that read everything has
/// read up to.
pub fn newest_id(conn: &Connection, session_id: &str) -> Result<i64, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = ?1
               AND id NOT IN (SELECT message_id FROM withdrawn_messages)",
        )?
        .query_row(params![session_id], |row| row.get(0))?)
}

/// A session's messages stored after message `after`, oldest first.
pub fn visit_after(
    conn: &Connection,
    session_id: &str,
    after: i64,
    mut visit: impl FnMut(MessageRecord),
) -> Result<(), StoreError> {
    visit_rows(
        conn,
        session_messages!("AND id > ?2 ORDER BY id"),
        params![session_id, after],
        |message| {
            visit(message);
            true
        },
    )
}
