//! Where the settings' secret values live: the API key, the model's extra
//! headers, and each MCP server's env values and headers. The OS keyring
//! keeps them when it answers ([`KeyringSecrets`]); otherwise the core's
//! database does ([`DatabaseSecrets`]). Either way the settings document
//! stored in the database holds only their names (`slots.rs`), and the page
//! only ever sees whether each is set (`settings_view.rs`).

mod database;
pub(crate) mod keeper;
mod memory;
mod os_keyring;
pub(crate) mod slots;

use std::sync::Arc;
use std::time::Duration;

pub use self::database::DatabaseSecrets;
pub use self::memory::MemorySecrets;
pub use self::os_keyring::{KeyringSecrets, unreachable_because as keyring_unreachable_because};

/// A place that keeps secret values by name.
pub trait SecretStore: Send + Sync {
    /// A short name for logs ("keyring", "database").
    fn kind(&self) -> &'static str;
    fn get(&self, name: &str) -> Result<Option<String>, SecretError>;
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError>;
    /// Removing a name that is not there is not an error.
    fn delete(&self, name: &str) -> Result<(), SecretError>;
}

/// Why a secret could not be read or kept. Never carries a secret value.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("the OS keyring failed: {0}")]
    Keyring(String),
    #[error("the OS keyring did not answer within {0:?}")]
    TimedOut(Duration),
    #[error("the keyring's worker thread could not run: {0}")]
    Thread(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// Where the agent keeps secrets.
#[derive(Clone, Default)]
pub enum SecretsBackend {
    /// The core's database (tests, and anywhere no keyring is wanted).
    #[default]
    Database,
    /// The OS keyring under this service name when a probe at open
    /// answers, else the database.
    KeyringOrDatabase { service: String },
    /// A store the caller supplies (tests use [`MemorySecrets`]).
    Custom(Arc<dyn SecretStore>),
}

/// How long the keyring may take to answer at all: a session without a
/// Secret Service (or one waiting on a prompt) must not hold up start-up.
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);

/// Runs blocking secret-store work on a thread of its own, so a keyring
/// that hangs costs at most `timeout` and never the core's thread. The
/// thread is left to finish on its own if it overruns.
pub(crate) async fn off_thread<T, F>(timeout: Duration, work: F) -> Result<T, SecretError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, SecretError> + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("secrets".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| SecretError::Thread(e.to_string()))?;
    match tokio::time::timeout(timeout, rx).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(SecretError::Thread(
            "the worker ended without a result".into(),
        )),
        Err(_) => Err(SecretError::TimedOut(timeout)),
    }
}

/// Writes, reads back and deletes a probe entry, on a thread of its own
/// and for at most `timeout`: a store that cannot do all three in time (no
/// Secret Service, a locked keyring waiting on a prompt) is not used.
pub(crate) async fn probe(
    store: Arc<dyn SecretStore>,
    timeout: Duration,
) -> Result<(), SecretError> {
    off_thread(timeout, move || {
        let name = "probe";
        let value = uuid::Uuid::new_v4().to_string();
        store.set(name, &value)?;
        let read = store.get(name)?;
        store.delete(name)?;
        if read.as_deref() == Some(value.as_str()) {
            Ok(())
        } else {
            Err(SecretError::Keyring(
                "a value written to the keyring did not read back".into(),
            ))
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A keyring that is there but refuses everything.
    struct Refusing;

    impl SecretStore for Refusing {
        fn kind(&self) -> &'static str {
            "refusing"
        }
        fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
            Err(SecretError::Keyring("no Secret Service".into()))
        }
        fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
            Err(SecretError::Keyring("no Secret Service".into()))
        }
        fn delete(&self, _: &str) -> Result<(), SecretError> {
            Err(SecretError::Keyring("no Secret Service".into()))
        }
    }

    /// A keyring that never answers (a prompt nobody sees).
    struct Hanging(std::sync::Mutex<std::sync::mpsc::Receiver<()>>);

    impl SecretStore for Hanging {
        fn kind(&self) -> &'static str {
            "hanging"
        }
        fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
            Ok(None)
        }
        fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
            let _ = self.0.lock().map(|wait| wait.recv());
            Ok(())
        }
        fn delete(&self, _: &str) -> Result<(), SecretError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_keyring_that_refuses_or_never_answers_fails_the_probe_and_memory_passes_it() {
        let timeout = Duration::from_millis(200);
        assert!(probe(Arc::new(MemorySecrets::new()), timeout).await.is_ok());
        assert!(matches!(
            probe(Arc::new(Refusing), timeout).await,
            Err(SecretError::Keyring(_))
        ));
        let (_hold, wait) = std::sync::mpsc::channel();
        let started = std::time::Instant::now();
        let hung = probe(Arc::new(Hanging(std::sync::Mutex::new(wait))), timeout).await;
        assert!(matches!(hung, Err(SecretError::TimedOut(_))), "{hung:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
