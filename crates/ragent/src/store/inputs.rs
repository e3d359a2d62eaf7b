//! What a call's server asked the user for: one row per round of an MCP
//! `input_required` answer. The requests and the `requestState` are kept
//! exactly as received (the state is echoed byte for byte), and the
//! responses sent back are kept with them, so a retry cut off by a crash
//! is sent again with the same answer.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};

use super::StoreError;

/// A stored round.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRecord {
    pub id: String,
    pub call_id: String,
    pub session_id: String,
    pub round: u32,
    /// The `inputRequests` map as received.
    pub requests: Value,
    /// The `requestState` as received, to be echoed unchanged.
    pub request_state: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    /// The `inputResponses` sent back, once answered.
    pub responses: Option<Map<String, Value>>,
    pub answered_at: Option<i64>,
}

impl InputRecord {
    pub fn is_answered(&self) -> bool {
        self.answered_at.is_some()
    }
}

const COLUMNS: &str = "id, call_id, session_id, round, requests, request_state, created_at, expires_at, responses, answered_at";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(InputRecord, String, Option<String>)> {
    Ok((
        InputRecord {
            id: row.get(0)?,
            call_id: row.get(1)?,
            session_id: row.get(2)?,
            round: row.get(3)?,
            requests: Value::Null,
            request_state: row.get(5)?,
            created_at: row.get(6)?,
            expires_at: row.get(7)?,
            responses: None,
            answered_at: row.get(9)?,
        },
        row.get(4)?,
        row.get(8)?,
    ))
}

fn finish(
    (mut record, requests, responses): (InputRecord, String, Option<String>),
) -> Result<InputRecord, StoreError> {
    record.requests = serde_json::from_str(&requests)?;
    record.responses = responses
        .map(|text| serde_json::from_str(&text))
        .transpose()?;
    Ok(record)
}

pub fn insert(conn: &Connection, record: &InputRecord) -> Result<(), StoreError> {
    conn.prepare_cached(&format!(
        "INSERT INTO input_requests ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, NULL)"
    ))?
    .execute(params![
        record.id,
        record.call_id,
        record.session_id,
        record.round,
        record.requests.to_string(),
        record.request_state,
        record.created_at,
        record.expires_at,
    ])?;
    Ok(())
}

/// Records the responses of a round not answered yet; refused (nothing
/// changes) when it was answered already.
pub fn answer(
    conn: &Connection,
    id: &str,
    responses: &Map<String, Value>,
    now: i64,
) -> Result<(), StoreError> {
    let text = Value::Object(responses.clone()).to_string();
    let changed = conn
        .prepare_cached(
            "UPDATE input_requests SET responses = ?2, answered_at = ?3
             WHERE id = ?1 AND answered_at IS NULL",
        )?
        .execute(params![id, text, now])?;
    if changed == 0 {
        return Err(StoreError::NotFound(format!(
            "unanswered input request {id}"
        )));
    }
    Ok(())
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<InputRecord>, StoreError> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM input_requests WHERE id = ?1"
    ))?
    .query_row(params![id], from_row)
    .optional()?
    .map(finish)
    .transpose()
}

/// The call's latest round, answered or not.
pub fn latest_of_call(conn: &Connection, call_id: &str) -> Result<Option<InputRecord>, StoreError> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM input_requests WHERE call_id = ?1 ORDER BY round DESC LIMIT 1"
    ))?
    .query_row(params![call_id], from_row)
    .optional()?
    .map(finish)
    .transpose()
}

/// The session's round that waits for the user: unanswered, and its call
/// still awaiting input.
pub fn waiting_in_session(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<InputRecord>, StoreError> {
    conn.prepare_cached(
        "SELECT i.id, i.call_id, i.session_id, i.round, i.requests, i.request_state,
                i.created_at, i.expires_at, i.responses, i.answered_at
         FROM input_requests i JOIN tool_calls c ON c.id = i.call_id
         WHERE i.session_id = ?1 AND i.answered_at IS NULL AND c.status = 'awaiting_input'
         ORDER BY i.created_at DESC LIMIT 1",
    )?
    .query_row(params![session_id], from_row)
    .optional()?
    .map(finish)
    .transpose()
}

/// The session's answered rounds, each call's in order.
pub fn answered_in_session(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<InputRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM input_requests
         WHERE session_id = ?1 AND answered_at IS NOT NULL
         ORDER BY call_id, round"
    ))?;
    let rows = stmt.query_map(params![session_id], from_row)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(finish(row?)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::store::Store;

    #[test]
    fn a_round_keeps_the_state_exactly_and_is_answered_once() {
        let store = Store::open_in_memory().unwrap();
        store
            .with_conn(|c| {
                c.execute_batch("PRAGMA foreign_keys = OFF;")?;
                let record = InputRecord {
                    id: "i1".into(),
                    call_id: "c1".into(),
                    session_id: "s1".into(),
                    round: 1,
                    requests: json!({"pay": {"method": "elicitation/create"}}),
                    request_state: Some(" {\"b\":1, \"a\":2}\u{2028} ".into()),
                    created_at: 5,
                    expires_at: 50,
                    responses: None,
                    answered_at: None,
                };
                insert(c, &record)?;
                assert_eq!(get(c, "i1")?, Some(record.clone()));
                let responses = json!({"pay": {"action": "decline"}})
                    .as_object()
                    .unwrap()
                    .clone();
                answer(c, "i1", &responses, 9)?;
                assert!(answer(c, "i1", &responses, 10).is_err());
                let latest = latest_of_call(c, "c1")?.unwrap();
                assert_eq!(latest.request_state, record.request_state);
                assert_eq!(latest.responses, Some(responses));
                assert_eq!(latest.answered_at, Some(9));
                Ok::<_, StoreError>(())
            })
            .unwrap();
    }
}
