//! The axum middleware in front of the MCP endpoint: a request with a valid
//! bearer token goes on with its [`Subject`]; any other gets 401 and a
//! `WWW-Authenticate` header naming the resource metadata (MCP
//! authorization; RFC 6750 §3, RFC 9728 §5.1).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::config::AuthConfig;
use super::metadata::ResourceMetadata;
use super::token::Validator;
use crate::users::{AccessToken, Subject};

/// The longest token read; a JWT from a real server is a few kilobytes.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Everything the middleware and the metadata route need.
#[derive(Debug)]
pub struct Authenticator {
    config: AuthConfig,
    /// Shared by the shop's resources: one cache of the issuer's keys.
    validator: Arc<Validator>,
}

impl Authenticator {
    pub fn new(config: AuthConfig) -> Self {
        let validator = Arc::new(Validator::new(&config));
        Self { config, validator }
    }

    /// The guard of the shop's other resource `resource`: the same tokens
    /// are good, its 401 names its own metadata.
    pub fn for_resource(&self, resource: &str) -> Option<Self> {
        Some(Self {
            config: self.config.for_resource(resource)?,
            validator: self.validator.clone(),
        })
    }

    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    pub fn validator(&self) -> &Validator {
        &self.validator
    }

    /// The metadata document as served.
    pub fn metadata_response(&self) -> Response {
        json_response(StatusCode::OK, &ResourceMetadata::of(&self.config))
    }

    /// 401 for a request without a token (no error code, RFC 6750 §3.1) or
    /// with a bad one (`invalid_token`).
    fn unauthorized(&self, bad_token: bool) -> Response {
        let metadata = self.config.metadata_url();
        let (challenge, body) = if bad_token {
            (
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"the access token is invalid or expired\", resource_metadata=\"{metadata}\""
                ),
                serde_json::json!({"error": "invalid_token",
                                   "error_description": "the access token is invalid or expired"}),
            )
        } else {
            (
                format!("Bearer resource_metadata=\"{metadata}\""),
                // No error code: RFC 6750 §3.1 gives none to a request
                // that did not try to authenticate.
                serde_json::json!({"error_description": "sign in: this request carries no access token"}),
            )
        };
        let mut response = json_response(StatusCode::UNAUTHORIZED, &body);
        match HeaderValue::from_str(&challenge) {
            Ok(value) => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            Err(error) => {
                tracing::error!(%error, "the WWW-Authenticate value is not a header value")
            }
        }
        response
    }
}

fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// The bearer token of an `Authorization` header, if it has one. The scheme
/// is case-insensitive (RFC 9110 §11.1).
fn bearer_token(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// The middleware: checks the bearer token and puts its subject in the
/// request's extensions, where [`crate::Callers::PerRequest`] finds it. A
/// `Subject` the request already carried is removed first, so only this
/// layer can set one.
pub async fn require_bearer(
    State(auth): State<Arc<Authenticator>>,
    mut request: Request,
    next: Next,
) -> Response {
    request.extensions_mut().remove::<Subject>();
    request.extensions_mut().remove::<AccessToken>();
    let has_authorization = request.headers().contains_key(header::AUTHORIZATION);
    let Some(token) = bearer_token(&request) else {
        // Another scheme, or none: the client has not signed in here.
        return auth.unauthorized(has_authorization);
    };
    if token.len() > MAX_TOKEN_BYTES {
        tracing::info!(bytes = token.len(), "access token refused: too long");
        return auth.unauthorized(true);
    }
    match auth.validator.verify(token).await {
        Ok(verified) => {
            request.extensions_mut().insert(verified.subject.clone());
            request.extensions_mut().insert(verified);
            next.run(request).await
        }
        Err(error) => {
            if error.is_ours() {
                // Not the token's fault: a 401 would send the user to sign
                // in again for nothing.
                tracing::warn!(%error, "access token not checked: the authorization server's keys are unavailable");
                let body = serde_json::json!({"error": "temporarily_unavailable",
                    "error_description": "the shop cannot check access tokens right now; try again shortly"});
                return json_response(StatusCode::SERVICE_UNAVAILABLE, &body);
            }
            tracing::info!(%error, "access token refused");
            auth.unauthorized(true)
        }
    }
}
