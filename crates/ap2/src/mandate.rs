//! The shopper's checkout mandate (AP2): proof, signed on the shopper's
//! own device, that they consented to exactly one signed checkout.
//!
//! It is an SD-JWT with key binding (RFC 9901), ES256 throughout:
//! `<issuer-signed JWT>~[<disclosure>~]*<KB-JWT>`.
//!
//! - The issuer-signed JWT (`typ` `dc+sd-jwt`) is signed by the device key
//!   the shop bound to the user, named by the `kid` the shop gave it. Its
//!   claims: `iat` and `exp` (seconds), `cnf.jwk` (that same key), and
//!   `checkout`: the full checkout the shopper approved, with the
//!   merchant's `ap2.merchant_authorization`.
//! - The KB-JWT (`typ` `kb+jwt`) is signed by the `cnf` key: `iat`, `aud`
//!   (the shop's origin), `nonce` (the checkout's id) and `sd_hash` (the
//!   SHA-256 of everything before it), so it binds this presentation to
//!   this shop and this checkout.
//!
//! [`sign`] is the platform's side; [`verify`] the business's, which then
//! holds the checkout inside to the merchant's own signature and to the
//! session's current terms.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::jws::{self, Jwk, KeyError, SignatureError, SigningKey};

/// The issuer-signed JWT's type.
pub const MANDATE_TYPE: &str = "dc+sd-jwt";

/// The key binding JWT's type.
pub const KEY_BINDING_TYPE: &str = "kb+jwt";

/// How old a key binding may be: the shopper approved moments before.
pub const KEY_BINDING_MAX_AGE_SECS: i64 = 10 * 60;

/// How far ahead of the verifier's clock a device's may run.
const CLOCK_SKEW_SECS: i64 = 60;

/// Why a mandate was not accepted, each as precise as the check that
/// failed; [`MandateFault::kind`] groups them as the standard's codes do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MandateFault {
    #[error("not an SD-JWT with key binding")]
    NotKeyBound,
    #[error("the issuer-signed part names no device key (kid)")]
    NoKeyId,
    #[error("the device key {0} is not bound to this user")]
    UnknownDevice(String),
    #[error("the issuer-signed part: {0}")]
    IssuerSignature(SignatureError),
    #[error("cnf.jwk is missing or is not the key that signed the mandate")]
    ConfirmationKey,
    #[error("only sha-256 is accepted as _sd_alg")]
    DigestAlgorithm,
    #[error("the mandate has no exp")]
    NoExpiry,
    #[error("the mandate expired")]
    Expired,
    #[error("the key binding: {0}")]
    BindingSignature(SignatureError),
    #[error("the key binding has no iat")]
    BindingNoIssueTime,
    #[error("the key binding was issued in the future")]
    BindingFromTheFuture,
    #[error("the key binding is older than {KEY_BINDING_MAX_AGE_SECS} seconds")]
    BindingTooOld,
    #[error("sd_hash does not match what was presented")]
    PresentationHash,
    #[error("the mandate is made out to {0}, not to this shop")]
    Audience(String),
    #[error("the mandate holds no checkout")]
    NoCheckout,
    #[error("the key binding's nonce is not the checkout in the mandate")]
    Nonce,
}

/// The standard's grouping of a [`MandateFault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `mandate_invalid_signature`: not made or signed as it must be.
    InvalidSignature,
    /// `mandate_expired`.
    Expired,
    /// `mandate_scope_mismatch`: valid, but for another shop or checkout.
    ScopeMismatch,
}

impl MandateFault {
    pub fn kind(&self) -> FaultKind {
        match self {
            Self::Expired | Self::BindingTooOld => FaultKind::Expired,
            Self::Audience(_) | Self::NoCheckout | Self::Nonce => FaultKind::ScopeMismatch,
            _ => FaultKind::InvalidSignature,
        }
    }
}

/// A mandate whose signatures, binding and times hold.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedMandate {
    /// The checkout the shopper approved, as they saw it.
    pub checkout: Value,
    /// The id of the device key that signed it.
    pub device: String,
    /// The SHA-256 (base64url) of the whole presentation: what makes a
    /// second use of the same mandate recognisable.
    pub digest: String,
}

/// The two parts of a presentation: everything up to and including the
/// last `~`, and the key binding after it.
fn split(presentation: &str) -> Result<(&str, &str, &str), MandateFault> {
    let (before, key_binding) = presentation
        .rsplit_once('~')
        .ok_or(MandateFault::NotKeyBound)?;
    let issuer_jwt = before.split('~').next().unwrap_or_default();
    if key_binding.is_empty() || issuer_jwt.is_empty() {
        return Err(MandateFault::NotKeyBound);
    }
    Ok((&presentation[..before.len() + 1], issuer_jwt, key_binding))
}

/// The id of the device key `presentation` says signed it, unverified:
/// what the verifier looks the key up by before [`verify`].
pub fn device_key_id(presentation: &str) -> Result<String, MandateFault> {
    let (_, issuer_jwt, _) = split(presentation)?;
    let header = jws::compact_header(issuer_jwt).map_err(MandateFault::IssuerSignature)?;
    header["kid"]
        .as_str()
        .map(str::to_owned)
        .ok_or(MandateFault::NoKeyId)
}

/// Checks `presentation` at `now_secs` for a checkout at `audience` (the
/// shop's origin), signed by `device` (the user's bound key that
/// [`device_key_id`] named).
pub fn verify(
    presentation: &str,
    now_secs: i64,
    audience: &str,
    device: &Jwk,
) -> Result<VerifiedMandate, MandateFault> {
    let (presented, issuer_jwt, key_binding) = split(presentation)?;
    let kid = device_key_id(presentation)?;
    if kid != device.kid {
        return Err(MandateFault::UnknownDevice(kid));
    }
    let claims = jws::verify_compact(issuer_jwt, device, MANDATE_TYPE)
        .map_err(MandateFault::IssuerSignature)?;
    let bound: Jwk = serde_json::from_value(claims["cnf"]["jwk"].clone())
        .map_err(|_| MandateFault::ConfirmationKey)?;
    if !bound.same_key(device) {
        return Err(MandateFault::ConfirmationKey);
    }
    if claims.get("_sd_alg").is_some_and(|alg| alg != "sha-256") {
        return Err(MandateFault::DigestAlgorithm);
    }
    let expires = claims["exp"].as_i64().ok_or(MandateFault::NoExpiry)?;
    if now_secs >= expires {
        return Err(MandateFault::Expired);
    }

    let binding = jws::verify_compact(key_binding, &bound, KEY_BINDING_TYPE)
        .map_err(MandateFault::BindingSignature)?;
    let issued = binding["iat"]
        .as_i64()
        .ok_or(MandateFault::BindingNoIssueTime)?;
    if issued > now_secs + CLOCK_SKEW_SECS {
        return Err(MandateFault::BindingFromTheFuture);
    }
    if now_secs - issued > KEY_BINDING_MAX_AGE_SECS {
        return Err(MandateFault::BindingTooOld);
    }
    if binding["sd_hash"] != presentation_hash(presented).as_str() {
        return Err(MandateFault::PresentationHash);
    }
    if binding["aud"] != audience {
        return Err(MandateFault::Audience(binding["aud"].to_string()));
    }
    let checkout = claims
        .get("checkout")
        .filter(|c| c.is_object())
        .cloned()
        .ok_or(MandateFault::NoCheckout)?;
    if binding["nonce"] != checkout["id"] {
        return Err(MandateFault::Nonce);
    }
    Ok(VerifiedMandate {
        checkout,
        device: kid,
        digest: digest(presentation),
    })
}

/// The SHA-256 (base64url) of a presentation: how a second use of the
/// same mandate is recognised.
pub fn digest(presentation: &str) -> String {
    B64.encode(Sha256::digest(presentation.as_bytes()))
}

fn presentation_hash(presented: &str) -> String {
    B64.encode(Sha256::digest(presented.as_bytes()))
}

/// The platform's side: a mandate `device` (under the id its shop gave it)
/// signs over `checkout` for `audience`, issued and expiring at these
/// times (seconds).
pub fn sign(
    device: &SigningKey,
    checkout: &Value,
    audience: &str,
    issued: i64,
    expires: i64,
) -> Result<String, KeyError> {
    let claims = serde_json::json!({
        "iat": issued,
        "exp": expires,
        "_sd_alg": "sha-256",
        "cnf": { "jwk": device.public_jwk() },
        "checkout": checkout,
    });
    let presented = format!("{}~", device.sign_compact(MANDATE_TYPE, &claims)?);
    let binding = serde_json::json!({
        "iat": issued,
        "aud": audience,
        "nonce": checkout["id"],
        "sd_hash": presentation_hash(&presented),
    });
    Ok(format!(
        "{presented}{}",
        device.sign_compact(KEY_BINDING_TYPE, &binding)?
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SHOP: &str = "https://shop.example";
    const NOW: i64 = 1_800_000_000;

    fn checkout() -> Value {
        json!({"id": "chk_1", "currency": "CNY", "totals": [{"type": "total", "amount": 999_900}],
               "ap2": {"merchant_authorization": "h..s"}})
    }

    fn device() -> SigningKey {
        SigningKey::generate().unwrap().0.with_kid("device-1")
    }

    #[test]
    fn a_mandate_the_device_signed_verifies_and_names_its_checkout() {
        let key = device();
        let mandate = sign(&key, &checkout(), SHOP, NOW, NOW + 600).unwrap();
        assert_eq!(device_key_id(&mandate).unwrap(), "device-1");
        let verified = verify(&mandate, NOW + 5, SHOP, &key.public_jwk()).unwrap();
        assert_eq!(verified.checkout, checkout());
        assert_eq!(verified.device, "device-1");
        assert_eq!(verified.digest, digest(&mandate));
    }

    #[test]
    fn another_key_another_shop_or_a_late_presentation_is_refused() {
        let key = device();
        let mandate = sign(&key, &checkout(), SHOP, NOW, NOW + 600).unwrap();
        let stranger = SigningKey::generate().unwrap().0.with_kid("device-1");
        assert!(matches!(
            verify(&mandate, NOW, SHOP, &stranger.public_jwk()),
            Err(MandateFault::IssuerSignature(SignatureError::Invalid))
        ));
        assert_eq!(
            verify(&mandate, NOW, "https://other.example", &key.public_jwk()).map(|_| ()),
            Err(MandateFault::Audience("\"https://shop.example\"".into()))
        );
        assert_eq!(
            verify(&mandate, NOW + 600, SHOP, &key.public_jwk())
                .unwrap_err()
                .kind(),
            FaultKind::Expired
        );
        let late = sign(&key, &checkout(), SHOP, NOW, NOW + 3600).unwrap();
        assert_eq!(
            verify(
                &late,
                NOW + KEY_BINDING_MAX_AGE_SECS + 1,
                SHOP,
                &key.public_jwk()
            ),
            Err(MandateFault::BindingTooOld)
        );
    }

    #[test]
    fn a_key_binding_moved_onto_another_mandate_is_refused() {
        let key = device();
        let first = sign(&key, &checkout(), SHOP, NOW, NOW + 600).unwrap();
        let mut other = checkout();
        other["totals"][0]["amount"] = json!(1);
        let second = sign(&key, &other, SHOP, NOW, NOW + 600).unwrap();
        let (first_issued, _) = first.rsplit_once('~').unwrap();
        let (_, second_binding) = second.rsplit_once('~').unwrap();
        let spliced = format!("{first_issued}~{second_binding}");
        assert_eq!(
            verify(&spliced, NOW, SHOP, &key.public_jwk()),
            Err(MandateFault::PresentationHash)
        );
        assert_eq!(device_key_id("no-tilde"), Err(MandateFault::NotKeyBound));
    }
}
