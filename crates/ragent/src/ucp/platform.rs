//! The app's own platform profile: the document its publisher hosts and
//! every request to a merchant names (`meta["ucp-agent"].profile`), so the
//! merchant can negotiate what both speak. It holds no key of the
//! shopper's: those are bound per shopper and device. The document to host
//! is committed as `docs/ucp-platform-profile.json`, checked by a test
//! (`RAGENT_WRITE_PROFILE=1 cargo test -p ragent platform_profile` writes
//! it again), and served at `settings::DEFAULT_PLATFORM_PROFILE`.

use serde_json::{Value, json};

use super::profile::{AP2_MANDATE, CHECKOUT, UCP_VERSION};

/// The capabilities the app handles: checkout with its fulfillment,
/// discount and mandate extensions, and orders.
pub const PLATFORM_CAPABILITIES: [&str; 5] = [
    CHECKOUT,
    "dev.ucp.shopping.fulfillment",
    "dev.ucp.shopping.discount",
    AP2_MANDATE,
    "dev.ucp.shopping.order",
];

/// The platform profile document: each service and capability with the
/// specification and schema it follows, as the standard's profile schema
/// requires of a platform.
pub fn platform_profile() -> Value {
    let spec = |page: &str| format!("https://ucp.dev/{UCP_VERSION}/specification/{page}");
    let schema = |path: &str| format!("https://ucp.dev/{UCP_VERSION}/{path}");
    let capabilities: serde_json::Map<String, Value> = PLATFORM_CAPABILITIES
        .iter()
        .map(|name| {
            let short = name.trim_start_matches("dev.ucp.shopping.");
            let page = if *name == AP2_MANDATE {
                "ap2-mandates"
            } else {
                short
            };
            let mut entry = json!({
                "version": UCP_VERSION,
                "spec": spec(page),
                "schema": schema(&format!("schemas/shopping/{short}.json")),
            });
            if *name == AP2_MANDATE {
                entry["config"] = json!({ "vp_formats_supported": { "dc+sd-jwt": {} } });
            }
            ((*name).to_owned(), json!([entry]))
        })
        .collect();
    json!({
        "ucp": {
            "version": UCP_VERSION,
            "services": { "dev.ucp.shopping": [{
                "version": UCP_VERSION,
                "spec": spec("overview"),
                "transport": "mcp",
                "schema": schema("services/shopping/mcp.openrpc.json"),
            }] },
            "capabilities": capabilities,
            "payment_handlers": {},
        },
    })
}

/// The request metadata naming the profile at `profile_url`, with the
/// call's idempotency key when it has one.
pub fn request_meta(profile_url: &str, idempotency_key: Option<&str>) -> Value {
    let mut meta = json!({ "ucp-agent": { "profile": profile_url } });
    if let Some(key) = idempotency_key {
        meta["idempotency-key"] = json!(key);
    }
    meta
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_committed_platform_profile_is_the_one_the_app_speaks() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ucp-platform-profile.json");
        let fresh = format!(
            "{}\n",
            serde_json::to_string_pretty(&platform_profile()).unwrap_or_default()
        );
        if std::env::var_os("RAGENT_WRITE_PROFILE").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            committed, fresh,
            "docs/ucp-platform-profile.json is stale: run RAGENT_WRITE_PROFILE=1 cargo test -p ragent platform_profile"
        );
    }
}
