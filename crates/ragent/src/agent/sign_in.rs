//! Signing in to the user's HTTP servers, for the front end: begin (a URL
//! for the system browser), finish (waits for the browser), cancel, go on
//! without, and sign out; and each server's sign-in in its status. One
//! sign-in per server at a time: beginning again cancels the one before.
//! A run that finds a server waiting for a sign-in waits for the user to
//! sign in or to go on without it ([`SignIns::subscribe`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use tokio::sync::broadcast;

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

/// How the wait for a server's sign-in ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SignInNews {
    SignedIn {
        server: String,
        identity: String,
    },
    /// The user chose to go on without the server.
    WentWithout {
        server: String,
    },
}

impl SignInNews {
    pub(crate) fn server(&self) -> &str {
        match self {
            SignInNews::SignedIn { server, .. } | SignInNews::WentWithout { server } => server,
        }
    }
}

/// The sign-ins under way, by server; the servers the user chose to go
/// without while the app runs (their runs no longer wait); and the news
/// of each wait's end, for the runs that wait.
pub(crate) struct SignIns {
    underway: Mutex<HashMap<String, Underway>>,
    went_without: Mutex<HashSet<String>>,
    news: broadcast::Sender<SignInNews>,
}

impl Default for SignIns {
    fn default() -> Self {
        SignIns {
            underway: Mutex::default(),
            went_without: Mutex::default(),
            news: broadcast::channel(16).0,
        }
    }
}

impl SignIns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Underway>> {
        self.underway
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn went_without(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.went_without
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a run should wait for `server`'s sign-in: not once the
    /// user chose to go on without it.
    pub(crate) fn worth_waiting_for(&self, server: &str) -> bool {
        !self.went_without().contains(server)
    }

    /// News of each wait's end from now on; subscribe before listing the
    /// tools, so a sign-in that ends in between is not missed.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<SignInNews> {
        self.news.subscribe()
    }

    fn tell(&self, news: SignInNews) {
        match &news {
            SignInNews::SignedIn { server, .. } => self.went_without().remove(server),
            SignInNews::WentWithout { server } => self.went_without().insert(server.clone()),
        };
        // No run waiting is fine.
        let _ = self.news.send(news);
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
        if let Some(url) = self.online_shop_url(server, &settings) {
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
}

impl Agent {
    /// Starts signing in to `server`: finds its authorization server,
    /// registers the app where it allows it, and answers with the page to
    /// open in the browser. Nothing is stored until [`Agent::finish_sign_in`].
    pub async fn begin_sign_in(&self, server: &str) -> Result<SignInStarted, AgentError> {
        let inner = &self.inner;
        let url = inner.http_url(server)?;
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
            let tokens = match self.inner.http_url(&status.name) {
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
