//! Signing in to an HTTP MCP server that answers 401 (the MCP
//! authorization spec, through rmcp's OAuth client): the challenge's
//! `WWW-Authenticate` names the protected resource metadata (RFC 9728),
//! that names the authorization server, whose metadata (RFC 8414 / OpenID)
//! gives the endpoints; the client registers itself where the server
//! allows it (else a configured client id is used), and the user signs in
//! in the browser: authorization code with PKCE, `state` and `resource`,
//! redirected to a loopback listener. The tokens are kept per server in
//! the secret store (`tokens.rs`) and refreshed before the user is asked
//! again.

pub mod flow;
pub mod loopback;
pub mod tokens;

use rmcp::transport::auth::AuthError;

pub use flow::{PendingSignIn, begin};
pub use tokens::ServerTokens;

/// Why a sign-in did not finish. Nothing is saved unless it finished.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    #[error("{server:?} is not an HTTP server; only HTTP servers sign in")]
    NotHttp { server: String },
    #[error(
        "{url} is plain http to another computer: the sign-in and its tokens would cross the network unencrypted, so the app does not sign in there"
    )]
    NotEncrypted { url: String },
    #[error("{url} did not answer: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url} let the client in without signing in; there is nothing to sign in to")]
    NotRequired { url: String },
    #[error("the sign-in metadata is unusable: {0}")]
    Metadata(String),
    #[error(
        "the authorization server is not the one the metadata names: expected {expected}, it says {received}"
    )]
    IssuerMismatch { expected: String, received: String },
    #[error("the app could not register with the authorization server: {0}")]
    Registration(String),
    #[error("the authorization server refused the sign-in ({error}){}", describe(.description))]
    Refused {
        error: String,
        description: Option<String>,
    },
    #[error("the browser came back without an authorization code")]
    NoCode,
    #[error("the authorization server's token endpoint refused the code: {0}")]
    TokenEndpoint(String),
    #[error("the sign-in was cancelled")]
    Cancelled,
    #[error("the sign-in was not finished within {minutes} minutes")]
    TimedOut { minutes: u64 },
    #[error("the sign-in's redirect listener failed: {0}")]
    Listener(String),
    #[error("the tokens could not be kept: {0}")]
    Store(String),
    #[error("the authorization server's sign-in page is not opened: {0}")]
    NotAWebPage(#[from] crate::web_page::NotAWebPage),
    #[error("the sign-in failed: {0}")]
    Failed(String),
}

fn describe(description: &Option<String>) -> String {
    description
        .as_deref()
        .map(|d| format!(": {d}"))
        .unwrap_or_default()
}

impl From<AuthError> for SignInError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            } => SignInError::IssuerMismatch {
                expected: expected_issuer,
                received: received_issuer,
            },
            AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
                SignInError::IssuerMismatch {
                    expected: expected_issuer,
                    received: "no issuer".into(),
                }
            }
            AuthError::DiscoveryRequestFailed { url, source } => SignInError::Unreachable {
                url: url.to_string(),
                message: source.to_string(),
            },
            error @ (AuthError::ProtectedResourceMetadataInvalid { .. }
            | AuthError::AuthorizationServersUnavailable { .. }
            | AuthError::MetadataError(_)
            | AuthError::PkceUnsupported
            | AuthError::NoAuthorizationSupport) => SignInError::Metadata(error.to_string()),
            AuthError::RegistrationFailed(message) => SignInError::Registration(message),
            AuthError::TokenExchangeFailed(message) => SignInError::TokenEndpoint(message),
            AuthError::CredentialStoreError(message) => SignInError::Store(message),
            other => SignInError::Failed(other.to_string()),
        }
    }
}
