//! The shopper's checkout mandates, one per approved completion: the
//! checkout exactly as the card showed it, the merchant's signature on it,
//! the mandate the device signed over it (what the completion carries,
//! the same on every send of the call), and the merchant's signed receipt
//! once the completion answered. The record of what the shopper signed.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use super::StoreError;

/// A mandate as kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MandateRecord {
    pub call_id: String,
    pub session_id: String,
    pub server: String,
    /// The merchant's origin: the mandate's audience.
    pub merchant: String,
    pub checkout_id: String,
    /// The checkout the shopper approved, as signed by the merchant.
    pub checkout: Value,
    pub merchant_signature: String,
    /// The merchant's published keys (JWKs) the signature was checked
    /// with: what lets the record be verified again offline.
    pub merchant_keys: Value,
    pub mandate: String,
    pub created_at: i64,
    pub receipt: Option<Value>,
    pub completed_at: Option<i64>,
}

/// Keeps the mandate made for `record.call_id`; a call approved again
/// (after its card came back) keeps its newest.
pub fn keep(conn: &Connection, record: &MandateRecord) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO mandates (call_id, session_id, server, merchant, checkout_id, checkout,
             merchant_signature, merchant_keys, mandate, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (call_id) DO UPDATE SET checkout_id = excluded.checkout_id,
             checkout = excluded.checkout, merchant_signature = excluded.merchant_signature,
             merchant_keys = excluded.merchant_keys, mandate = excluded.mandate,
             created_at = excluded.created_at",
        params![
            record.call_id,
            record.session_id,
            record.server,
            record.merchant,
            record.checkout_id,
            record.checkout.to_string(),
            record.merchant_signature,
            record.merchant_keys.to_string(),
            record.mandate,
            record.created_at,
        ],
    )?;
    Ok(())
}

/// The merchant's signed receipt for the completion `call_id` carried.
pub fn set_receipt(
    conn: &Connection,
    call_id: &str,
    receipt: &Value,
    now: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE mandates SET receipt = ?2, completed_at = ?3 WHERE call_id = ?1",
        params![call_id, receipt.to_string(), now],
    )?;
    Ok(())
}

const COLUMNS: &str = "call_id, session_id, server, merchant, checkout_id, checkout,
    merchant_signature, merchant_keys, mandate, created_at, receipt, completed_at";

fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<MandateRecord> {
    let json = |text: String| serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok(MandateRecord {
        call_id: row.get(0)?,
        session_id: row.get(1)?,
        server: row.get(2)?,
        merchant: row.get(3)?,
        checkout_id: row.get(4)?,
        checkout: json(row.get(5)?),
        merchant_signature: row.get(6)?,
        merchant_keys: json(row.get(7)?),
        mandate: row.get(8)?,
        created_at: row.get(9)?,
        receipt: row.get::<_, Option<String>>(10)?.map(json),
        completed_at: row.get(11)?,
    })
}

/// The mandate made for `call_id`.
pub fn of_call(conn: &Connection, call_id: &str) -> Result<Option<MandateRecord>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM mandates WHERE call_id = ?1"),
            params![call_id],
            read,
        )
        .optional()?)
}

/// Every mandate, newest first.
pub fn all(conn: &Connection) -> Result<Vec<MandateRecord>, StoreError> {
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM mandates ORDER BY created_at DESC, call_id"
    ))?;
    let rows = statement.query_map([], read)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
