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
}

/// Checks access tokens against one authorization server.
#[derive(Debug)]
pub struct Validator {
    keys: KeySource,
    validation_base: Validation,
}

impl Validator {
    pub fn new(config: &AuthConfig) -> Self {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.leeway = config.leeway_secs();
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_issuer(&[config.issuer()]);
        validation.set_audience(&[config.resource()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        Self {
            keys: KeySource::new(config.clone()),
            validation_base: validation,
        }
    }

    pub fn keys(&self) -> &KeySource {
        &self.keys
    }

    /// The token's subject, if the token is valid here.
    pub async fn subject(&self, token: &str) -> Result<String, TokenError> {
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
        Ok(data.claims.sub)
    }
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
