//! The standard's MCP binding as the core applies it to a merchant's
//! server: the model never writes the request metadata (the core names
//! the app's platform profile and the call's idempotency key in `meta` on
//! every call), `complete_checkout` always moves money whatever the
//! merchant declares, a call on a checkout is shown from the merchant's
//! signed checkout, and the shopper's mandate goes into the completion
//! only from the core.

use serde_json::{Map, Value, json};

use super::platform::request_meta;

/// Where the binding's tools take their request metadata.
pub const META: &str = "meta";

/// A merchant's server, as its entry in the settings names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerchantBinding {
    /// The merchant's origin: where its profile and keys are, and the
    /// audience of the shopper's mandates.
    pub origin: String,
    /// The app's platform profile, named in every request.
    pub platform_profile: String,
}

/// What a tool of the binding does, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    CreateCheckout,
    GetCheckout,
    UpdateCheckout,
    CompleteCheckout,
    CancelCheckout,
    /// Cart, catalogue and order tools: they follow the ordinary policy.
    Other,
}

impl Operation {
    pub fn of(tool: &str) -> Operation {
        match tool {
            "create_checkout" => Self::CreateCheckout,
            "get_checkout" => Self::GetCheckout,
            "update_checkout" => Self::UpdateCheckout,
            "complete_checkout" => Self::CompleteCheckout,
            "cancel_checkout" => Self::CancelCheckout,
            _ => Self::Other,
        }
    }

    /// A write whose consequence is the checkout as it stands: completing
    /// it pays exactly that, cancelling it drops exactly that. Its card is
    /// drawn from the checkout as the merchant signed it. An update is not:
    /// the checkout as it stands is not what the update makes of it, and
    /// the binding has no way to ask before, so its card shows its
    /// arguments, and the completion's card then shows the result.
    pub fn shown_as_the_checkout(self) -> bool {
        matches!(self, Self::CompleteCheckout | Self::CancelCheckout)
    }
}

impl Operation {
    /// The binding requires an idempotency key of it, so every merchant
    /// recognises a repeat: completing or cancelling a checkout.
    pub fn key_required(self) -> bool {
        matches!(self, Self::CompleteCheckout | Self::CancelCheckout)
    }
}

/// The tool whose answer is a checkout as the merchant signed it.
pub const GET_CHECKOUT: &str = "get_checkout";

/// `schema` as the model is offered it: without `meta`, which the core
/// writes.
pub fn offered_schema(schema: &Value) -> Value {
    let mut offered = schema.clone();
    if let Some(properties) = offered.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove(META);
    }
    if let Some(required) = offered.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name != META);
    }
    offered
}

/// `arguments` as sent: `meta` is the core's, whatever the model wrote.
pub fn with_meta(
    mut arguments: Map<String, Value>,
    binding: &MerchantBinding,
    idempotency_key: Option<&str>,
) -> Map<String, Value> {
    arguments.insert(
        META.into(),
        request_meta(&binding.platform_profile, idempotency_key),
    );
    arguments
}

/// The checkout a call acts on.
pub fn checkout_id(arguments: &Value) -> Option<&str> {
    arguments["id"].as_str().filter(|id| !id.is_empty())
}

/// The arguments that read checkout `id`.
pub fn read_checkout(id: &str) -> Map<String, Value> {
    let mut arguments = Map::new();
    arguments.insert("id".into(), json!(id));
    arguments
}

/// `arguments` of a completion with the shopper's `mandate` in it
/// (`checkout.ap2.checkout_mandate`); anything the model put there is
/// replaced.
pub fn with_mandate(mut arguments: Map<String, Value>, mandate: &str) -> Map<String, Value> {
    let checkout = arguments.entry("checkout").or_insert_with(|| json!({}));
    if !checkout.is_object() {
        *checkout = json!({});
    }
    checkout["ap2"] = json!({ "checkout_mandate": mandate });
    arguments
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn binding() -> MerchantBinding {
        MerchantBinding {
            origin: "https://shop.example".into(),
            platform_profile: "https://app.example/platform.json".into(),
        }
    }

    #[test]
    fn the_model_is_offered_the_schema_without_meta_and_the_core_writes_it() {
        let schema = json!({"type": "object", "required": ["meta", "id"],
            "properties": {"meta": {"type": "object"}, "id": {"type": "string"}}});
        assert_eq!(
            offered_schema(&schema),
            json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}})
        );
        let mut written = Map::new();
        written.insert("id".into(), json!("chk_1"));
        written.insert(
            "meta".into(),
            json!({"ucp-agent": {"profile": "https://evil.example"}}),
        );
        let sent = with_meta(written, &binding(), Some("call-1"));
        assert_eq!(
            sent["meta"],
            json!({"ucp-agent": {"profile": "https://app.example/platform.json"}, "idempotency-key": "call-1"})
        );
    }

    #[test]
    fn the_mandate_replaces_whatever_the_model_put_in_the_checkout() {
        let mut written = Map::new();
        written.insert("id".into(), json!("chk_1"));
        written.insert(
            "checkout".into(),
            json!({"ap2": {"checkout_mandate": "forged"}}),
        );
        let sent = with_mandate(written, "real");
        assert_eq!(
            sent["checkout"],
            json!({"ap2": {"checkout_mandate": "real"}})
        );
        assert!(Operation::of("complete_checkout").shown_as_the_checkout());
        assert!(Operation::of("cancel_checkout").shown_as_the_checkout());
        assert!(!Operation::of("update_checkout").shown_as_the_checkout());
        assert!(!Operation::of("create_checkout").shown_as_the_checkout());
    }
}
