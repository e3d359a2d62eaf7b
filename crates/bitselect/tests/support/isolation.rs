//! What isolation checks compare: every row of the shop, and two answers
//! that must differ only in the id asked about.

use bitselect::Shop;
use pretty_assertions::assert_eq;
use rmcp::model::CallToolResult;
use rusqlite::types::Value as SqlValue;
use serde_json::{Value, json};

use super::client::{Client, call, refused, text};

/// Every row of every table, in a stable order: what "changed nothing"
/// compares.
pub fn dump(shop: &Shop) -> Vec<String> {
    let conn = shop.connection().unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut rows = Vec::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
        let width = stmt.column_count();
        let mut found: Vec<String> = stmt
            .query_map([], |row| {
                (0..width)
                    .map(|i| row.get::<_, SqlValue>(i))
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap()
            .map(|row| format!("{table}: {:?}", row.unwrap()))
            .collect();
        found.sort();
        rows.extend(found);
    }
    rows
}

/// What a call answered, all of it.
fn answer(result: &CallToolResult) -> Value {
    json!({
        "isError": result.is_error,
        "text": text(result),
        "structured": result.structured_content,
    })
}

/// `value` with every `from` written as `to`.
fn replaced(value: &Value, from: &str, to: &str) -> Value {
    serde_json::from_str(&value.to_string().replace(from, to)).unwrap()
}

/// Calls `tool` with `theirs` (an id of B's) in `arguments`, and again with
/// `missing` (an id nobody has) in its place: the two answers must be the
/// same but for the id.
pub async fn answers_as_missing(
    client: &Client,
    tool: &str,
    arguments: Value,
    theirs: &str,
    missing: &str,
) {
    let with_missing = replaced(&arguments, theirs, missing);
    let for_theirs = call(client, tool, arguments).await;
    let for_missing = call(client, tool, with_missing).await;
    // A preview answers a blocked write with its warnings, not an error.
    if !tool.starts_with("preview_") {
        refused(&for_theirs);
    }
    assert_eq!(
        answer(&for_theirs),
        replaced(&answer(&for_missing), missing, theirs),
        "{tool} told another user's {theirs} apart from a missing one"
    );
}
