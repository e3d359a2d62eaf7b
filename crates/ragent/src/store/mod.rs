//! SQLite owns all durable state. One connection in WAL mode behind a
//! mutex: the desktop app has one user, and every operation is short.
//! Primitives take a `&Connection` so callers can compose several into one
//! transaction with [`Store::with_tx`].

pub mod audit;
pub mod calls;
mod checkpoint;
pub mod failures;
pub mod file_mode;
pub mod inputs;
pub mod kv;
pub mod mandates;
pub mod messages;
pub mod migrations;
pub mod sessions;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;
use sqlite_backups::{self as backups, Database, DatabaseRestored};

use self::checkpoint::Checkpointer;
use rusqlite::config::DbConfig;

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
    #[error("cannot make the database file private: {0}")]
    FileMode(#[source] std::io::Error),
    #[error(transparent)]
    Backup(#[from] sqlite_backups::BackupError),
    /// A write call's move to or from `running` outside a transaction
    /// that commits with a full sync (see [`Store::with_durable_tx`]).
    #[error("call {0} changes state in a transaction that would not survive a power loss")]
    NotDurable(String),
    /// A call offered to the store as already run that had to be stored
    /// first: a write (its `running` move is stored before it is sent) or
    /// one that waits for the user.
    #[error("call {0} is not a read allowed without asking: it cannot run before it is stored")]
    RunBeforeStoring(String),
}

impl StoreError {
    /// SQLite found no room on the disk for what it had to write
    /// (`SQLITE_FULL`): the change was not made.
    pub fn is_disk_full(&self) -> bool {
        let sqlite = match self {
            StoreError::Sqlite(error) | StoreError::Migration { source: error, .. } => error,
            _ => return false,
        };
        sqlite.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
    }
}

/// More than the distinct statements the store runs.
const STATEMENT_CACHE: usize = 64;

/// The database.
#[derive(Debug)]
pub struct Store {
    /// Declared before `checkpoints`, so dropped first: its commit hook
    /// holds a wake of the checkpoint thread, which ends once all are gone.
    conn: Mutex<Connection>,
    /// `None` for a database in memory, or if the thread could not start.
    checkpoints: Option<Checkpointer>,
    /// What this start did about a damaged database, to tell the user.
    restored: Option<DatabaseRestored>,
    /// The database file and when its next daily copy is due (ms); `None`
    /// in memory.
    copies: Option<(PathBuf, AtomicI64)>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database file, which
    /// with its `-wal` and `-shm` is readable by its owner only. A damaged
    /// file is kept aside and the newest good copy put in its place; a copy
    /// is made before a schema upgrade and once a day
    /// (`sqlite_backups`).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let restored = backups::restore_if_damaged(Database::Assistant, path)?;
        file_mode::prepare(path).map_err(StoreError::FileMode)?;
        let conn = Connection::open(path)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        let known = migrations::known();
        if (1..known).contains(&version) {
            backups::back_up(&conn, path, &format!("before-v{known}"))?;
        }
        let mut store = Self::setup(conn)?;
        store.restored = restored;
        file_mode::narrow_companions(path).map_err(StoreError::FileMode)?;
        {
            let conn = store.conn.get_mut().map_err(|_| StoreError::Poisoned)?;
            // A copy that cannot be made is no reason not to start.
            if let Err(error) = backups::back_up_if_due(conn, path) {
                tracing::warn!(%error, "no daily copy of the database this time");
            }
        }
        store.copies = Some((path.to_owned(), AtomicI64::new(backups::next_due(path))));
        if let Some(checkpoints) = Checkpointer::start(path) {
            let conn = store.conn.get_mut().map_err(|_| StoreError::Poisoned)?;
            checkpoints.watch(conn)?;
            store.checkpoints = Some(checkpoints);
        }
        Ok(store)
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
        // A secret deleted or replaced (the fallback keeps them here) is
        // overwritten with zeros, not left in a free part of a page.
        conn.pragma_update(None, "secure_delete", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // Every statement is prepared once per connection and reused: a
        // tool round runs a few dozen, and compiling them is most of their cost.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Plans that do not depend on bound values: otherwise SQLite
        // re-prepares a cached statement whose parameter feeds an ORDER BY
        // query each time it is bound, which is most of the store's reads.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        migrations::migrate(&mut conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
            checkpoints: None,
            restored: None,
            copies: None,
        })
    }

    /// Makes the day's copy when it is due: an app left open for days
    /// still keeps one a day. A copy that cannot be made is logged and
    /// tried again a day later.
    pub fn keep_daily_copy(&self) {
        let Some((path, next_due)) = &self.copies else {
            return;
        };
        let now = backups::now_ms();
        if now < next_due.load(Ordering::Relaxed) {
            return;
        }
        next_due.store(now + backups::EVERY.as_millis() as i64, Ordering::Relaxed);
        let made = self
            .lock()
            .map_err(|error| error.to_string())
            .and_then(|conn| backups::back_up_if_due(&conn, path).map_err(|e| e.to_string()));
        if let Err(error) = made {
            tracing::warn!(%error, "no daily copy of the database this time");
        }
    }

    /// What this start did about a damaged database, if it was damaged.
    pub fn restored(&self) -> Option<&DatabaseRestored> {
        self.restored.as_ref()
    }

    /// The latest moment anything was recorded (a message, a card, a call's
    /// move, an audit entry, a session's use), in ms: the agent's clock
    /// starts no earlier, whatever the system clock says. Reads the newest
    /// row of each table, not the whole table.
    pub fn latest_moment(&self) -> Result<i64, StoreError> {
        let conn = self.lock()?;
        let moment = conn.query_row(
            "SELECT max(
                coalesce((SELECT created_at FROM messages ORDER BY rowid DESC LIMIT 1), 0),
                coalesce((SELECT created_at FROM batches ORDER BY rowid DESC LIMIT 1), 0),
                coalesce((SELECT at FROM tool_call_history ORDER BY rowid DESC LIMIT 1), 0),
                coalesce((SELECT at FROM audit_log ORDER BY rowid DESC LIMIT 1), 0),
                coalesce((SELECT max(updated_at) FROM sessions), 0))",
            [],
            |row| row.get(0),
        )?;
        Ok(moment)
    }

    /// Copies the log into the database and truncates it. The log keeps
    /// every page as it was written, a secret's old value too, until it
    /// starts over; after this no old page image is left on disk.
    pub fn scrub_log(&self) -> Result<(), StoreError> {
        let conn = self.lock()?;
        // SQLite refuses a checkpoint while the thread runs one.
        let _copying = self.checkpoints.as_ref().map(Checkpointer::hold);
        let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))?;
        if busy != 0 {
            tracing::warn!("the log could not be emptied yet; it is on the next write of a secret");
        }
        Ok(())
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

    /// Runs `f` in one immediate transaction: everything or nothing. The
    /// `BEGIN` and `COMMIT` statements are cached like any other: a tool
    /// round runs two transactions, and compiling them each time shows.
    pub fn with_tx<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.lock()?;
        in_transaction(&conn, f)
    }

    /// [`with_tx`](Store::with_tx) whose commit survives a power loss, not
    /// only a killed process: the log is synced to the disk before the
    /// commit returns (`synchronous = FULL`). For the moves of a write call
    /// that say it is about to be sent and how it ended: the row that says
    /// a write is `running` must be there after any crash, or the write
    /// could be sent again or forgotten. Everything else commits with
    /// `NORMAL`, which in WAL mode syncs only at checkpoints.
    pub fn with_durable_tx<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.lock()?;
        // SQLite takes the level only outside a transaction.
        run_cached(&conn, "PRAGMA synchronous = FULL")?;
        let _normal_after = NormalSyncAfter(&conn);
        in_transaction(&conn, f)
    }
}

/// Runs `f` in one immediate transaction on `conn`.
fn in_transaction<T, E: From<StoreError>>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, E>,
) -> Result<T, E> {
    run_cached(conn, "BEGIN IMMEDIATE")?;
    // Rolls back if `f` fails or panics, or the commit fails.
    let open = OpenTransaction(conn);
    let value = f(conn)?;
    run_cached(conn, "COMMIT")?;
    drop(open);
    Ok(value)
}

/// Whether commits on `conn` now sync the log before they return.
pub fn commits_durably(conn: &Connection) -> Result<bool, StoreError> {
    let level: i64 = conn
        .prepare_cached("PRAGMA synchronous")?
        .query_row([], |row| row.get(0))?;
    // 2 is FULL, 3 EXTRA.
    Ok(level >= 2)
}

/// Puts the connection back to `synchronous = NORMAL` when dropped, after
/// the durable transaction committed or rolled back.
struct NormalSyncAfter<'a>(&'a Connection);

impl Drop for NormalSyncAfter<'_> {
    fn drop(&mut self) {
        if let Err(error) = run_cached(self.0, "PRAGMA synchronous = NORMAL") {
            tracing::error!(%error, "the store could not go back to normal sync");
        }
    }
}

fn run_cached(conn: &Connection, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

/// A transaction begun on the connection, rolled back when dropped unless
/// it was committed.
struct OpenTransaction<'a>(&'a Connection);

impl Drop for OpenTransaction<'_> {
    fn drop(&mut self) {
        if !self.0.is_autocommit()
            && let Err(error) = self.0.execute_batch("ROLLBACK")
        {
            tracing::error!(%error, "a failed transaction could not be rolled back");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_moment_is_the_newest_thing_recorded() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.latest_moment().unwrap(), 0, "nothing recorded yet");
        store
            .with_conn(|c| sessions::create(c, "s1", "first", 5_000))
            .unwrap();
        store
            .with_conn(|c| sessions::create(c, "s2", "second", 3_000))
            .unwrap();
        assert_eq!(store.latest_moment().unwrap(), 5_000);
        store
            .with_conn(|c| sessions::touch(c, "s2", 9_000))
            .unwrap();
        assert_eq!(store.latest_moment().unwrap(), 9_000);
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn the_database_and_its_wal_and_shm_are_readable_by_the_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.db");
        let store = Store::open(&path).unwrap();
        store.with_conn(|c| kv::vault_id(c, 1)).unwrap();
        let [wal, shm] = file_mode::companions(&path);
        for file in [&path, &wal, &shm] {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_older_world_readable_database_is_made_private_when_opened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.db");
        drop(Store::open(&path).unwrap());
        let [wal, shm] = file_mode::companions(&path);
        // As a crash would leave them: the log and index files still there.
        for file in [&path, &wal, &shm] {
            if !file.exists() {
                std::fs::write(file, b"").unwrap();
            }
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let _store = Store::open(&path).unwrap();
        for file in [&path, &wal, &shm] {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
    }

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

    #[test]
    fn a_cached_read_is_not_compiled_again_for_each_new_value() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("agent.db")).unwrap();
        let sql = "SELECT id FROM messages WHERE session_id = ?1 ORDER BY id DESC";
        let reprepared = store
            .with_conn(|c| {
                for session in ["a", "b", "c", "d"] {
                    let mut stmt = c.prepare_cached(sql)?;
                    let ids: Vec<i64> = stmt
                        .query_map([session], |row| row.get(0))?
                        .collect::<Result<_, _>>()?;
                    assert!(ids.is_empty());
                }
                let stmt = c.prepare_cached(sql)?;
                Ok::<_, StoreError>(stmt.get_status(rusqlite::StatementStatus::RePrepare))
            })
            .unwrap();
        assert_eq!(reprepared, 0);
    }

    fn sync_level(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_durable_transaction_commits_with_full_sync_and_others_with_normal() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("agent.db")).unwrap();
        let normal = store
            .with_tx(|tx| Ok::<_, StoreError>(sync_level(tx)))
            .unwrap();
        assert_eq!(normal, 1, "NORMAL");
        let inside = store
            .with_durable_tx(|tx| Ok::<_, StoreError>((sync_level(tx), commits_durably(tx)?)))
            .unwrap();
        assert_eq!(inside, (2, true), "FULL inside the durable transaction");
        let after = store
            .with_conn(|c| Ok::<_, StoreError>(sync_level(c)))
            .unwrap();
        assert_eq!(after, 1, "back to NORMAL after it");

        let failed = store.with_durable_tx(|tx| {
            sessions::create(tx, "s", "新对话", 1)?;
            Err::<(), _>(StoreError::NotFound("on purpose".into()))
        });
        assert!(failed.is_err());
        assert!(store.with_conn(sessions::list).unwrap().is_empty());
        let after = store
            .with_conn(|c| Ok::<_, StoreError>(sync_level(c)))
            .unwrap();
        assert_eq!(after, 1, "back to NORMAL after a rollback too");
    }

    #[test]
    fn a_failed_transaction_leaves_nothing_and_the_next_one_runs() {
        let store = Store::open_in_memory().unwrap();
        let failed = store.with_tx(|tx| {
            sessions::create(tx, "s", "新对话", 1)?;
            Err::<(), _>(StoreError::NotFound("on purpose".into()))
        });
        assert!(failed.is_err());
        let sessions_now = store.with_conn(sessions::list).unwrap();
        assert!(sessions_now.is_empty(), "the insert was rolled back");

        store
            .with_tx(|tx| sessions::create(tx, "s", "新对话", 2))
            .unwrap();
        assert_eq!(store.with_conn(sessions::list).unwrap().len(), 1);
    }

    /// Pages in the log file of the database at `path`.
    fn log_pages(store: &Store, path: &Path) -> i64 {
        let mut log = path.as_os_str().to_owned();
        log.push("-wal");
        let bytes = std::fs::metadata(&log).map_or(0, |m| m.len());
        let page_size: i64 = store
            .with_conn(|c| {
                c.query_row("PRAGMA page_size", [], |r| r.get(0))
                    .map_err(StoreError::from)
            })
            .unwrap();
        // A log frame is a page and its 24-byte header.
        i64::try_from(bytes).unwrap() / (page_size + 24)
    }

    #[test]
    fn commits_leave_checkpoints_to_their_own_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.db");
        let store = Store::open(&path).unwrap();
        let automatic: i64 = store
            .with_conn(|c| {
                c.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
                    .map_err(StoreError::from)
            })
            .unwrap();
        assert_eq!(automatic, 0, "no commit checkpoints by itself");

        let before = std::fs::metadata(&path).unwrap().len();
        let mut sessions_made = 0;
        while log_pages(&store, &path) < i64::from(checkpoint::WAKE_EVERY_PAGES) {
            store
                .with_tx(|tx| sessions::create(tx, &format!("s{sessions_made}"), "新对话", 1))
                .unwrap();
            sessions_made += 1;
        }
        // The sessions reach the database file only through a checkpoint.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::metadata(&path).unwrap().len() == before {
            assert!(
                std::time::Instant::now() < deadline,
                "the checkpoint thread never copied the log"
            );
            std::thread::yield_now();
        }
        drop(store);
        let reopened = Store::open(&path).unwrap();
        assert_eq!(
            reopened.with_conn(sessions::list).unwrap().len(),
            sessions_made
        );
    }

    #[test]
    fn steady_commits_do_not_grow_the_log_without_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.db");
        let store = Store::open(&path).unwrap();
        // Commits without a pause, as in a long run of tool rounds: the
        // thread's copies never find the log fully copied when a commit
        // begins, so only a restart keeps the log short.
        let commits = 10 * i64::from(checkpoint::RESTART_AT_PAGES);
        for i in 0..commits {
            store
                .with_tx(|tx| sessions::create(tx, &format!("s{i}"), "新对话", i))
                .unwrap();
        }
        // The log restarts after the commit that takes it past the
        // threshold, so it is never longer by more than one commit.
        let longest = log_pages(&store, &path);
        assert!(
            longest < i64::from(checkpoint::RESTART_AT_PAGES) + 16,
            "the log reached {longest} pages over {commits} commits"
        );
        assert_eq!(
            store.with_conn(sessions::list).unwrap().len(),
            usize::try_from(commits).unwrap()
        );
    }

    #[test]
    fn an_app_left_open_keeps_a_copy_a_day_between_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.db");
        let store = Store::open(&path).unwrap();
        assert_eq!(backups::copies(&path).len(), 1, "the start's copy");
        store.keep_daily_copy();
        assert_eq!(backups::copies(&path).len(), 1, "not due yet");

        // A day passes: the copy is a day old, and the next is due.
        let (copy, taken_at) = backups::copies(&path).remove(0);
        let name = copy.file_name().unwrap().to_string_lossy().into_owned();
        let older = name.replacen(
            &taken_at.to_string(),
            &(taken_at - 86_400_000).to_string(),
            1,
        );
        std::fs::rename(&copy, copy.with_file_name(older)).unwrap();
        if let Some((_, next_due)) = &store.copies {
            next_due.store(0, Ordering::Relaxed);
        }
        store.keep_daily_copy();
        assert_eq!(backups::copies(&path).len(), 2);
    }
}
