//! Signing in to the user's HTTP servers, for the front end: begin (a URL
//! for the system browser), finish (waits for the browser), cancel, go on
//! without, and sign out; and each server's sign-in in its status.

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agent::inner::Inner;
use crate::agent::sign_ins::{SignInNews, Underway};
use crate::error::AgentError;
use crate::mcp::config::{ServerTransport, UcpMerchant};
use crate::mcp::env_refs::{expand, process_env};
use crate::mcp::sign_in::flow::BROWSER_TIMEOUT;
use crate::mcp::sign_in::{self, SignInError};
use crate::mcp::{ServerStatus, SignInStatus};
use crate::protocol::SignInStarted;
use crate::ucp::device::DeviceKey;

/// The URL of a configured HTTP server, its `${env:…}` filled in.
fn http_url(inner: &Inner, server: &str) -> Result<String, AgentError> {
    let settings = inner.settings();
    let failed = |error: SignInError| AgentError::SignIn {
        server: server.to_string(),
        error,
    };
    if let Some(url) = inner.online_shop_url(server, &settings) {
        return Ok(url);
    }
    let Some(config) = settings.mcp_servers.get(server) else {
        return Err(crate::mcp::McpError::UnknownServer(server.to_string()).into());
    };
    match &config.transport {
        ServerTransport::Http { url, .. } => expand(url, process_env)
            .map_err(|unset| failed(SignInError::Failed(format!("the URL: {unset}")))),
        ServerTransport::Stdio { .. } => Err(failed(SignInError::NotHttp {
            server: server.to_string(),
        })),
    }
}

/// The UCP merchant `server` is, when it is one.
fn merchant_of(inner: &Inner, server: &str) -> Option<UcpMerchant> {
    inner
        .settings()
        .mcp_servers
        .get(server)
        .and_then(|config| config.ucp.clone())
}

/// Right after a sign-in to a merchant, while its token is fresh, binds
/// this device's key to the shopper there (the merchant takes a key only
/// with a fresh token used for nothing else). A failure is told in the
/// log; the card of a completion then says the device is not bound.
async fn bind_device_if_merchant(inner: &Inner, server: &str) {
    let Some(merchant) = merchant_of(inner, server) else {
        return;
    };
    let token = match inner.tokens(server).access_token().await {
        Ok(token) => token,
        Err(error) => {
            tracing::warn!(server, %error, "the sign-in's token could not be read to bind the device key");
            return;
        }
    };
    match DeviceKey::new(server, inner.secrets.clone())
        .bind(&merchant.origin, token.as_deref())
        .await
    {
        Ok(id) => tracing::info!(server, device = %id, "device key bound at the merchant"),
        Err(error) => {
            tracing::warn!(server, %error, "the device key was not bound at the merchant")
        }
    }
}

impl Agent {
    /// Starts signing in to `server`: finds its authorization server,
    /// registers the app where it allows it, and answers with the page to
    /// open in the browser. Nothing is stored until [`Agent::finish_sign_in`].
    pub async fn begin_sign_in(&self, server: &str) -> Result<SignInStarted, AgentError> {
        let inner = &self.inner;
        let url = http_url(inner, server)?;
        let client_id = inner
            .settings()
            .mcp_servers
            .get(server)
            .and_then(|config| config.oauth_client_id.clone());
        let pending = sign_in::begin(&url, inner.tokens(server).at(&url), client_id.as_deref())
            .await
            .map_err(|error| AgentError::SignIn {
                server: server.to_string(),
                error,
            })?;
        let started = SignInStarted {
            server: server.to_string(),
            authorization_url: pending.authorization_url().to_string(),
        };
        let earlier = inner.sign_ins.lock().insert(
            server.to_string(),
            Underway {
                pending: Some(pending),
                cancel: CancellationToken::new(),
                id: uuid::Uuid::new_v4().to_string(),
            },
        );
        if let Some(earlier) = earlier {
            earlier.cancel.cancel();
        }
        Ok(started)
    }

    /// Waits until the browser comes back to the sign-in begun for
    /// `server` (or it is cancelled, or times out), keeps the tokens, and
    /// answers with who signed in. The server's next use connects with them.
    pub async fn finish_sign_in(&self, server: &str) -> Result<SignInStatus, AgentError> {
        let inner = &self.inner;
        let (pending, cancel, id) = {
            let mut underway = inner.sign_ins.lock();
            let entry = underway
                .get_mut(server)
                .ok_or_else(|| AgentError::NoSignInPending(server.to_string()))?;
            let pending = entry
                .pending
                .take()
                .ok_or_else(|| AgentError::NoSignInPending(server.to_string()))?;
            (pending, entry.cancel.clone(), entry.id.clone())
        };
        let finished = pending.finish(&cancel, BROWSER_TIMEOUT).await;
        {
            // Only this sign-in's entry: a newer one may have replaced it.
            let mut underway = inner.sign_ins.lock();
            if underway.get(server).is_some_and(|entry| entry.id == id) {
                underway.remove(server);
            }
        }
        let signed_in = finished.map_err(|error| AgentError::SignIn {
            server: server.to_string(),
            error,
        })?;
        // Whatever the hub remembers of the 401 is over.
        inner.tools.disconnect(server).await;
        bind_device_if_merchant(inner, server).await;
        let identity = signed_in
            .identity
            .unwrap_or_else(|| "signed in".to_string());
        inner.sign_ins.tell(SignInNews::SignedIn {
            server: server.to_string(),
            identity: identity.clone(),
        });
        Ok(SignInStatus::SignedIn { identity })
    }

    /// The user goes on without `server` for now: the runs that wait for
    /// its sign-in go on without its tools, and later runs only tell that
    /// it needs one, until the user signs in.
    pub fn go_on_without(&self, server: &str) {
        self.cancel_sign_in(server);
        self.inner.sign_ins.tell(SignInNews::WentWithout {
            server: server.to_string(),
        });
    }

    /// Cancels the sign-in under way for `server` (its `finish_sign_in`
    /// ends with `sign_in_cancelled`, whether it waits already or not);
    /// false when there was none.
    pub fn cancel_sign_in(&self, server: &str) -> bool {
        match self.inner.sign_ins.lock().get(server) {
            Some(underway) => {
                underway.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Forgets the tokens kept for `server` and closes its connection; its
    /// next use asks for a sign-in again.
    pub async fn sign_out(&self, server: &str) -> Result<(), AgentError> {
        self.cancel_sign_in(server);
        // A fresh choice: the next run that needs it waits for a sign-in.
        self.inner.sign_ins.went_without().remove(server);
        if let Some(merchant) = merchant_of(&self.inner, server) {
            let token = self
                .inner
                .tokens(server)
                .access_token()
                .await
                .unwrap_or(None);
            if let Err(error) = DeviceKey::new(server, self.inner.secrets.clone())
                .revoke(&merchant.origin, token.as_deref())
                .await
            {
                tracing::warn!(server, %error, "the device key could not be forgotten");
            }
        }
        self.inner.tokens(server).forget().await?;
        self.inner.tools.disconnect(server).await;
        tracing::info!(server, "signed out");
        Ok(())
    }

    /// Each server's state, with the user's sign-in where one is kept.
    pub async fn server_status(&self) -> Vec<ServerStatus> {
        let settings = self.inner.settings();
        let mut statuses = self.inner.tools.status().await;
        for status in &mut statuses {
            // The local shop is a child of the app: nobody signs in to it.
            let local_builtin = self.inner.builtin.iter().any(|e| e.name == status.name)
                && self
                    .inner
                    .online_shop_url(&status.name, &settings)
                    .is_none();
            if status.sign_in.is_some() || local_builtin {
                continue;
            }
            // Only a sign-in kept for the address in use now counts.
            let tokens = match http_url(&self.inner, &status.name) {
                Ok(url) => self.inner.tokens(&status.name).at(&url),
                Err(_) => self.inner.tokens(&status.name),
            };
            match tokens.identity().await {
                Ok(Some(identity)) => status.sign_in = Some(SignInStatus::SignedIn { identity }),
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(server = %status.name, %error, "sign-in not readable");
                }
            }
        }
        statuses
    }
}
