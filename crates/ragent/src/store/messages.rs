//! The conversation, append-only: user and assistant messages, tool
//! results (in the model's order), and notices for the user alone.

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
    conn.execute(
        "INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id, call_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
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

/// A session's messages, oldest first.
pub fn list(conn: &Connection, session_id: &str) -> Result<Vec<MessageRecord>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, session_id, run_id, role, content, tool_calls, tool_call_id, call_id, created_at
         FROM messages WHERE session_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map(params![session_id], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, String>(4)?,
            row.get::<_, Option<String>>(5)?,
            row.get::<_, Option<String>>(6)?,
            row.get::<_, Option<String>>(7)?,
            row.get::<_, i64>(8)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, session_id, run_id, role, content, calls, tool_call_id, call_id, created_at) =
            row?;
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
        out.push(MessageRecord {
            id,
            session_id,
            run_id,
            role: Role::parse(&role)?,
            content,
            tool_calls,
            tool_call_id,
            call_id,
            created_at,
        });
    }
    Ok(out)
}
