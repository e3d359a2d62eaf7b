//! The standard's names as the shop uses them: the protocol version, the
//! currency, each capability's name, and where each service is served.
//! A leaf: every other part of the binding reads its names here.

/// The protocol version the shop speaks.
pub const UCP_VERSION: &str = "2026-04-08";

/// The shop sells in renminbi; amounts are fen, the currency's minor unit.
pub const CURRENCY: &str = "CNY";

/// The checkout capability.
pub const CHECKOUT: &str = "dev.ucp.shopping.checkout";

/// The buyer consent extension.
pub const BUYER_CONSENT: &str = "dev.ucp.shopping.buyer_consent";

/// The capabilities a checkout answer is shaped by. AP2 mandates are
/// always on: every checkout is signed, and none completes without the
/// shopper's mandate.
pub const CHECKOUT_CAPABILITIES: [&str; 5] = [
    CHECKOUT,
    "dev.ucp.shopping.fulfillment",
    "dev.ucp.shopping.discount",
    BUYER_CONSENT,
    "dev.ucp.shopping.ap2_mandate",
];

/// The order capability.
pub const ORDER: &str = "dev.ucp.shopping.order";

/// The cart capability.
pub const CART: &str = "dev.ucp.shopping.cart";

/// Catalogue search.
pub const CATALOG_SEARCH: &str = "dev.ucp.shopping.catalog.search";

/// Catalogue lookup (`lookup_catalog`, `get_product`).
pub const CATALOG_LOOKUP: &str = "dev.ucp.shopping.catalog.lookup";

/// Identity linking (OAuth), declared by a shop that signs users in.
pub const IDENTITY_LINKING: &str = "dev.ucp.common.identity_linking";

/// Where the business profile is served.
pub const PROFILE_PATH: &str = "/.well-known/ucp";

/// Where the REST service is mounted: its endpoint in the profile is the
/// shop's origin followed by this.
pub const REST_PREFIX: &str = "/ucp";

/// Where the MCP binding is served.
pub const UCP_MCP_PATH: &str = "/ucp/mcp";

/// Where an order is served, under the shop's origin: `<path>/<order no>`.
pub const ORDERS_PATH: &str = "/ucp/orders";

/// The id the shop gives a P-256 key (its own or a shopper's device key),
/// from the key's RFC 7638 thumbprint: the same at every instance.
pub fn key_id(thumbprint: &str) -> String {
    format!("bitselect-{thumbprint}")
}
