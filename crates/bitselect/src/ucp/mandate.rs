//! The shopper's checkout mandate (AP2): proof, signed on the shopper's
//! own device, that they consented to exactly one signed checkout.
//!
//! It is an SD-JWT with key binding (RFC 9901), ES256 throughout:
//! `<issuer-signed JWT>~[<disclosure>~]*<KB-JWT>`.
//!
//! - The issuer-signed JWT (`typ` `dc+sd-jwt`) is signed by the device key
//!   the shop bound to the user ([`super::devices`]), named by its `kid`.
//!   Its claims: `iat` and `exp` (seconds), `cnf.jwk` (that same key), and
//!   `checkout`: the full checkout the shopper approved, with the
//!   merchant's `ap2.merchant_authorization`.
//! - The KB-JWT (`typ` `kb+jwt`) is signed by the `cnf` key: `iat`, `aud`
//!   (the shop's origin), `nonce` (the checkout's id) and `sd_hash` (the
//!   SHA-256 of everything before it), so it binds this presentation to
//!   this shop and this checkout.
//!
//! Verifying it here checks the signatures, the binding and the times; the
//! checkout inside it is then held to the merchant's own signature and to
//! the session's current terms ([`super::complete`]).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::jws::{self, Jwk, KeyError, SignatureError, SigningKey};
use crate::clock::Millis;
use crate::error::{MandateRefusal, Result, ShopError};

/// The issuer-signed JWT's type.
pub const MANDATE_TYPE: &str = "dc+sd-jwt";

/// The key binding JWT's type.
pub const KEY_BINDING_TYPE: &str = "kb+jwt";

/// How old a key binding may be: the shopper approved moments before.
pub const KEY_BINDING_MAX_AGE_SECS: i64 = 10 * 60;

/// How far ahead of the shop's clock a device's may run.
const CLOCK_SKEW_SECS: i64 = 60;

/// A mandate whose signatures, binding and times hold.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedMandate {
    /// The checkout the shopper approved, as they saw it.
    pub checkout: Value,
    /// The device key that signed it.
    pub device: String,
    /// The SHA-256 (base64url) of the whole presentation: what makes a
    /// second use of the same mandate recognisable.
    pub digest: String,
}

fn invalid(why: impl std::fmt::Display) -> ShopError {
    MandateRefusal::InvalidSignature(why.to_string()).into()
}

fn mismatch(why: impl Into<String>) -> ShopError {
    MandateRefusal::ScopeMismatch(why.into()).into()
}

/// Checks `presentation` at `now` for a checkout at `audience` (the shop's
/// origin): `device_key` finds the user's bound key by its id (an error
/// when the user has no such key).
pub fn verify(
    presentation: &str,
    now: Millis,
    audience: &str,
    device_key: impl FnOnce(&str) -> Result<Jwk>,
) -> Result<VerifiedMandate> {
    let Some((presented, key_binding)) = presentation.rsplit_once('~') else {
        return Err(invalid("不是带密钥绑定的 SD-JWT"));
    };
    let issuer_jwt = presented.split('~').next().unwrap_or_default();
    if key_binding.is_empty() || issuer_jwt.is_empty() {
        return Err(invalid("缺少签发部分或密钥绑定"));
    }
    let header = jws::compact_header(issuer_jwt).map_err(invalid)?;
    let kid = header["kid"]
        .as_str()
        .ok_or_else(|| invalid("签发部分没有指明设备密钥（kid）"))?;
    let device =
        device_key(kid).map_err(|_| invalid(format!("设备密钥 {kid} 没有绑定到这个用户")))?;
    let claims = jws::verify_compact(issuer_jwt, &device, MANDATE_TYPE).map_err(signature)?;

    let bound: Jwk = serde_json::from_value(claims["cnf"]["jwk"].clone())
        .map_err(|_| invalid("没有 cnf.jwk"))?;
    if (bound.x.as_str(), bound.y.as_str()) != (device.x.as_str(), device.y.as_str()) {
        return Err(invalid("cnf.jwk 不是签发它的设备密钥"));
    }
    if claims.get("_sd_alg").is_some_and(|alg| alg != "sha-256") {
        return Err(invalid("只接受 sha-256 的 _sd_alg"));
    }
    let now_secs = now / 1000;
    let expires = claims["exp"].as_i64().ok_or_else(|| invalid("没有 exp"))?;
    if now_secs >= expires {
        return Err(MandateRefusal::Expired.into());
    }

    let binding = jws::verify_compact(key_binding, &bound, KEY_BINDING_TYPE).map_err(signature)?;
    let issued = binding["iat"]
        .as_i64()
        .ok_or_else(|| invalid("密钥绑定没有 iat"))?;
    if issued > now_secs + CLOCK_SKEW_SECS {
        return Err(invalid("密钥绑定的签发时间在未来"));
    }
    if now_secs - issued > KEY_BINDING_MAX_AGE_SECS {
        return Err(MandateRefusal::Expired.into());
    }
    let expected_hash = B64.encode(Sha256::digest(format!("{presented}~").as_bytes()));
    if binding["sd_hash"] != expected_hash.as_str() {
        return Err(invalid("sd_hash 与出示的内容不符"));
    }
    if binding["aud"] != audience {
        return Err(mismatch(format!(
            "授权给的是 {}，不是本商城",
            binding["aud"]
        )));
    }
    let checkout = claims
        .get("checkout")
        .filter(|c| c.is_object())
        .cloned()
        .ok_or_else(|| mismatch("授权里没有结账"))?;
    if binding["nonce"] != checkout["id"] {
        return Err(mismatch("密钥绑定的 nonce 不是授权里的结账"));
    }
    Ok(VerifiedMandate {
        checkout,
        device: kid.to_owned(),
        digest: digest(presentation),
    })
}

/// The SHA-256 (base64url) of a presentation: how a second use of the
/// same mandate is recognised.
pub fn digest(presentation: &str) -> String {
    B64.encode(Sha256::digest(presentation.as_bytes()))
}

/// The platform's side of the format: a mandate `device` signs over
/// `checkout` for `audience`, issued and expiring at these times
/// (seconds). What an app makes when its shopper approves; the shop's
/// tests, benchmarks and tools make it here.
pub fn sign(
    device: &SigningKey,
    checkout: &Value,
    audience: &str,
    issued: i64,
    expires: i64,
) -> std::result::Result<String, KeyError> {
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
        "sd_hash": B64.encode(Sha256::digest(presented.as_bytes())),
    });
    Ok(format!(
        "{presented}{}",
        device.sign_compact(KEY_BINDING_TYPE, &binding)?
    ))
}

fn signature(error: SignatureError) -> ShopError {
    invalid(error)
}
