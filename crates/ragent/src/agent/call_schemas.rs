//! Each listed tool's input schema as calls keep it, from the last listing.
//! Servers list the same schemas turn after turn; working one out (hashed,
//! written out, labelled) costs more than comparing it with the schema it
//! was worked out from, so only a schema that differs is worked out again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::mcp::ToolInfo;
use crate::store::calls::CallSchema;

/// The last listing's schemas, by `server__tool`.
#[derive(Default)]
pub(crate) struct CallSchemas {
    last: Mutex<HashMap<String, (Value, Arc<CallSchema>)>>,
}

impl CallSchemas {
    /// The schema of each listed tool, in the listing's order. Only this
    /// listing's schemas are kept for the next one.
    pub(crate) fn of<'a>(
        &self,
        listed: impl Iterator<Item = &'a ToolInfo>,
    ) -> Vec<Arc<CallSchema>> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let mut kept = HashMap::new();
        let schemas = listed
            .map(|info| {
                let schema = match last.remove(&info.qualified_name) {
                    Some((worked_from, schema)) if worked_from == info.input_schema => schema,
                    _ => Arc::new(CallSchema::of(&info.input_schema)),
                };
                kept.insert(
                    info.qualified_name.clone(),
                    (info.input_schema.clone(), schema.clone()),
                );
                schema
            })
            .collect();
        *last = kept;
        schemas
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::ToolHints;

    fn tool(name: &str, schema: Value) -> ToolInfo {
        ToolInfo {
            server: "shop".into(),
            name: name.into(),
            qualified_name: format!("shop__{name}"),
            title: None,
            description: None,
            input_schema: schema,
            hints: ToolHints::default(),
            moves_money: false,
            changes_cart: false,
            undoable: false,
            preview: None,
            definition: Value::Null,
            definition_hash: String::new(),
            trusted: true,
            merchant: None,
        }
    }

    fn sku_schema(field: &str) -> Value {
        json!({"type": "object", "properties": {field: {"type": "string"}}})
    }

    #[test]
    fn a_schema_listed_again_is_the_one_worked_out_before() {
        let schemas = CallSchemas::default();
        let listing = [tool("add", sku_schema("skuCode"))];
        let first = schemas.of(listing.iter());
        let again = schemas.of(listing.iter());
        assert!(Arc::ptr_eq(&first[0], &again[0]));
        assert_eq!(*again[0], CallSchema::of(&sku_schema("skuCode")));
    }

    #[test]
    fn a_schema_that_changed_is_worked_out_afresh() {
        let schemas = CallSchemas::default();
        schemas.of([tool("add", sku_schema("skuCode"))].iter());
        let changed = schemas.of([tool("add", sku_schema("sku"))].iter());
        assert_eq!(*changed[0], CallSchema::of(&sku_schema("sku")));
    }
}
