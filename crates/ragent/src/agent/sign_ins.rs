//! The sign-ins under way and the news of their end: one sign-in per
//! server at a time (beginning again cancels the one before), and a run
//! that finds a server waiting for a sign-in waits for the user to sign in
//! or to go on without it ([`SignIns::subscribe`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use tokio::sync::broadcast;

use tokio_util::sync::CancellationToken;

use crate::mcp::sign_in::PendingSignIn;

/// A sign-in begun and not yet finished.
pub(crate) struct Underway {
    /// Taken by `finish_sign_in`; the cancel token stays for `cancel`.
    pub pending: Option<PendingSignIn>,
    pub cancel: CancellationToken,
    /// Tells this sign-in from a newer one for the same server.
    pub id: String,
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
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Underway>> {
        self.underway
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn went_without(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
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

    pub(crate) fn tell(&self, news: SignInNews) {
        match &news {
            SignInNews::SignedIn { server, .. } => self.went_without().remove(server),
            SignInNews::WentWithout { server } => self.went_without().insert(server.clone()),
        };
        // No run waiting is fine.
        let _ = self.news.send(news);
    }
}
