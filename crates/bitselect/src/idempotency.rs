//! Idempotency keys for write tools.
//!
//! The agent core sends each write call with a key in the request `_meta`
//! (`ragent/idempotency_key`). The key, the tool, a hash of its arguments and
//! the first result are stored in the same transaction as the write, so a
//! call re-sent after a crash returns the first result and changes nothing.

use crate::store::params;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::Millis;
use crate::error::{Refusal, Result, ShopError};
use crate::users::UserConn;
use ap2::jcs;

/// The `_meta` key a caller puts the idempotency key under.
pub const META_KEY: &str = "ragent/idempotency_key";
/// Longest key accepted; call ids are far shorter.
pub const MAX_KEY_CHARS: usize = 200;

/// Checks a caller's key.
pub fn validate_key(key: &str) -> Result<()> {
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_KEY_CHARS {
        return Err(ShopError::invalid(
            META_KEY,
            format!("幂等键须为 1 到 {MAX_KEY_CHARS} 个字符"),
        ));
    }
    Ok(())
}

/// A stable hash of a tool's arguments: SHA-256 over the tool name and the
/// arguments as canonical JSON (RFC 8785: object keys sorted at every
/// level, no whitespace).
pub fn args_hash(tool: &str, args: &impl Serialize) -> Result<String> {
    let text = jcs::canonical(&serde_json::to_value(args)?);
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    hasher.update(text.as_bytes());
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The stored first result for `key`, if the key was used before with the
/// same tool and arguments; a refusal if it was used with different ones.
pub fn lookup(conn: &UserConn<'_>, key: &str, tool: &str, hash: &str) -> Result<Option<String>> {
    let stored: Option<(String, String, String)> = conn.query_opt(
        "SELECT tool, args_hash, result FROM idempotency WHERE user_id = ?1 AND key = ?2",
        params![conn.user(), key],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    match stored {
        None => Ok(None),
        Some((stored_tool, stored_hash, result)) if stored_tool == tool && stored_hash == hash => {
            Ok(Some(result))
        }
        Some((stored_tool, ..)) => Err(Refusal::IdempotencyConflict {
            key: key.to_owned(),
            tool: stored_tool,
        }
        .into()),
    }
}

/// Records the first result of a keyed call, inside the write's transaction.
pub fn store(
    conn: &UserConn<'_>,
    key: &str,
    tool: &str,
    hash: &str,
    result: &str,
    now: Millis,
) -> Result<()> {
    conn.execute(
        "INSERT INTO idempotency (user_id, key, tool, args_hash, result, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![conn.user(), key, tool, hash, result, now],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hash_ignores_key_order_but_not_values() {
        let a = args_hash(
            "create_order",
            &json!({"a": 1, "b": {"y": [1, 2], "x": "z"}}),
        )
        .unwrap();
        let b = args_hash(
            "create_order",
            &json!({"b": {"x": "z", "y": [1, 2]}, "a": 1}),
        )
        .unwrap();
        let c = args_hash(
            "create_order",
            &json!({"a": 2, "b": {"x": "z", "y": [1, 2]}}),
        )
        .unwrap();
        let d = args_hash("pay_order", &json!({"a": 1, "b": {"y": [1, 2], "x": "z"}})).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn keys_must_be_short_and_non_empty() {
        assert!(validate_key("call_1").is_ok());
        assert!(validate_key("").is_err());
        assert!(validate_key(&"k".repeat(MAX_KEY_CHARS + 1)).is_err());
    }
}
