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
                write_string(key, out);
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
        Value::String(text) => write_string(text, out),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A JSON string literal, escaped as serde_json escapes it.
fn write_string(text: &str, out: &mut String) {
    // Serializing a `&str` cannot fail.
    if let Ok(quoted) = serde_json::to_string(text) {
        out.push_str(&quoted);
    }
}

/// Hex SHA-256 of the canonical JSON of `value`.
pub fn hash_json(value: &Value) -> String {
    let digest = Sha256::digest(canonical_json(value).as_bytes());
    lower_hex(&digest)
}

/// Two lower-case hex digits a byte, written into one allocation: a call's
/// arguments are hashed on every round, and a `format!` per byte showed.
fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
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

    #[test]
    fn the_hash_is_the_lower_hex_sha256_of_the_escaped_canonical_text() {
        let value = json!({"say \"hi\"": "line\nnext", "n": [1.5, null, true]});
        let text = canonical_json(&value);
        assert_eq!(text, r#"{"n":[1.5,null,true],"say \"hi\"":"line\nnext"}"#);
        let expected: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hash_json(&value), expected);
        assert_eq!(
            hash_json(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
