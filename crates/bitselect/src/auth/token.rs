//! What makes an access token valid here: a JWT signed with an allowed
//! asymmetric algorithm by a key of the configured authorization server,
//! issued by it (`iss`), for the shop (`aud` holds the resource URL), within
//! its lifetime (`exp`, `nbf`, with a little leeway for clocks,
//! [`super::config::DEFAULT_LEEWAY_SECS`]), naming a
//! user (`sub`).

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;

use super::config::AuthConfig;
use super::keys::{KeyError, KeySource};
use super::verified::VerifiedTokens;
use crate::users::{AccessToken, Subject};

/// The algorithms accepted. Never `none` or HMAC: a shared secret would let
/// anyone who verifies tokens also make them.
pub const ALLOWED_ALGORITHMS: [Algorithm; 8] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
];

/// Why a token was refused. Every variant answers 401 `invalid_token`; the
/// text goes to the log only, never to the client.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("not a JWT: {0}")]
    Malformed(#[source] jsonwebtoken::errors::Error),
    #[error("algorithm {0:?} is not accepted")]
    Algorithm(Algorithm),
    #[error("no key of the authorization server has the id {0:?}")]
    UnknownKey(Option<String>),
    #[error("the key {kid:?} is for {key_alg}, the token says {alg:?}")]
    KeyAlgorithm {
        kid: Option<String>,
        key_alg: String,
        alg: Algorithm,
    },
    #[error("the authorization server's keys are not available: {0}")]
    Keys(#[from] KeyError),
    #[error("rejected: {0}")]
    Rejected(#[source] jsonwebtoken::errors::Error),
    #[error("the token names no user (`sub` is empty)")]
    NoSubject,
}

impl TokenError {
    /// True when the shop, not the token, is at fault: the keys could not
    /// be fetched. Logged as a warning rather than as a bad token.
    pub fn is_ours(&self) -> bool {
        matches!(
            self,
            Self::Keys(
                KeyError::Fetch { .. }
                    | KeyError::NoMetadata { .. }
                    | KeyError::IssuerMismatch { .. }
            )
        )
    }
}

#[derive(Debug, Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    jti: Option<String>,
    #[serde(default)]
    iat: Option<i64>,
    /// Required by the validation; a number of seconds, whole or not.
    exp: f64,
}

/// Checks access tokens against one authorization server.
#[derive(Debug)]
pub struct Validator {
    keys: KeySource,
    validation_base: Validation,
    verified: VerifiedTokens,
}

impl Validator {
    pub fn new(config: &AuthConfig) -> Self {
        Self::with_keys(config, KeySource::new(config.clone()))
    }

    fn with_keys(config: &AuthConfig, keys: KeySource) -> Self {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.leeway = config.leeway_secs();
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_issuer(&[config.issuer()]);
        validation.set_audience(&config.resources());
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        Self {
            keys,
            validation_base: validation,
            verified: VerifiedTokens::default(),
        }
    }

    pub fn keys(&self) -> &KeySource {
        &self.keys
    }

    /// What the token says (its subject, id and issue time), if it is
    /// valid here.
    pub async fn verify(&self, token: &str) -> Result<AccessToken, TokenError> {
        let now = now_secs();
        if let Some(verified) = self.verified.get(token, now) {
            return Ok(verified);
        }
        let header = decode_header(token).map_err(TokenError::Malformed)?;
        if !ALLOWED_ALGORITHMS.contains(&header.alg) {
            return Err(TokenError::Algorithm(header.alg));
        }
        let kid = header.kid;
        let jwk = match self.keys.key(kid.as_deref()).await {
            Ok(Some(jwk)) => jwk,
            Ok(None) | Err(KeyError::TooSoon) => return Err(TokenError::UnknownKey(kid)),
            Err(error) => return Err(error.into()),
        };
        check_key_algorithm(&jwk, header.alg, &kid)?;
        let key = DecodingKey::from_jwk(&jwk).map_err(TokenError::Rejected)?;
        let mut validation = self.validation_base.clone();
        // The one algorithm the header names, already checked against the
        // allow-list; the key's family must match it (the crate checks).
        validation.algorithms = vec![header.alg];
        let data = decode::<Claims>(token, &key, &validation).map_err(TokenError::Rejected)?;
        if data.claims.sub.trim().is_empty() {
            return Err(TokenError::NoSubject);
        }
        let verified = AccessToken {
            subject: Subject(data.claims.sub),
            id: data.claims.jti,
            issued_at_secs: data.claims.iat,
        };
        // `as` saturates: an absurd `exp` keeps the token no longer than
        // the validation accepted it for.
        self.verified
            .keep(token, &verified, data.claims.exp.floor() as i64, now);
        Ok(verified)
    }
}

/// Seconds since the epoch, as `exp` counts them.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A key that declares its algorithm is used with that one only.
fn check_key_algorithm(jwk: &Jwk, alg: Algorithm, kid: &Option<String>) -> Result<(), TokenError> {
    match jwk.common.key_algorithm {
        Some(key_alg) if key_alg.to_string() != format!("{alg:?}") => {
            Err(TokenError::KeyAlgorithm {
                kid: kid.clone(),
                key_alg: key_alg.to_string(),
                alg,
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    use jsonwebtoken::{EncodingKey, Header, encode, get_current_timestamp};
    use serde_json::{Value, json};

    const ISSUER: &str = "https://as.example";
    const RESOURCE: &str = "https://shop.example/mcp";
    const KID: &str = "key-1";

    fn p256() -> EncodingKey {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        EncodingKey::from_ec_der(pkcs8.as_ref())
    }

    /// A validator whose issuer holds `key` under [`KID`], declared for `alg`.
    fn validator(key: &EncodingKey, alg: Algorithm) -> Validator {
        let config = AuthConfig::new(ISSUER, RESOURCE).unwrap();
        let mut jwk = Jwk::from_encoding_key(key, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some(KID.to_owned());
        jwk.common.key_algorithm = Some(alg.into());
        Validator::with_keys(&config, KeySource::holding(config.clone(), vec![jwk]))
    }

    fn claims(change: impl FnOnce(&mut Value)) -> Value {
        let now = get_current_timestamp();
        let mut claims = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "alice",
                                "iat": now, "exp": now + 300});
        change(&mut claims);
        claims
    }

    fn token(key: &EncodingKey, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        encode(&header, claims, key).unwrap()
    }

    fn ago(secs: u64) -> u64 {
        get_current_timestamp() - secs
    }

    fn ahead(secs: u64) -> u64 {
        get_current_timestamp() + secs
    }

    #[tokio::test]
    async fn the_claims_decide_as_the_rules_say() {
        let key = p256();
        let check = validator(&key, Algorithm::ES256);
        let cases: Vec<(&str, Value, bool)> = vec![
            ("valid", claims(|_| {}), true),
            (
                "aud is a list holding the resource",
                claims(|c| c["aud"] = json!(["other", RESOURCE])),
                true,
            ),
            (
                "expired within the leeway",
                claims(|c| c["exp"] = json!(ago(10))),
                true,
            ),
            (
                "not yet valid within the leeway",
                claims(|c| c["nbf"] = json!(ahead(10))),
                true,
            ),
            (
                "another issuer",
                claims(|c| c["iss"] = json!("https://evil.example")),
                false,
            ),
            (
                "the issuer with a trailing slash",
                claims(|c| c["iss"] = json!(format!("{ISSUER}/"))),
                false,
            ),
            (
                "another audience",
                claims(|c| c["aud"] = json!("https://other.example/api")),
                false,
            ),
            (
                "no audience",
                claims(|c| {
                    c.as_object_mut().unwrap().remove("aud");
                }),
                false,
            ),
            ("expired", claims(|c| c["exp"] = json!(ago(120))), false),
            (
                "no expiry",
                claims(|c| {
                    c.as_object_mut().unwrap().remove("exp");
                }),
                false,
            ),
            (
                "not yet valid",
                claims(|c| c["nbf"] = json!(ahead(120))),
                false,
            ),
            (
                "no subject",
                claims(|c| {
                    c.as_object_mut().unwrap().remove("sub");
                }),
                false,
            ),
            ("a blank subject", claims(|c| c["sub"] = json!("  ")), false),
        ];
        for (what, claims, accepted) in cases {
            let outcome = check.verify(&token(&key, KID, &claims)).await;
            assert_eq!(outcome.is_ok(), accepted, "{what}: {outcome:?}");
            if accepted {
                assert_eq!(outcome.unwrap().subject.0, "alice", "{what}");
            }
        }
    }

    #[tokio::test]
    async fn a_verified_token_tells_its_id_and_when_it_was_issued() {
        let key = p256();
        let good = claims(|c| c["jti"] = json!("token-1"));
        let verified = validator(&key, Algorithm::ES256)
            .verify(&token(&key, KID, &good))
            .await
            .unwrap();
        assert_eq!(verified.subject.0, "alice");
        assert_eq!(verified.id.as_deref(), Some("token-1"));
        assert_eq!(verified.issued_at_secs, good["iat"].as_i64());
    }

    #[tokio::test]
    async fn a_token_sent_again_is_answered_the_same_and_a_forged_twin_still_fails() {
        let key = p256();
        let good = claims(|c| c["jti"] = json!("token-1"));
        let validator = validator(&key, Algorithm::ES256);
        let signed = token(&key, KID, &good);
        let first = validator.verify(&signed).await.unwrap();
        assert_eq!(validator.verify(&signed).await.unwrap(), first);
        // The same claims signed by another key: a different token, checked
        // in full, refused.
        let forged = token(&p256(), KID, &good);
        assert!(matches!(
            validator.verify(&forged).await,
            Err(TokenError::Rejected(_))
        ));
    }

    #[tokio::test]
    async fn a_token_needs_the_issuers_key_and_the_keys_own_algorithm() {
        let key = p256();
        let good = claims(|_| {});
        let foreign = token(&p256(), KID, &good);
        assert!(matches!(
            validator(&key, Algorithm::ES256).verify(&foreign).await,
            Err(TokenError::Rejected(_))
        ));
        // Fetched just now: an unknown key id is not fetched again yet.
        assert!(matches!(
            validator(&key, Algorithm::ES256)
                .verify(&token(&key, "key-2", &good))
                .await,
            Err(TokenError::UnknownKey(Some(_)))
        ));
        // A key declared for RS256 is not used for an ES256 token.
        assert!(matches!(
            validator(&key, Algorithm::RS256)
                .verify(&token(&key, KID, &good))
                .await,
            Err(TokenError::KeyAlgorithm { .. })
        ));
        let hmac = {
            let mut header = Header::new(Algorithm::HS256);
            header.kid = Some(KID.to_owned());
            encode(
                &header,
                &good,
                &EncodingKey::from_secret(b"guessed").unwrap(),
            )
            .unwrap()
        };
        assert!(matches!(
            validator(&key, Algorithm::ES256).verify(&hmac).await,
            Err(TokenError::Algorithm(Algorithm::HS256))
        ));
    }
}
