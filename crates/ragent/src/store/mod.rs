//! SQLite owns all durable state. One connection in WAL mode behind a
//! mutex: the desktop app has one user, and every operation is short.
//! Primitives take a `&Connection` so callers can compose several into one
//! transaction with [`Store::with_tx`].

pub mod audit;
pub mod calls;
pub mod kv;
pub mod messages;
pub mod migrations;
pub mod sessions;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::toolcall::{IllegalTransition, UnknownStatus};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("migration {version} failed: {source}")]
    Migration {
        version: usize,
        source: rusqlite::Error,
    },
    #[error(
        "the database was written by a newer version of the app (schema {found}, this app knows {known})"
    )]
    TooNew { found: i64, known: i64 },
    #[error("stored JSON could not be read: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Transition(#[from] IllegalTransition),
    #[error(transparent)]
    Status(#[from] UnknownStatus),
    #[error("{0} not found")]
    NotFound(String),
    #[error("the database lock was poisoned by a panic")]
    Poisoned,
}

/// More than the distinct statements the store runs.
const STATEMENT_CACHE: usize = 64;

/// The database.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database file.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        Self::setup(conn)
    }

    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Store, StoreError> {
        // WAL keeps readers and the writer apart and survives crashes well;
        // the busy timeout covers a second process briefly holding a lock.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // Every statement is prepared once per connection and reused: a
        // tool round runs a few dozen, and compiling them is most of their cost.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        migrations::migrate(&mut conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned)
    }

    /// Runs `f` on the connection without a transaction (single statements).
    pub fn with_conn<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.lock()?;
        f(&conn)
    }

    /// Runs `f` in one immediate transaction: everything or nothing.
    pub fn with_tx<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.lock()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let value = f(&tx)?;
        tx.commit().map_err(StoreError::from)?;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_database_uses_wal() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("agent.db")).unwrap();
        let mode: String = store
            .with_conn(|c| {
                c.query_row("PRAGMA journal_mode", [], |r| r.get(0))
                    .map_err(StoreError::from)
            })
            .unwrap();
        assert_eq!(mode, "wal");
    }
}
