//! One sign-in, in two halves: [`begin`] finds the authorization server
//! from the server's own 401, registers the app and opens the redirect
//! listener, and gives the URL for the browser; [`PendingSignIn::finish`]
//! waits for the browser to come back, checks its `state` and exchanges
//! the code. Only that exchange stores anything.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest, AuthorizationSession,
};
use tokio_util::sync::CancellationToken;

use super::loopback::Loopback;
use super::{ServerTokens, SignInError};
use crate::web_page::{is_plain_http_elsewhere, web_page};

/// How the app names itself when it registers.
pub const CLIENT_NAME: &str = "Bit Select Assistant";

/// How long the browser may take before the sign-in gives up.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How long each request of the discovery may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A sign-in waiting for the browser.
pub struct PendingSignIn {
    session: AuthorizationSession,
    loopback: Loopback,
    authorization_url: String,
    state: String,
    tokens: ServerTokens,
}

/// Asks `url` without a token: its 401's `WWW-Authenticate` starts the
/// discovery. A server that lets the request in needs no sign-in.
async fn challenge_of(url: &str) -> Result<Option<String>, SignInError> {
    let unreachable = |e: reqwest::Error| SignInError::Unreachable {
        url: url.to_string(),
        message: e.to_string(),
    };
    let http = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(unreachable)?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "ragent", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = http
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&initialize)
        .send()
        .await
        .map_err(unreachable)?;
    let status = response.status();
    if status.is_success() {
        return Err(SignInError::NotRequired {
            url: url.to_string(),
        });
    }
    if status != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string))
}

/// Starts signing in to the server at `url`, whose tokens go to `tokens`:
/// discovery, registration (or the configured `client_id`), and the
/// authorization URL for the browser.
pub async fn begin(
    url: &str,
    tokens: ServerTokens,
    client_id: Option<&str>,
) -> Result<PendingSignIn, SignInError> {
    if is_plain_http_elsewhere(url) {
        return Err(SignInError::NotEncrypted {
            url: url.to_string(),
        });
    }
    let challenge = challenge_of(url).await?;
    let loopback = Loopback::bind()
        .await
        .map_err(|e| SignInError::Listener(e.to_string()))?;
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(tokens.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await?;
    // Endpoints guessed from the server's URL are no evidence that it
    // signs anyone in (newer MCP revisions drop that fallback).
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(SignInError::Metadata(format!(
            "{url} publishes no protected resource or authorization server metadata"
        )));
    }
    // The page the browser would open, judged before the app registers:
    // a server that names anything but a web page gets nothing from us.
    web_page(&resolution.metadata.authorization_endpoint)?;
    manager.set_metadata(resolution.metadata);
    let mut request =
        AuthorizationRequest::new(loopback.redirect_uri()).with_client_name(CLIENT_NAME);
    if let Some(client_id) = client_id {
        request = request.with_preregistered_client(client_id);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, error)| SignInError::from(error))?;
    let (authorization_url, state) = with_consent_prompt(session.get_authorization_url())?;
    web_page(&authorization_url)?;
    Ok(PendingSignIn {
        session,
        loopback,
        authorization_url,
        state,
        tokens,
    })
}

/// The authorization URL as the browser gets it, and its `state`. A
/// request for `offline_access` (a refresh token) also asks for consent,
/// without which OpenID servers drop it (OpenID Connect Core §11).
fn with_consent_prompt(authorization_url: &str) -> Result<(String, String), SignInError> {
    let mut url = url::Url::parse(authorization_url)
        .map_err(|e| SignInError::Failed(format!("authorization URL: {e}")))?;
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let state = pairs
        .iter()
        .find(|(name, _)| name == "state")
        .map(|(_, value)| value.clone())
        .ok_or_else(|| SignInError::Failed("the authorization URL has no state".into()))?;
    let offline = pairs
        .iter()
        .any(|(name, value)| name == "scope" && value.split(' ').any(|s| s == "offline_access"));
    if offline && !pairs.iter().any(|(name, _)| name == "prompt") {
        url.query_pairs_mut().append_pair("prompt", "consent");
    }
    Ok((url.to_string(), state))
}

/// Who signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    pub identity: Option<String>,
}

impl PendingSignIn {
    /// The page the browser opens.
    pub fn authorization_url(&self) -> &str {
        &self.authorization_url
    }

    /// Where the browser is sent back to.
    pub fn redirect_uri(&self) -> &str {
        self.loopback.redirect_uri()
    }

    /// Waits for the browser (until `cancel` or `timeout`), checks the
    /// redirect and exchanges its code for tokens, which are then kept.
    pub async fn finish(
        self,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Result<SignedIn, SignInError> {
        let redirect = tokio::select! {
            _ = cancel.cancelled() => return Err(SignInError::Cancelled),
            _ = tokio::time::sleep(timeout) => {
                return Err(SignInError::TimedOut { minutes: timeout.as_secs() / 60 })
            }
            // Only a redirect with this sign-in's state ends the wait.
            redirect = self.loopback.next_redirect(&self.state) => {
                redirect.map_err(|e| SignInError::Listener(e.to_string()))?
            }
        };
        if let Some(error) = redirect.error {
            return Err(SignInError::Refused {
                error,
                description: redirect.error_description,
            });
        }
        let code = redirect.code.ok_or(SignInError::NoCode)?;
        let exchange = self.session.handle_callback_with_issuer(
            &code,
            &self.state,
            redirect.issuer.as_deref(),
        );
        tokio::select! {
            _ = cancel.cancelled() => return Err(SignInError::Cancelled),
            exchanged = exchange => { exchanged?; }
        }
        let identity = self
            .tokens
            .identity()
            .await
            .map_err(|e| SignInError::Store(e.to_string()))?;
        tracing::info!(server = %self.tokens.server(), "signed in");
        Ok(SignedIn { identity })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_for_a_refresh_token_asks_for_consent_and_the_state_is_read_back() {
        let (url, state) = with_consent_prompt(
            "http://as.test/auth?response_type=code&state=s-1&scope=shop+offline_access",
        )
        .unwrap();
        assert_eq!(state, "s-1");
        assert!(url.ends_with("&prompt=consent"), "{url}");
        let (url, _) = with_consent_prompt("http://as.test/auth?state=s-2&scope=shop").unwrap();
        assert!(!url.contains("prompt"), "{url}");
        assert!(matches!(
            with_consent_prompt("http://as.test/auth?scope=shop"),
            Err(SignInError::Failed(_))
        ));
    }
}
