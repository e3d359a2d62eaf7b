//! How a session's last run failed, kept until the next run starts, so a
//! window opened later (after a restart too) shows the error with its way
//! out, as the live event did.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::protocol::ErrorInfo;

/// Records that run `run_id` of the session failed with `error`.
pub fn record(
    conn: &Connection,
    session_id: &str,
    run_id: &str,
    error: &ErrorInfo,
    now: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO run_failures (session_id, run_id, error, failed_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(session_id) DO UPDATE SET run_id = ?2, error = ?3, failed_at = ?4",
        params![session_id, run_id, serde_json::to_string(error)?, now],
    )?;
    Ok(())
}

/// Forgets the session's failure: a new run is answering.
pub fn clear(conn: &Connection, session_id: &str) -> Result<(), StoreError> {
    conn.execute(
        "DELETE FROM run_failures WHERE session_id = ?1",
        params![session_id],
    )?;
    Ok(())
}

/// The session's last run's failure, if it failed.
pub fn last(conn: &Connection, session_id: &str) -> Result<Option<ErrorInfo>, StoreError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT error FROM run_failures WHERE session_id = ?1",
            params![session_id],
            |row| row.get(0),
        )
        .optional()?;
    Ok(text.map(|text| serde_json::from_str(&text)).transpose()?)
}
