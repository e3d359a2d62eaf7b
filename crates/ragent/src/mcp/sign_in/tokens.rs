//! One server's OAuth tokens in the settings' secret store (the OS keyring,
//! else the database), under `server/<server>/oauth`: the client id the
//! authorization server gave, the token response and when it came, and the
//! address they were got for. The page never sees them; only the identity
//! read from them.
//!
//! Tokens belong to the server's address, not its name: read for another
//! address (the server's URL, or the online shop's, was changed) they are
//! forgotten, so they never go to a host they were not issued for. They
//! belong to the authorization server that issued them too (the issuer
//! kept with them): at a reconnect whose server now names another one,
//! they are forgotten ([`ServerTokens::issued_by`]).

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

use crate::secrets::{KEYRING_TIMEOUT, SecretError, SecretStore, off_thread};

/// How every sign-in's slot ends.
pub const SIGN_IN_SUFFIX: &str = "/oauth";

/// The slot a server's tokens are kept under.
pub fn slot(server: &str) -> String {
    format!("server/{server}{SIGN_IN_SUFFIX}")
}

/// The field of the stored value that names the address.
const RESOURCE: &str = "resource";

/// A server's tokens, read and written as rmcp's credential store.
#[derive(Clone)]
pub struct ServerTokens {
    server: String,
    /// The address in use; tokens kept for another are not read.
    resource: Option<String>,
    secrets: Arc<dyn SecretStore>,
}

impl ServerTokens {
    /// The server's tokens whatever address they are for (to forget them).
    pub fn new(server: &str, secrets: Arc<dyn SecretStore>) -> Self {
        ServerTokens {
            server: server.to_string(),
            resource: None,
            secrets,
        }
    }

    /// The same tokens, used at `url`: kept ones for another address are
    /// forgotten when read, and new ones are kept for this one.
    pub fn at(mut self, url: &str) -> Self {
        self.resource = Some(url.trim().to_string());
        self
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// The stored credentials; a value that no longer reads as credentials
    /// counts as none (the user signs in again), and one kept for another
    /// address is forgotten.
    pub async fn stored(&self) -> Result<Option<StoredCredentials>, SecretError> {
        let (secrets, slot) = (self.secrets.clone(), slot(&self.server));
        let Some(text) = off_thread(KEYRING_TIMEOUT, move || secrets.get(&slot)).await? else {
            return Ok(None);
        };
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(error) => {
                tracing::warn!(server = %self.server, %error, "stored sign-in unreadable; ignored");
                return Ok(None);
            }
        };
        if let Some(resource) = &self.resource
            && value.get(RESOURCE).and_then(|v| v.as_str()) != Some(resource.as_str())
        {
            tracing::info!(server = %self.server, "the stored sign-in was for another address; forgotten");
            self.forget().await?;
            return Ok(None);
        }
        Ok(match serde_json::from_value(value) {
            Ok(credentials) => Some(credentials),
            Err(error) => {
                tracing::warn!(server = %self.server, %error, "stored sign-in unreadable; ignored");
                None
            }
        })
    }

    async fn keep(&self, credentials: &StoredCredentials) -> Result<(), SecretError> {
        let unserializable = |e: serde_json::Error| {
            SecretError::Keyring(format!("credentials not serializable: {e}"))
        };
        let mut value = serde_json::to_value(credentials).map_err(unserializable)?;
        if let (Some(resource), Some(fields)) = (&self.resource, value.as_object_mut()) {
            fields.insert(RESOURCE.into(), resource.clone().into());
        }
        let text = serde_json::to_string(&value).map_err(unserializable)?;
        let (secrets, slot) = (self.secrets.clone(), slot(&self.server));
        off_thread(KEYRING_TIMEOUT, move || secrets.set(&slot, &text)).await
    }

    /// Whether the stored tokens were issued by `issuer`, the authorization
    /// server the server names now. Tokens from another one, or kept
    /// without the issuer they came from (as an older version kept them),
    /// are forgotten: neither their access token nor their refresh token
    /// goes to a server that did not issue them, and the user signs in
    /// again.
    pub async fn issued_by(&self, issuer: Option<&str>) -> Result<bool, SecretError> {
        let Some(stored) = self.stored().await? else {
            return Ok(false);
        };
        let same = issuer.is_some() && stored.issuer.as_deref() == issuer;
        if !same {
            tracing::warn!(
                server = %self.server,
                kept_for = stored.issuer.as_deref().unwrap_or("an unknown issuer"),
                now = issuer.unwrap_or("no issuer"),
                "the stored sign-in was issued by another authorization server; forgotten"
            );
            self.forget().await?;
        }
        Ok(same)
    }

    /// Forgets the server's tokens (sign out).
    pub async fn forget(&self) -> Result<(), SecretError> {
        let (secrets, slot) = (self.secrets.clone(), slot(&self.server));
        off_thread(KEYRING_TIMEOUT, move || secrets.delete(&slot)).await
    }

    /// The stored access token, when the user is signed in.
    pub async fn access_token(&self) -> Result<Option<String>, SecretError> {
        Ok(self
            .stored()
            .await?
            .and_then(|stored| stored.token_response)
            .and_then(|tokens| access_token(&tokens)))
    }

    /// Whom the stored tokens act for, when there are any.
    pub async fn identity(&self) -> Result<Option<String>, SecretError> {
        Ok(self
            .stored()
            .await?
            .and_then(|stored| stored.token_response)
            .map(|tokens| {
                access_token(&tokens)
                    .and_then(|token| identity_of(&token))
                    .unwrap_or_else(|| "signed in".to_string())
            }))
    }
}

/// The access token of a token response.
pub fn access_token(tokens: &rmcp::transport::auth::OAuthTokenResponse) -> Option<String> {
    let value = serde_json::to_value(tokens).ok()?;
    value.get("access_token")?.as_str().map(str::to_string)
}

/// The user a JWT access token names: its `preferred_username`, `name`,
/// `email` or `sub`, read for display only (the server checks it). An
/// opaque token names nobody.
pub fn identity_of(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    ["preferred_username", "name", "email", "sub"]
        .iter()
        .find_map(|claim| claims.get(claim)?.as_str().map(str::to_string))
}

fn store_error(error: SecretError) -> AuthError {
    AuthError::CredentialStoreError(error.to_string())
}

#[async_trait]
impl CredentialStore for ServerTokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.stored().await.map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.keep(&credentials).await.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.forget().await.map_err(store_error)
    }

    /// A refresh token the server refused is of no more use: forgotten, so
    /// the server asks for a sign-in and nothing stale is kept.
    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        tracing::info!(server = %self.server, "refresh token refused; sign-in forgotten");
        self.forget().await.map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: serde_json::Value) -> String {
        let part = |v: serde_json::Value| URL_SAFE_NO_PAD.encode(v.to_string());
        format!(
            "{}.{}.signature",
            part(serde_json::json!({"alg": "ES256"})),
            part(claims)
        )
    }

    #[test]
    fn the_identity_is_the_token_s_user_name_else_its_subject_and_an_opaque_token_names_nobody() {
        assert_eq!(
            identity_of(&jwt(
                serde_json::json!({"sub": "u-1", "preferred_username": "alice"})
            )),
            Some("alice".into())
        );
        assert_eq!(
            identity_of(&jwt(serde_json::json!({"sub": "u-1"}))),
            Some("u-1".into())
        );
        assert_eq!(identity_of("opaque-token"), None);
        assert_eq!(identity_of("a.not base64!.c"), None);
    }
}
