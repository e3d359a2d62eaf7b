//! Canonical JSON and its SHA-256: the same value always hashes the same,
//! whatever order its object keys arrived in. Approvals bind to these
//! hashes, and tool definitions are pinned by them.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// JSON text with object keys sorted at every level and no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(key) {
                    write_canonical(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Hex SHA-256 of the canonical JSON of `value`.
pub fn hash_json(value: &Value) -> String {
    let digest = Sha256::digest(canonical_json(value).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_change_the_hash_but_values_do() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, 2], "x": "比特"}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a": {"x": "比特", "y": [1, 2]}, "b": 1}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":"比特","y":[1,2]},"b":1}"#);
        assert_eq!(hash_json(&a), hash_json(&b));
        assert_ne!(
            hash_json(&a),
            hash_json(&json!({"a": {"x": "比特", "y": [2, 1]}, "b": 1}))
        );
        assert_eq!(hash_json(&a).len(), 64);
    }
}
