//! Secrets in memory: a keyring stand-in for tests.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{SecretError, SecretStore};

#[derive(Debug, Default)]
pub struct MemorySecrets {
    values: Mutex<BTreeMap<String, String>>,
}

impl MemorySecrets {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every name and value held, for tests to inspect.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.values
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SecretStore for MemorySecrets {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        Ok(self.lock().get(name).cloned())
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        self.lock().insert(name.to_string(), value.to_string());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<(), SecretError> {
        self.lock().remove(name);
        Ok(())
    }
}
