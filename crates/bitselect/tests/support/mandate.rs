//! A shopper's device in tests: a P-256 key, and the checkout mandates it
//! signs (an SD-JWT with key binding, as `bitselect::ucp::mandate` reads
//! them), the way the app makes them when the shopper approves a card.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bitselect::ucp::jws::{Jwk, SigningKey};
use bitselect::ucp::mandate::{KEY_BINDING_TYPE, MANDATE_TYPE};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Where the tests' shop says it is: the audience of their mandates.
pub const SHOP_ORIGIN: &str = "https://shop.example";

pub struct Device {
    pub key: SigningKey,
}

impl Device {
    pub fn new() -> Self {
        Self {
            key: SigningKey::generate().expect("a device key").0,
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
        let claims = json!({
            "iat": issued,
            "exp": expires,
            "_sd_alg": "sha-256",
            "cnf": { "jwk": self.jwk() },
            "checkout": checkout,
        });
        let issuer_jwt = self
            .key
            .sign_compact(MANDATE_TYPE, &claims)
            .expect("signed");
        let presented = format!("{issuer_jwt}~");
        let sd_hash = URL_SAFE_NO_PAD.encode(Sha256::digest(presented.as_bytes()));
        let binding = json!({
            "iat": issued,
            "aud": audience,
            "nonce": checkout["id"],
            "sd_hash": sd_hash,
        });
        let key_binding = self
            .key
            .sign_compact(KEY_BINDING_TYPE, &binding)
            .expect("signed");
        format!("{presented}{key_binding}")
    }
}
