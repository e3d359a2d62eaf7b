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

/// Why the keyring cannot answer in this session, if that is known
/// without asking it. On Linux the Secret Service is reached over the
/// D-Bus session bus; with no bus address in the environment, libdbus
/// would start a bus of its own with `dbus-launch`, which takes hold of
/// the X display while it works and races with the app's own window, and
/// no keyring would be on that new bus anyway.
pub fn unreachable_because(session_bus_address: Option<&std::ffi::OsStr>) -> Option<&'static str> {
    if cfg!(all(unix, not(target_os = "macos")))
        && session_bus_address.is_none_or(|address| address.is_empty())
    {
        return Some("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)");
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(unix, not(target_os = "macos")))]
    fn without_a_session_bus_the_keyring_is_not_asked() {
        assert!(unreachable_because(None).is_some());
        assert!(unreachable_because(Some("".as_ref())).is_some());
        assert_eq!(
            unreachable_because(Some("unix:path=/run/user/1000/bus".as_ref())),
            None
        );
    }
}
