//! Pinning tool definitions. What the user agreed to trust is a tool's
//! definition when first seen; a server that later changes the schema,
//! annotations or description of a tool (a "rug pull") gets every call of
//! that tool stopped for the user until the new definition is accepted.

use rusqlite::Connection;
use serde_json::{Value, json};

use super::{CHANGES_CART, MOVES_MONEY, PREVIEW, ToolHints, ToolInfo, UNDOABLE, qualified_name};
use crate::hashing::{canonical_json, hash_json};
use crate::protocol::{DefinitionField, ToolDefinitionView};
use crate::store::{StoreError, kv};
use crate::ucp::binding::{MerchantBinding, Operation, offered_schema};

/// Whether the definition's `_meta` says the tool moves money.
pub fn moves_money(tool: &rmcp::model::Tool) -> bool {
    meta_flag(tool, MOVES_MONEY)
}

fn meta_flag(tool: &rmcp::model::Tool, key: &str) -> bool {
    tool.meta
        .as_ref()
        .and_then(|meta| meta.0.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The tool the definition's `_meta` names as its preview, if any.
pub fn preview_of(tool: &rmcp::model::Tool) -> Option<String> {
    tool.meta
        .as_ref()
        .and_then(|meta| meta.0.get(PREVIEW))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The parts of a definition that decide what a call does or how it is
/// judged, as one JSON value. The money flag is part of it only when set,
/// so the pins of tools that do not declare it stay as they were, and a
/// server that drops it later has its tool flagged as changed.
pub fn definition_of(tool: &rmcp::model::Tool) -> Value {
    let mut definition = json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema.as_ref(),
        "annotations": tool.annotations,
    });
    if moves_money(tool)
        && let Value::Object(fields) = &mut definition
    {
        fields.insert("movesMoney".into(), Value::Bool(true));
    }
    // A server that starts calling a write undoable softens its card.
    if meta_flag(tool, UNDOABLE)
        && let Value::Object(fields) = &mut definition
    {
        fields.insert("undoable".into(), Value::Bool(true));
    }
    // Which tool previews it decides what its card shows.
    if let (Some(preview), Value::Object(fields)) = (preview_of(tool), &mut definition) {
        fields.insert("preview".into(), Value::String(preview));
    }
    definition
}

/// A definition made by [`definition_of`] (new, or read back from its pin)
/// as the user compares it.
pub fn definition_view(definition: &Value) -> ToolDefinitionView {
    let text = |field: &str| {
        definition
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let value = |field: &str| definition.get(field).cloned().unwrap_or(Value::Null);
    ToolDefinitionView {
        title: text("title"),
        description: text("description"),
        input_schema: value("inputSchema"),
        annotations: value("annotations"),
    }
}

/// Which fields differ between two definitions, field by field.
pub fn changed_fields(old: &ToolDefinitionView, new: &ToolDefinitionView) -> Vec<DefinitionField> {
    [
        (DefinitionField::Title, old.title != new.title),
        (
            DefinitionField::Description,
            old.description != new.description,
        ),
        (
            DefinitionField::InputSchema,
            old.input_schema != new.input_schema,
        ),
        (
            DefinitionField::Annotations,
            old.annotations != new.annotations,
        ),
    ]
    .into_iter()
    .filter_map(|(field, differs)| differs.then_some(field))
    .collect()
}

/// The agent's view of a listed tool.
pub fn tool_info(server: &str, trusted: bool, tool: &rmcp::model::Tool) -> ToolInfo {
    let definition = definition_of(tool);
    let annotations = tool.annotations.clone().unwrap_or_default();
    ToolInfo {
        server: server.to_string(),
        name: tool.name.to_string(),
        qualified_name: qualified_name(server, &tool.name),
        title: tool.title.clone().or(annotations.title),
        description: tool.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object(tool.input_schema.as_ref().clone()),
        hints: ToolHints {
            read_only: annotations.read_only_hint,
            destructive: annotations.destructive_hint,
            idempotent: annotations.idempotent_hint,
            open_world: annotations.open_world_hint,
        },
        moves_money: moves_money(tool),
        changes_cart: meta_flag(tool, CHANGES_CART),
        undoable: meta_flag(tool, UNDOABLE),
        preview: preview_of(tool),
        definition_hash: hash_json(&definition),
        definition,
        trusted,
        merchant: None,
    }
}

/// A tool of a UCP merchant's shopping service as the agent offers it:
/// without the request metadata the core writes, naming its merchant, and
/// with `complete_checkout` moving money whatever the merchant declares.
/// Its card is drawn from the signed checkout, never from a preview tool
/// the merchant names.
pub fn merchant_tool(mut info: ToolInfo, binding: &MerchantBinding) -> ToolInfo {
    info.input_schema = offered_schema(&info.input_schema);
    if Operation::of(&info.name) == Operation::CompleteCheckout {
        info.moves_money = true;
    }
    info.preview = None;
    info.merchant = Some(binding.clone());
    info
}

/// Compares a tool with its pin, pinning it if it is new. Returns whether
/// the definition changed since it was pinned.
pub fn check(conn: &Connection, tool: &ToolInfo, now: i64) -> Result<bool, StoreError> {
    match kv::pin(conn, &tool.server, &tool.name)? {
        Some(hash) => Ok(hash != tool.definition_hash),
        None => {
            accept(conn, tool, now)?;
            Ok(false)
        }
    }
}

/// The user accepted the tool's current definition.
pub fn accept(conn: &Connection, tool: &ToolInfo, now: i64) -> Result<(), StoreError> {
    kv::set_pin(
        conn,
        &tool.server,
        &tool.name,
        &tool.definition_hash,
        &canonical_json(&tool.definition),
        now,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::{Tool, ToolAnnotations};

    use super::*;
    use crate::store::Store;

    fn tool(description: &str, read_only: bool) -> Tool {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        Tool::new("search", description.to_string(), Arc::new(schema))
            .with_annotations(ToolAnnotations::new().read_only(read_only))
    }

    #[test]
    fn first_sight_pins_and_any_later_change_is_flagged() {
        let store = Store::open_in_memory().unwrap();
        let original = tool_info("shop", true, &tool("Search products", true));
        assert!(!store.with_conn(|c| check(c, &original, 1)).unwrap());
        assert!(!store.with_conn(|c| check(c, &original, 2)).unwrap());

        let new_hint = tool_info("shop", true, &tool("Search products", false));
        assert!(store.with_conn(|c| check(c, &new_hint, 3)).unwrap());
        let new_text = tool_info(
            "shop",
            true,
            &tool("Search products; also empty the cart", true),
        );
        assert!(store.with_conn(|c| check(c, &new_text, 4)).unwrap());

        store.with_conn(|c| accept(c, &new_text, 5)).unwrap();
        assert!(!store.with_conn(|c| check(c, &new_text, 6)).unwrap());
        assert!(store.with_conn(|c| check(c, &original, 7)).unwrap());
    }

    #[test]
    fn a_pinned_definition_is_compared_field_by_field() {
        let old = tool_info("shop", true, &tool("Search products", true));
        let new = tool_info(
            "shop",
            true,
            &tool("Search products; also empty the cart", false),
        );
        // The pin keeps the canonical text; the view is read back from it.
        let pinned: Value = serde_json::from_str(&canonical_json(&old.definition)).unwrap();
        let (old, new) = (definition_view(&pinned), definition_view(&new.definition));
        assert_eq!(old.description.as_deref(), Some("Search products"));
        assert_eq!(old.annotations["readOnlyHint"], json!(true));
        assert_eq!(new.annotations["readOnlyHint"], json!(false));
        assert_eq!(
            changed_fields(&old, &new),
            vec![DefinitionField::Description, DefinitionField::Annotations]
        );
        assert_eq!(changed_fields(&old, &old), vec![]);
    }

    #[test]
    fn the_money_flag_is_read_from_meta_and_dropping_it_is_a_change() {
        let store = Store::open_in_memory().unwrap();
        let mut meta = rmcp::model::MetaObject::default();
        meta.0.insert(MOVES_MONEY.into(), Value::Bool(true));
        let paying = tool_info("shop", true, &tool("Pay", false).with_meta(meta));
        assert!(paying.moves_money);
        assert!(!store.with_conn(|c| check(c, &paying, 1)).unwrap());

        let quiet = tool_info("shop", true, &tool("Pay", false));
        assert!(!quiet.moves_money);
        assert!(store.with_conn(|c| check(c, &quiet, 2)).unwrap());
    }

    #[test]
    fn a_definition_without_the_money_flag_keeps_its_hash() {
        let plain = tool("Search products", true);
        assert_eq!(
            definition_of(&plain),
            json!({
                "name": "search",
                "title": null,
                "description": "Search products",
                "inputSchema": plain.input_schema.as_ref(),
                "annotations": plain.annotations,
            })
        );
    }

    #[test]
    fn the_same_tool_name_on_two_servers_has_two_pins() {
        let store = Store::open_in_memory().unwrap();
        let a = tool_info("shop", true, &tool("Search products", true));
        let b = tool_info("other", false, &tool("Something else", true));
        assert_eq!(a.qualified_name, "shop__search");
        assert_eq!(b.qualified_name, "other__search");
        assert!(!store.with_conn(|c| check(c, &a, 1)).unwrap());
        assert!(!store.with_conn(|c| check(c, &b, 1)).unwrap());
    }
}
