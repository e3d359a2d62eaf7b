//! Validation of tool arguments against a tool's input schema, for
//! arguments the model proposed and for arguments a user edited on a card.

use serde_json::Value;

/// Checks `arguments` against `schema`; the errors say where and what.
pub fn validate_arguments(schema: &Value, arguments: &Value) -> Result<(), Vec<String>> {
    if !arguments.is_object() {
        return Err(vec!["the arguments must be a JSON object".to_string()]);
    }
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| vec![format!("the tool's input schema cannot be used: {e}")])?;
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
    fn arguments_must_be_an_object() {
        assert_eq!(
            validate_arguments(&cart_schema(), &json!([1])),
            Err(vec!["the arguments must be a JSON object".to_string()])
        );
    }
}
