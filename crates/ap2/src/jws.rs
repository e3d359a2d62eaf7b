//! ES256 signatures (RFC 7515) over canonical JSON. Detached (appendix F):
//! how a merchant signs what it offers (`ap2.merchant_authorization` on a
//! checkout) so that anyone holding its published key can check, later and
//! elsewhere, that these are the terms it gave. Compact: the parts of a
//! shopper's mandate ([`crate::mandate`]).

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::jcs;

/// The one algorithm signed and verified here (the standard's required
/// one).
pub const ES256: &str = "ES256";

/// A P-256 public key as a JWK (RFC 7517), as profiles publish it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jwk {
    /// The key's id; a key sent in without one (a `cnf` key) reads as "".
    #[serde(default)]
    pub kid: String,
    pub kty: String,
    pub crv: String,
    pub x: String,
    pub y: String,
    #[serde(rename = "use", default, skip_serializing_if = "Option::is_none")]
    pub use_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
}

impl Jwk {
    /// This key's RFC 7638 thumbprint, shortened, when it is a well-formed
    /// P-256 public key: an id that follows from the key itself (the `kid`
    /// it came with is not trusted).
    pub fn thumbprint(&self) -> Option<String> {
        public_point(self)?;
        Some(thumbprint(&self.x, &self.y))
    }

    /// The public key `x`, `y` as a JWK with this `kid`, for signing.
    pub fn p256(kid: &str, x: &str, y: &str) -> Jwk {
        Jwk {
            kid: kid.to_owned(),
            kty: "EC".to_owned(),
            crv: "P-256".to_owned(),
            x: x.to_owned(),
            y: y.to_owned(),
            use_: Some("sig".to_owned()),
            alg: Some(ES256.to_owned()),
        }
    }

    /// Whether `other` is the same public key, whatever its `kid`.
    pub fn same_key(&self, other: &Jwk) -> bool {
        (
            self.kty.as_str(),
            self.crv.as_str(),
            self.x.as_str(),
            self.y.as_str(),
        ) == (
            other.kty.as_str(),
            other.crv.as_str(),
            other.x.as_str(),
            other.y.as_str(),
        )
    }
}

/// Why a signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the signature is not a detached JWS (header..signature)")]
    Malformed,
    #[error("the signature's algorithm {0} is not supported (only ES256 is)")]
    AlgorithmUnsupported(String),
    #[error("no published key has the id {0}")]
    KeyNotFound(String),
    #[error("the signature does not match the signed content")]
    Invalid,
}

impl SignatureError {
    /// The standard's error code for it.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed | Self::Invalid => "signature_invalid",
            Self::AlgorithmUnsupported(_) => "algorithm_unsupported",
            Self::KeyNotFound(_) => "key_not_found",
        }
    }
}

/// The key pair could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("signing key unusable: {0}")]
pub struct KeyError(String);

/// A private P-256 key and the id its public half is published under (its
/// thumbprint unless given another with [`SigningKey::with_kid`]).
pub struct SigningKey {
    kid: String,
    pair: EcdsaKeyPair,
    /// The public point's coordinates, base64url.
    x: String,
    y: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A compact JWS (`header.payload.signature`) of `payload`, its header
    /// `{"alg":"ES256","typ":typ,"kid":...}`.
    pub fn sign_compact(&self, typ: &str, payload: &Value) -> Result<String, KeyError> {
        let header = serde_json::json!({ "alg": ES256, "typ": typ, "kid": self.kid });
        let input = format!(
            "{}.{}",
            B64.encode(jcs::canonical(&header)),
            B64.encode(payload.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|e| KeyError(e.to_string()))?;
        Ok(format!("{input}.{}", B64.encode(signature.as_ref())))
    }

    /// A new random key, with its PKCS#8 document for storing.
    pub fn generate() -> Result<(Self, Vec<u8>), KeyError> {
        let document =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|e| KeyError(e.to_string()))?;
        let pkcs8 = document.as_ref().to_vec();
        Ok((Self::from_pkcs8(&pkcs8)?, pkcs8))
    }

    /// The key stored as `pkcs8`; its id is its public key's thumbprint.
    pub fn from_pkcs8(pkcs8: &[u8]) -> Result<Self, KeyError> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8)
            .map_err(|e| KeyError(e.to_string()))?;
        let (x, y) = coordinates(pair.public_key().as_ref())?;
        Ok(Self {
            kid: thumbprint(&x, &y),
            pair,
            x,
            y,
        })
    }

    /// The same key under the id `kid` (the one its verifier knows it by).
    pub fn with_kid(self, kid: impl Into<String>) -> Self {
        Self {
            kid: kid.into(),
            ..self
        }
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public half, as a profile publishes it.
    pub fn public_jwk(&self) -> Jwk {
        Jwk::p256(&self.kid, &self.x, &self.y)
    }

    /// The raw ES256 signature of `message`: `r || s`, 64 bytes (as JWS
    /// and HTTP message signatures carry it, not DER).
    pub fn sign_bytes(&self, message: &[u8]) -> Result<Vec<u8>, KeyError> {
        self.pair
            .sign(&SystemRandom::new(), message)
            .map(|signature| signature.as_ref().to_vec())
            .map_err(|e| KeyError(e.to_string()))
    }

    /// A detached JWS over the canonical form of `payload`:
    /// `<header>..<signature>`.
    pub fn sign_detached(&self, payload: &Value) -> Result<String, KeyError> {
        let header = serde_json::json!({ "alg": ES256, "kid": self.kid });
        let header = B64.encode(jcs::canonical(&header));
        let input = signing_input(&header, payload);
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|e| KeyError(e.to_string()))?;
        Ok(format!("{header}..{}", B64.encode(signature.as_ref())))
    }
}

/// Checks a detached JWS over `payload` against the published `keys`.
pub fn verify_detached(jws: &str, payload: &Value, keys: &[Jwk]) -> Result<(), SignatureError> {
    let mut parts = jws.split('.');
    let (Some(header), Some(""), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(SignatureError::Malformed);
    };
    #[derive(Deserialize)]
    struct Header {
        alg: String,
        kid: String,
    }
    let decoded: Header = B64
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(SignatureError::Malformed)?;
    if decoded.alg != ES256 {
        return Err(SignatureError::AlgorithmUnsupported(decoded.alg));
    }
    let key = keys
        .iter()
        .find(|key| key.kid == decoded.kid)
        .ok_or_else(|| SignatureError::KeyNotFound(decoded.kid.clone()))?;
    let point = public_point(key).ok_or(SignatureError::Invalid)?;
    let signature = B64
        .decode(signature)
        .map_err(|_| SignatureError::Malformed)?;
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
        .verify(signing_input(header, payload).as_bytes(), &signature)
        .map_err(|_| SignatureError::Invalid)
}

/// Checks a raw ES256 signature (`r || s`) of `message` with `key`.
pub fn verify_bytes(key: &Jwk, message: &[u8], signature: &[u8]) -> Result<(), SignatureError> {
    let point = public_point(key).ok_or(SignatureError::Invalid)?;
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
        .verify(message, signature)
        .map_err(|_| SignatureError::Invalid)
}

/// `checkout` with the merchant's signature set in it as
/// `ap2.merchant_authorization` (any value there before is replaced).
pub fn sign_checkout(key: &SigningKey, mut checkout: Value) -> Result<Value, KeyError> {
    let signature = key.sign_detached(&checkout_payload(&checkout))?;
    let Some(members) = checkout.as_object_mut() else {
        return Err(KeyError("only a JSON object can be signed".to_owned()));
    };
    let ap2 = members
        .entry("ap2")
        .or_insert_with(|| serde_json::json!({}));
    if !ap2.is_object() {
        *ap2 = serde_json::json!({});
    }
    ap2["merchant_authorization"] = Value::String(signature);
    Ok(checkout)
}

/// The header of a compact JWS (`header.payload.signature`), unverified:
/// what says which key to verify it with.
pub fn compact_header(token: &str) -> Result<Value, SignatureError> {
    let header = token.split('.').next().ok_or(SignatureError::Malformed)?;
    decode_json(header)
}

/// The payload of a compact JWS signed ES256 by `key`, if its header has
/// type `typ` and the signature holds.
pub fn verify_compact(token: &str, key: &Jwk, typ: &str) -> Result<Value, SignatureError> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(SignatureError::Malformed);
    };
    let decoded = decode_json(header)?;
    let alg = decoded["alg"].as_str().unwrap_or_default();
    if alg != ES256 {
        return Err(SignatureError::AlgorithmUnsupported(alg.to_owned()));
    }
    if decoded["typ"] != typ {
        return Err(SignatureError::Malformed);
    }
    let point = public_point(key).ok_or(SignatureError::Invalid)?;
    let signature = B64
        .decode(signature)
        .map_err(|_| SignatureError::Malformed)?;
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
        .verify(format!("{header}.{payload}").as_bytes(), &signature)
        .map_err(|_| SignatureError::Invalid)?;
    decode_json(payload)
}

fn decode_json(part: &str) -> Result<Value, SignatureError> {
    B64.decode(part)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(SignatureError::Malformed)
}

/// What a checkout's merchant signature covers: the checkout without its
/// `ap2` member, so that the signature does not sign itself.
pub fn checkout_payload(checkout: &Value) -> Value {
    let mut payload = checkout.clone();
    if let Some(members) = payload.as_object_mut() {
        members.remove("ap2");
    }
    payload
}

fn signing_input(encoded_header: &str, payload: &Value) -> String {
    format!(
        "{encoded_header}.{}",
        B64.encode(jcs::canonical(payload).as_bytes())
    )
}

/// `x` and `y`, base64url, of an uncompressed P-256 point (`04 || x || y`).
fn coordinates(point: &[u8]) -> Result<(String, String), KeyError> {
    match point {
        [4, rest @ ..] if rest.len() == 64 => {
            let (x, y) = rest.split_at(32);
            Ok((B64.encode(x), B64.encode(y)))
        }
        _ => Err(KeyError("not an uncompressed P-256 point".to_owned())),
    }
}

fn public_point(key: &Jwk) -> Option<Vec<u8>> {
    if key.kty != "EC" || key.crv != "P-256" {
        return None;
    }
    let x = B64.decode(&key.x).ok().filter(|x| x.len() == 32)?;
    let y = B64.decode(&key.y).ok().filter(|y| y.len() == 32)?;
    Some([&[4u8][..], &x, &y].concat())
}

/// The key's JWK thumbprint (RFC 7638), shortened: an id that follows from
/// the key itself, so programs that load the same key agree on it.
fn thumbprint(x: &str, y: &str) -> String {
    let members = serde_json::json!({ "crv": "P-256", "kty": "EC", "x": x, "y": y });
    let digest = Sha256::digest(jcs::canonical(&members).as_bytes());
    B64.encode(digest)[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checkout() -> Value {
        json!({
            "id": "chk_1",
            "status": "ready_for_complete",
            "currency": "CNY",
            "totals": [{"type": "subtotal", "amount": 999_900}, {"type": "total", "amount": 999_900}],
        })
    }

    #[test]
    fn a_signed_checkout_verifies_with_the_published_key() {
        let (key, _) = SigningKey::generate().unwrap();
        let signature = key.sign_detached(&checkout()).unwrap();
        assert!(signature.contains(".."), "{signature}");
        assert_eq!(
            verify_detached(&signature, &checkout(), &[key.public_jwk()]),
            Ok(())
        );
    }

    #[test]
    fn a_changed_total_breaks_the_signature() {
        let (key, _) = SigningKey::generate().unwrap();
        let signature = key.sign_detached(&checkout()).unwrap();
        let mut altered = checkout();
        altered["totals"][1]["amount"] = json!(1);
        assert_eq!(
            verify_detached(&signature, &altered, &[key.public_jwk()]),
            Err(SignatureError::Invalid)
        );
    }

    #[test]
    fn the_signature_follows_the_content_not_its_spelling() {
        let (key, _) = SigningKey::generate().unwrap();
        let signature = key.sign_detached(&checkout()).unwrap();
        let respelled: Value =
            serde_json::from_str(&serde_json::to_string_pretty(&checkout()).unwrap()).unwrap();
        assert_eq!(
            verify_detached(&signature, &respelled, &[key.public_jwk()]),
            Ok(())
        );
    }

    #[test]
    fn another_keys_signature_is_not_found_and_a_forged_kid_does_not_verify() {
        let (mine, _) = SigningKey::generate().unwrap();
        let (theirs, _) = SigningKey::generate().unwrap();
        let signature = theirs.sign_detached(&checkout()).unwrap();
        assert_eq!(
            verify_detached(&signature, &checkout(), &[mine.public_jwk()]),
            Err(SignatureError::KeyNotFound(theirs.kid().to_owned()))
        );
        let mut posing = theirs.public_jwk();
        posing.x = mine.public_jwk().x;
        posing.y = mine.public_jwk().y;
        assert_eq!(
            verify_detached(&signature, &checkout(), &[posing]),
            Err(SignatureError::Invalid)
        );
    }

    #[test]
    fn another_algorithm_or_a_payload_inside_is_refused() {
        let (key, _) = SigningKey::generate().unwrap();
        let signature = key.sign_detached(&checkout()).unwrap();
        let (_, rest) = signature.split_once("..").unwrap();
        let none = B64.encode(format!(r#"{{"alg":"none","kid":"{}"}}"#, key.kid()));
        assert_eq!(
            verify_detached(&format!("{none}..{rest}"), &checkout(), &[key.public_jwk()]),
            Err(SignatureError::AlgorithmUnsupported("none".to_owned()))
        );
        let (header, _) = signature.split_once("..").unwrap();
        let attached = format!("{header}.e30.{rest}");
        assert_eq!(
            verify_detached(&attached, &checkout(), &[key.public_jwk()]),
            Err(SignatureError::Malformed)
        );
    }

    #[test]
    fn a_stored_key_reads_back_with_the_same_id_and_public_half() {
        let (key, pkcs8) = SigningKey::generate().unwrap();
        let again = SigningKey::from_pkcs8(&pkcs8).unwrap();
        assert_eq!(again.kid(), key.kid());
        assert_eq!(again.public_jwk(), key.public_jwk());
        assert!(SigningKey::from_pkcs8(b"not a key").is_err());
    }

    #[test]
    fn the_checkout_payload_leaves_out_ap2_only() {
        let mut signed = checkout();
        signed["ap2"] = json!({"merchant_authorization": "x..y"});
        assert_eq!(checkout_payload(&signed), checkout());
    }
}
