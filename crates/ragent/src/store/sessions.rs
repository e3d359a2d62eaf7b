//! Sessions: a chat's identity and title.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::protocol::SessionInfo;

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        id: row.get(0)?,
        title: row.get(1)?,
        created_at: row.get(2)?,
        updated_at: row.get(3)?,
    })
}

pub fn create(
    conn: &Connection,
    id: &str,
    title: &str,
    now: i64,
) -> Result<SessionInfo, StoreError> {
    conn.prepare_cached(
        "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
    )?
    .execute(params![id, title, now])?;
    Ok(SessionInfo {
        id: id.to_string(),
        title: title.to_string(),
        created_at: now,
        updated_at: now,
    })
}

pub fn get(conn: &Connection, id: &str) -> Result<SessionInfo, StoreError> {
    conn.prepare_cached("SELECT id, title, created_at, updated_at FROM sessions WHERE id = ?1")?
        .query_row(params![id], from_row)
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("session {id}")))
}

/// Most recently used first.
pub fn list(conn: &Connection) -> Result<Vec<SessionInfo>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, created_at, updated_at FROM sessions ORDER BY updated_at DESC, id",
    )?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn rename(conn: &Connection, id: &str, title: &str, now: i64) -> Result<(), StoreError> {
    let changed = conn
        .prepare_cached("UPDATE sessions SET title = ?2, updated_at = ?3 WHERE id = ?1")?
        .execute(params![id, title, now])?;
    if changed == 0 {
        return Err(StoreError::NotFound(format!("session {id}")));
    }
    Ok(())
}

pub fn touch(conn: &Connection, id: &str, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE sessions SET updated_at = max(updated_at, ?2) WHERE id = ?1")?
        .execute(params![id, now])?;
    Ok(())
}

/// Removes the session with its messages, calls and batches (the audit
/// log keeps its rows).
pub fn delete(conn: &Connection, id: &str) -> Result<(), StoreError> {
    // The append-only trigger guards updates, not deletes of a whole chat.
    let changed = conn
        .prepare_cached("DELETE FROM sessions WHERE id = ?1")?
        .execute(params![id])?;
    if changed == 0 {
        return Err(StoreError::NotFound(format!("session {id}")));
    }
    Ok(())
}
