//! Small keyed records: settings (one JSON document, secret values left
//! out), the secrets kept where no keyring answers, the keyring id, and tool pins.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::settings::Settings;

const SETTINGS_KEY: &str = "settings";

pub fn load_settings(conn: &Connection) -> Result<Option<Settings>, StoreError> {
    let text: Option<String> = conn
        .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
        .query_row(params![SETTINGS_KEY], |row| row.get(0))
        .optional()?;
    Ok(text.map(|t| serde_json::from_str(&t)).transpose()?)
}

pub fn save_settings(conn: &Connection, settings: &Settings, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    )?
    .execute(params![SETTINGS_KEY, serde_json::to_string(settings)?, now])?;
    Ok(())
}

/// The pinned hash of a tool's definition, if it was seen before.
pub fn pin(conn: &Connection, server: &str, tool: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT hash FROM tool_pins WHERE server = ?1 AND tool = ?2")?
        .query_row(params![server, tool], |row| row.get(0))
        .optional()?)
}

/// The pinned hash and definition (canonical JSON) of a tool, if any.
pub fn pinned_definition(
    conn: &Connection,
    server: &str,
    tool: &str,
) -> Result<Option<(String, String)>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT hash, definition FROM tool_pins WHERE server = ?1 AND tool = ?2")?
        .query_row(params![server, tool], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?)
}

/// Pins (or re-pins, once the user accepted a change) a definition.
pub fn set_pin(
    conn: &Connection,
    server: &str,
    tool: &str,
    hash: &str,
    definition: &str,
    now: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT INTO tool_pins (server, tool, hash, definition, pinned_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(server, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition,
             pinned_at = excluded.pinned_at")?.execute(
        params![server, tool, hash, definition, now],
    )?;
    Ok(())
}

/// Secrets kept in the database (where no keyring answers) are rows of
/// this table under this prefix, apart from the settings document.
const SECRET_PREFIX: &str = "secret/";
/// The key of the id that names this database's entries in the keyring.
const VAULT_KEY: &str = "secrets_vault";

pub fn secret(conn: &Connection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
        .query_row(params![format!("{SECRET_PREFIX}{name}")], |row| row.get(0))
        .optional()?)
}

pub fn set_secret(conn: &Connection, name: &str, value: &str, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    )?
    .execute(params![format!("{SECRET_PREFIX}{name}"), value, now])?;
    Ok(())
}

pub fn delete_secret(conn: &Connection, name: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM settings WHERE key = ?1")?
        .execute(params![format!("{SECRET_PREFIX}{name}")])?;
    Ok(())
}

pub fn secret_names(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT substr(key, length(?1) + 1) FROM settings WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key",
    )?;
    let names = stmt
        .query_map(params![SECRET_PREFIX], |row| row.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(names)
}

/// This database's keyring id, made on first use: entries of two data
/// directories never collide, and a moved database finds its own.
pub fn vault_id(conn: &Connection, now: i64) -> Result<String, StoreError> {
    let fresh = uuid::Uuid::new_v4().to_string();
    conn.prepare_cached(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT(key) DO NOTHING",
    )?
    .execute(params![VAULT_KEY, fresh, now])?;
    Ok(conn
        .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
        .query_row(params![VAULT_KEY], |row| row.get(0))?)
}
