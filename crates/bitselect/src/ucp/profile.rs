//! The shop's business profile, served at `/.well-known/ucp`: the protocol
//! version, where each service is reached, the capabilities the shop
//! implements, and the keys its checkout signatures verify with.
//!
//! It names what answers: the checkout capability over REST and MCP, with its
//! fulfillment, discount, buyer consent and AP2 mandate extensions
//! (mandates as SD-JWT with key binding, `dc+sd-jwt`).

use serde_json::{Value, json};

use super::names::{CHECKOUT_CAPABILITIES, REST_PREFIX, UCP_MCP_PATH, UCP_VERSION};
use super::negotiation::shop_capabilities;
use ap2::jws::Jwk;

/// The profile of the shop at `origin` (an absolute URL, no path): its
/// REST service at `<origin>/ucp`, its MCP service at `<origin>/ucp/mcp`.
pub fn business_profile(origin: &str, keys: &[Jwk]) -> Value {
    let spec = |page: &str| format!("https://ucp.dev/{UCP_VERSION}/specification/{page}");
    let schema = |path: &str| format!("https://ucp.dev/{UCP_VERSION}/{path}");
    let capabilities: serde_json::Map<String, Value> = shop_capabilities()
        .map(|name| {
            let short = name.trim_start_matches("dev.ucp.shopping.");
            let (page, file) = match short {
                "ap2_mandate" => ("ap2-mandates".to_owned(), short.to_owned()),
                "buyer_consent" => ("buyer-consent".to_owned(), short.to_owned()),
                "catalog.search" => ("catalog/search".to_owned(), "catalog_search".to_owned()),
                "catalog.lookup" => ("catalog/lookup".to_owned(), "catalog_lookup".to_owned()),
                _ => (short.to_owned(), short.to_owned()),
            };
            let mut entry = json!({
                "version": UCP_VERSION,
                "spec": spec(&page),
                "schema": schema(&format!("schemas/shopping/{file}.json")),
            });
            if CHECKOUT_CAPABILITIES.contains(&name) && short != "checkout" {
                entry["extends"] = json!("dev.ucp.shopping.checkout");
            }
            if short == "ap2_mandate" {
                entry["config"] = json!({ "vp_formats_supported": { "dc+sd-jwt": {} } });
            }
            (name.to_owned(), json!([entry]))
        })
        .collect();
    json!({
        "ucp": {
            "version": UCP_VERSION,
            "services": {
                "dev.ucp.shopping": [{
                    "version": UCP_VERSION,
                    "spec": spec("overview"),
                    "transport": "rest",
                    "endpoint": format!("{origin}{REST_PREFIX}"),
                    "schema": schema("services/shopping/rest.openapi.json"),
                }, {
                    "version": UCP_VERSION,
                    "spec": spec("overview"),
                    "transport": "mcp",
                    "endpoint": format!("{origin}{UCP_MCP_PATH}"),
                    "schema": schema("services/shopping/mcp.openrpc.json"),
                }],
            },
            "capabilities": capabilities,
            "payment_handlers": {},
        },
        "keys": keys,
    })
}
