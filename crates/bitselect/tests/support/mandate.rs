//! A shopper's device in tests: a P-256 key, under the id the shop gives
//! it when bound, and the checkout mandates it signs (`ap2::mandate::sign`,
//! an SD-JWT with key binding), the way the app makes them when the
//! shopper approves a card.

use ap2::jws::{Jwk, SigningKey};
use ap2::mandate;
use serde_json::Value;

/// Where the tests' shop says it is: the audience of their mandates.
pub const SHOP_ORIGIN: &str = "https://shop.example";

pub struct Device {
    pub key: SigningKey,
}

impl Device {
    pub fn new() -> Self {
        Self {
            key: {
                let key = SigningKey::generate().expect("a device key").0;
                let id = bitselect::ucp::names::key_id(key.kid());
                key.with_kid(id)
            },
        }
    }

    pub fn jwk(&self) -> Jwk {
        self.key.public_jwk()
    }

    /// A mandate over `checkout` for [`SHOP_ORIGIN`], signed at `now_ms`
    /// and good for ten minutes.
    pub fn mandate(&self, checkout: &Value, now_ms: i64) -> String {
        self.mandate_with(checkout, SHOP_ORIGIN, now_ms / 1000, now_ms / 1000 + 600)
    }

    /// A mandate with its audience, issue and expiry times (seconds) given.
    pub fn mandate_with(
        &self,
        checkout: &Value,
        audience: &str,
        issued: i64,
        expires: i64,
    ) -> String {
        mandate::sign(&self.key, checkout, audience, issued, expires).expect("signed")
    }
}
