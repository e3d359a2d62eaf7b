//! Signing in to the user's HTTP servers, for the front end: begin (a URL
//! for the system browser), finish (waits for the browser), cancel, and
//! sign out; and each server's sign-in in its status. One sign-in per
//! server at a time: beginning again cancels the one before.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use super::{Agent, Inner};
use crate::error::AgentError;
use crate::mcp::config::ServerTransport;
use crate::mcp::env_refs::{expand, process_env};
use crate::mcp::sign_in::flow::BROWSER_TIMEOUT;
use crate::mcp::sign_in::{self, PendingSignIn, ServerTokens, SignInError};
use crate::mcp::{ServerStatus, SignInStatus};
use crate::protocol::SignInStarted;

/// A sign-in begun and not yet finished.
struct Underway {
    /// Taken by `finish_sign_in`; the cancel token stays for `cancel`.
    pending: Option<PendingSignIn>,
    cancel: CancellationToken,
    /// Tells this sign-in from a newer one for the same server.
    id: String,
}

/// The sign-ins under way, by server.
#[derive(Default)]
pub(crate) struct SignIns(Mutex<HashMap<String, Underway>>);

impl SignIns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Underway>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Inner {
    pub(crate) fn tokens(&self, server: &str) -> ServerTokens {
        ServerTokens::new(server, self.secrets.clone())
    }

    /// The URL of a configured HTTP server, its `${env:…}` filled in.
    fn http_url(&self, server: &str) -> Result<String, AgentError> {
        let settings = self.settings();
        let failed = |error: SignInError| AgentError::SignIn {
            server: server.to_string(),
            error,
        };
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
}

impl Agent {
    /// Starts signing in to `server`: finds its authorization server,
    /// registers the app where it allows it, and answers with the page to
    /// open in the browser. Nothing is stored until [`Agent::finish_sign_in`].
    pub async fn begin_sign_in(&self, server: &str) -> Result<SignInStarted, AgentError> {
        let inner = &self.inner;
        let url = inner.http_url(server)?;
        let pending = sign_in::begin(&url, inner.tokens(server), None)
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
        Ok(SignInStatus::SignedIn {
            identity: signed_in
                .identity
                .unwrap_or_else(|| "signed in".to_string()),
        })
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
        self.inner.tokens(server).forget().await?;
        self.inner.tools.disconnect(server).await;
        tracing::info!(server, "signed out");
        Ok(())
    }

    /// Each server's state, with the user's sign-in where one is kept.
    pub async fn server_status(&self) -> Vec<ServerStatus> {
        let mut statuses = self.inner.tools.status().await;
        for status in &mut statuses {
            if status.sign_in.is_some() || self.inner.builtin.iter().any(|e| e.name == status.name)
            {
                continue;
            }
            match self.inner.tokens(&status.name).identity().await {
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
