//! The OS keyring (Secret Service on Linux, Keychain on macOS, Credential
//! Manager on Windows) through the `keyring` crate. Each entry is named by
//! the app's service and `<vault>/<slot>`, the vault being an id the
//! database keeps, so two data directories never share an entry.

use super::{SecretError, SecretStore};

pub struct KeyringSecrets {
    service: String,
    vault: String,
}

impl KeyringSecrets {
    pub fn new(service: impl Into<String>, vault: impl Into<String>) -> Self {
        KeyringSecrets {
            service: service.into(),
            vault: vault.into(),
        }
    }

    fn entry(&self, name: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, &format!("{}/{name}", self.vault)).map_err(describe)
    }
}

/// The keyring's error as text; its messages name entries, never values.
fn describe(error: keyring::Error) -> SecretError {
    SecretError::Keyring(error.to_string())
}

impl SecretStore for KeyringSecrets {
    fn kind(&self) -> &'static str {
        "keyring"
    }

    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        match self.entry(name)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(describe(e)),
        }
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        self.entry(name)?.set_password(value).map_err(describe)
    }

    fn delete(&self, name: &str) -> Result<(), SecretError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }
}
