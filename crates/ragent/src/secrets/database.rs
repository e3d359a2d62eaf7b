//! The fallback where no keyring answers: secrets as rows of the core
//! database's key-value table, beside (never inside) the settings document.
//! The database file is readable by its owner only. A value replaced or
//! removed leaves the disk: the database zeroes deleted content
//! (`secure_delete`) and its log is emptied after each change.

use std::sync::Arc;

use super::{SecretError, SecretStore};
use crate::clock::{Clock, SystemClock};
use crate::store::{Store, kv};

pub struct DatabaseSecrets {
    store: Arc<Store>,
}

impl DatabaseSecrets {
    pub fn new(store: Arc<Store>) -> Self {
        DatabaseSecrets { store }
    }

    /// The names of every secret held here.
    pub fn names(&self) -> Result<Vec<String>, SecretError> {
        Ok(self.store.with_conn(kv::secret_names)?)
    }
}

impl SecretStore for DatabaseSecrets {
    fn kind(&self) -> &'static str {
        "database"
    }

    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        Ok(self.store.with_conn(|c| kv::secret(c, name))?)
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        let replaced = self.store.with_conn(|c| {
            let old = kv::secret(c, name)?;
            if old.as_deref() != Some(value) {
                kv::set_secret(c, name, value, SystemClock.now_ms())?;
            }
            Ok::<_, crate::store::StoreError>(old.is_some_and(|old| old != value))
        })?;
        // Only a value that was there before leaves something behind.
        if replaced {
            self.store.scrub_log()?;
        }
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<(), SecretError> {
        self.store.with_conn(|c| kv::delete_secret(c, name))?;
        Ok(self.store.scrub_log()?)
    }
}
