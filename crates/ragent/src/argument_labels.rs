//! What a page needs of a tool's input schema to label a call's arguments
//! once the call is history (a chip, a decided card, the audit log): the
//! titles of its properties, nested ones too, and the titles of the
//! choices an argument offers, with the server's help for each. Kept with each call, since the full schema
//! stays out of a call's everyday loads.

use serde_json::{Map, Value};

/// Keys whose value is a schema.
const SCHEMA_KEYS: &[&str] = &["items", "additionalProperties"];
/// Keys whose value is a list of schemas.
const SCHEMA_LIST_KEYS: &[&str] = &["oneOf", "anyOf", "allOf"];
/// Keys whose value is a map of name to schema.
const SCHEMA_MAP_KEYS: &[&str] = &["properties", "$defs", "definitions"];
/// Plain keys a label, its help or a choice is read from.
const PLAIN_KEYS: &[&str] = &["type", "title", "description", "const", "enum", "$ref"];

/// `schema` cut down to what labels arguments; `None` for a schema that
/// is not an object.
pub fn labels_schema(schema: &Value) -> Option<Value> {
    schema
        .as_object()
        .map(|object| Value::Object(prune(object)))
}

fn prune(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in schema {
        let kept = if PLAIN_KEYS.contains(&key.as_str()) {
            Some(value.clone())
        } else if SCHEMA_KEYS.contains(&key.as_str()) {
            value.as_object().map(|inner| Value::Object(prune(inner)))
        } else if SCHEMA_LIST_KEYS.contains(&key.as_str()) {
            value.as_array().map(|list| {
                Value::Array(
                    list.iter()
                        .filter_map(Value::as_object)
                        .map(|inner| Value::Object(prune(inner)))
                        .collect(),
                )
            })
        } else if SCHEMA_MAP_KEYS.contains(&key.as_str()) {
            value.as_object().map(|map| {
                Value::Object(
                    map.iter()
                        .filter_map(|(name, inner)| {
                            Some((name.clone(), Value::Object(prune(inner.as_object()?))))
                        })
                        .collect(),
                )
            })
        } else {
            None
        };
        if let Some(kept) = kept {
            out.insert(key.clone(), kept);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn titles_choices_and_nested_rows_are_kept_and_the_rest_left_out() {
        let schema = json!({
            "type": "object",
            "required": ["items"],
            "properties": {
                "items": {"type": "array", "title": "商品", "minItems": 1, "items": {"$ref": "#/$defs/Line"}},
                "payMethod": {"title": "支付方式", "default": "alipay", "oneOf": [{"const": "alipay", "title": "支付宝", "description": "x"}]},
                "note": {"type": "string", "maxLength": 200}
            },
            "$defs": {"Line": {"type": "object", "properties": {"skuCode": {"type": "string", "title": "商品编码", "pattern": "^[A-Z]"}}}}
        });
        assert_eq!(
            labels_schema(&schema),
            Some(json!({
                "type": "object",
                "properties": {
                    "items": {"type": "array", "title": "商品", "items": {"$ref": "#/$defs/Line"}},
                    "payMethod": {"title": "支付方式", "oneOf": [{"const": "alipay", "title": "支付宝", "description": "x"}]},
                    "note": {"type": "string"}
                },
                "$defs": {"Line": {"type": "object", "properties": {"skuCode": {"type": "string", "title": "商品编码"}}}}
            }))
        );
        assert_eq!(labels_schema(&json!(true)), None);
    }
}
