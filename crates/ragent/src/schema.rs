//! Validation of tool arguments against a tool's input schema, for
//! arguments the model proposed and for arguments a user edited on a card.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jsonschema::Validator;
use serde_json::Value;

use crate::hashing::canonical_json;

/// Checks `arguments` against `schema`; the errors say where and what.
pub fn validate_arguments(schema: &Value, arguments: &Value) -> Result<(), Vec<String>> {
    check(&compile(schema)?, arguments)
}

fn compile(schema: &Value) -> Result<Validator, Vec<String>> {
    jsonschema::validator_for(schema)
        .map_err(|e| vec![format!("the tool's input schema cannot be used: {e}")])
}

fn check(validator: &Validator, arguments: &Value) -> Result<(), Vec<String>> {
    if !arguments.is_object() {
        return Err(vec!["the arguments must be a JSON object".to_string()]);
    }
    let errors: Vec<String> = validator
        .iter_errors(arguments)
        .map(|error| {
            let path = error.instance_path().to_string();
            if path.is_empty() {
                error.to_string()
            } else {
                format!("{path}: {error}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// More distinct schemas than any set of servers offers; past it the cache
/// starts again rather than grow without end.
const MAX_COMPILED: usize = 256;

/// Validators compiled once per schema. Compiling costs far more than
/// checking, and every call of a tool is checked against the same schema.
#[derive(Default)]
pub struct SchemaCache {
    compiled: Mutex<HashMap<String, Arc<Validator>>>,
}

impl SchemaCache {
    /// As [`validate_arguments`], compiling `schema` only the first time.
    pub fn validate(&self, schema: &Value, arguments: &Value) -> Result<(), Vec<String>> {
        self.validate_keyed(&canonical_json(schema), schema, arguments)
    }

    /// As [`SchemaCache::validate`] for a schema already known by `key`,
    /// such as the hash of the tool definition that holds it: no need to
    /// write the schema out to find its validator.
    pub fn validate_keyed(
        &self,
        key: &str,
        schema: &Value,
        arguments: &Value,
    ) -> Result<(), Vec<String>> {
        let validator = self.validator(key, schema)?;
        check(&validator, arguments)
    }

    fn validator(&self, key: &str, schema: &Value) -> Result<Arc<Validator>, Vec<String>> {
        if let Some(found) = self.lock().get(key) {
            return Ok(found.clone());
        }
        // Compiled outside the lock; two threads may both compile a new
        // schema, and either result is the same.
        let validator = Arc::new(compile(schema)?);
        let mut compiled = self.lock();
        if compiled.len() >= MAX_COMPILED {
            compiled.clear();
        }
        compiled.insert(key.to_string(), validator.clone());
        Ok(validator)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Validator>>> {
        // The map holds only compiled validators: usable after a panic.
        self.compiled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// The shape schemars gives the shop's update_cart_item.
    fn cart_schema() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "skuCode": {"type": "string", "title": "SKU 编码"},
                "action": {"$ref": "#/$defs/CartAction", "title": "操作"},
                "quantity": {"type": "integer", "format": "uint32", "minimum": 1, "title": "数量"}
            },
            "required": ["skuCode", "action", "quantity"],
            "$defs": {"CartAction": {"type": "string", "enum": ["add", "decrease", "remove"]}}
        })
    }

    #[test]
    fn edited_arguments_that_fit_the_schema_pass() {
        let args = json!({"skuCode": "MG6W4CH/A", "action": "add", "quantity": 2});
        assert_eq!(validate_arguments(&cart_schema(), &args), Ok(()));
    }

    #[test]
    fn each_broken_rule_is_named() {
        let args = json!({"skuCode": "MG6W4CH/A", "action": "buy", "quantity": 0});
        let errors = validate_arguments(&cart_schema(), &args).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors.iter().any(|e| e.starts_with("/action")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.starts_with("/quantity")),
            "{errors:?}"
        );

        let missing = validate_arguments(&cart_schema(), &json!({"skuCode": "X"})).unwrap_err();
        assert!(missing.iter().any(|e| e.contains("action")), "{missing:?}");
        let wrong_type = validate_arguments(
            &cart_schema(),
            &json!({"skuCode": 5, "action": "add", "quantity": "1"}),
        )
        .unwrap_err();
        assert_eq!(wrong_type.len(), 2, "{wrong_type:?}");
    }

    #[test]
    fn the_cache_compiles_a_schema_once_and_judges_as_the_plain_check() {
        let cache = SchemaCache::default();
        let good = json!({"skuCode": "MG6W4CH/A", "action": "add", "quantity": 2});
        let bad = json!({"skuCode": "MG6W4CH/A", "action": "buy", "quantity": 0});
        for arguments in [&good, &bad, &good] {
            assert_eq!(
                cache.validate(&cart_schema(), arguments),
                validate_arguments(&cart_schema(), arguments)
            );
        }
        assert_eq!(cache.len(), 1);
        let other = json!({"type": "object", "required": ["orderNo"]});
        assert!(cache.validate(&other, &json!({})).is_err());
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn an_unusable_schema_is_reported_not_cached() {
        let cache = SchemaCache::default();
        let broken = json!({"type": 12});
        let errors = cache.validate(&broken, &json!({})).unwrap_err();
        assert!(errors[0].contains("cannot be used"), "{errors:?}");
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(
            validate_arguments(&cart_schema(), &json!([1])),
            Err(vec!["the arguments must be a JSON object".to_string()])
        );
    }
}
