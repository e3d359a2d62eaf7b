//! The shop's business profile, served at `/.well-known/ucp`: the protocol
//! version, where each service is reached, the capabilities the shop
//! implements, and the keys its checkout signatures verify with.
//!
//! It names what answers: the checkout capability over REST and MCP, with its
//! fulfillment, discount, buyer consent and AP2 mandate extensions
//! (mandates as SD-JWT with key binding, `dc+sd-jwt`).

use serde_json::{Value, json};

use super::names::{
    CHECKOUT_CAPABILITIES, IDENTITY_LINKING, REST_PREFIX, UCP_MCP_PATH, UCP_VERSION,
};
use super::negotiation::shop_capabilities;
use ap2::jws::Jwk;

/// The profile of the shop at `origin` (an absolute URL, no path): its
/// REST service at `<origin>/ucp`, its MCP service at `<origin>/ucp/mcp`.
/// A shop that serves signed-in users (`signs_in`) declares identity
/// linking: a platform finds the authorization server in the commerce
/// service's protected resource metadata (RFC 9728) and links the shopper
/// with the authorization code flow and PKCE. Every operation of the
/// service takes a signed-in user's token, audience-bound to the service;
/// the shop gates nothing finer by scope, so `config.scopes` names none.
pub fn business_profile(origin: &str, keys: &[Jwk], signs_in: bool) -> Value {
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
    let mut capabilities = capabilities;
    if signs_in {
        capabilities.insert(
            IDENTITY_LINKING.to_owned(),
            json!([{
                "version": UCP_VERSION,
                "spec": spec("common/identity-linking"),
                "schema": schema("schemas/common/identity_linking.json"),
                "config": { "scopes": {} },
            }]),
        );
    }
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
