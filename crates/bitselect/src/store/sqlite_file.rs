//! The shop's SQLite file: opening, WAL, per-connection settings, a small
//! pool of connections, the call's transaction ([`CallTx`]) and running the
//! migrations of `sqlite_schema.rs`.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use sqlite_backups::Database;

use super::sqlite_schema::{MIGRATIONS, SCHEMA_VERSION};
use crate::error::Result;

/// How long a connection waits for another writer before giving up. Writes
/// are short, so this only matters under heavy contention.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections kept open between calls, at most this many.
const IDLE_CONNECTIONS: usize = 8;

/// The database file and its connections. Opening a connection costs more
/// than most calls (SQLite reads the schema anew), so finished connections
/// wait in a small idle list for the next call.
#[derive(Debug)]
pub struct Db {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Db {
    /// Opens (creating if needed) the file, switches it to WAL and brings the
    /// schema up to date. The file is readable by its owner only.
    pub fn open(path: &Path) -> Result<Self> {
        // A damaged file is kept aside and the newest good copy put back
        // (the app does this before it starts its shop, and says so; a
        // shop started on its own says so in its log).
        sqlite_backups::restore_if_damaged(Database::Shop, path).map_err(backup_failed)?;
        sqlite_backups::private_file(path).map_err(|source| crate::error::ShopError::DataDir {
            path: path.to_owned(),
            source,
        })?;
        let db = Self {
            path: path.to_owned(),
            idle: Mutex::new(Vec::new()),
        };
        let conn = db.open_connection()?;
        // WAL is a property of the file: set once, every connection sees it.
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(%mode, "SQLite refused WAL mode; continuing with it");
        }
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if (1..SCHEMA_VERSION).contains(&version) {
            sqlite_backups::back_up(&conn, path, &format!("before-v{SCHEMA_VERSION}"))
                .map_err(backup_failed)?;
        }
        migrate(&conn)?;
        Ok(db)
    }

    /// Makes the day's copy of the database, if it has none yet (the shop
    /// calls it once seeded). A copy that cannot be made is no reason not
    /// to serve: it is logged.
    pub fn keep_daily_copy(&self) {
        let copied = self
            .open_connection()
            .map_err(|error| error.to_string())
            .and_then(|conn| {
                sqlite_backups::back_up_if_due(&conn, &self.path).map_err(|error| error.to_string())
            });
        if let Err(error) = copied {
            tracing::warn!(%error, "no daily copy of the shop's database this time");
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A connection of its own for one call: an idle one, or a new one. Each
    /// concurrent call holds a different connection, so calls really run
    /// concurrently and SQLite's locking decides who writes when.
    pub fn connect(&self) -> Result<PooledConnection<'_>> {
        let idle = self.idle_list().pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.open_connection()?,
        };
        Ok(PooledConnection {
            db: self,
            conn: Some(conn),
        })
    }

    /// A new connection that is not returned to the idle list.
    pub fn open_connection(&self) -> Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(crate::store::sqlite::STATEMENT_CACHE);
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")?;
        // Plans that do not depend on bound values: otherwise SQLite compiles
        // a cached statement again each time a parameter that could change
        // its plan is bound, and the statement cache saves nothing.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        Ok(conn)
    }

    fn idle_list(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        // The list holds only whole connections; a panic elsewhere leaves it usable.
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn backup_failed(error: sqlite_backups::BackupError) -> crate::error::ShopError {
    crate::error::ShopError::Store(error.to_string())
}

/// A connection lent for one call; back to the idle list when dropped.
pub struct PooledConnection<'a> {
    db: &'a Db,
    conn: Option<Connection>,
}

impl Deref for PooledConnection<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        // Some from creation until drop.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for PooledConnection<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for PooledConnection<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        // Only a connection with no transaction left open goes back.
        if conn.is_autocommit() {
            let mut idle = self.db.idle_list();
            if idle.len() < IDLE_CONNECTIONS {
                idle.push(conn);
            }
        }
    }
}

/// The one kind of transaction the shop runs (each call, the migrations,
/// the seed), begun and ended with cached statements:
/// `Connection::transaction` compiles `BEGIN` and `COMMIT` anew each time,
/// which cost a lookup by code more than its query. Rolled back if dropped
/// before [`CallTx::commit`].
#[derive(Debug)]
pub struct CallTx<'c> {
    conn: &'c Connection,
    open: bool,
}

impl<'c> CallTx<'c> {
    /// A read: a consistent snapshot, taken at its first statement.
    pub fn read(conn: &'c Connection) -> Result<Self> {
        Self::begin(conn, "BEGIN")
    }

    /// A write that takes the write lock at once, so the checks it makes
    /// cannot be invalidated by another writer before it commits.
    pub fn write(conn: &'c Connection) -> Result<Self> {
        Self::begin(conn, "BEGIN IMMEDIATE")
    }

    fn begin(conn: &'c Connection, sql: &str) -> Result<Self> {
        conn.prepare_cached(sql)?.execute([])?;
        Ok(Self { conn, open: true })
    }

    pub fn commit(mut self) -> Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.open = false;
        Ok(())
    }
}

impl Deref for CallTx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for CallTx<'_> {
    fn drop(&mut self) {
        if self.open
            && !self.conn.is_autocommit()
            && let Err(error) = self.conn.execute_batch("ROLLBACK")
        {
            tracing::error!(%error, "a failed call's transaction could not be rolled back");
        }
    }
}

/// Brings the schema up to date. Foreign keys are off while it runs (a
/// rebuilt table is dropped while others still refer to it; SQLite ignores
/// the setting inside a transaction) and checked before the commit.
fn migrate(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "foreign_keys", false)?;
    let outcome = migrate_unchecked(conn);
    conn.pragma_update(None, "foreign_keys", true)?;
    outcome
}

fn migrate_unchecked(conn: &Connection) -> Result<()> {
    let tx = CallTx::write(conn)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(crate::error::ShopError::Corrupt(format!(
            "数据库版本 {current} 比本程序支持的 {SCHEMA_VERSION} 新，请升级 bitselect"
        )));
    }
    let applied = usize::try_from(current)
        .map_err(|_| crate::error::ShopError::Corrupt(format!("数据库版本号无效：{current}")))?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        tx.execute_batch(sql)?;
        let version = index as i64 + 1;
        tx.pragma_update(None, "user_version", version)?;
        tracing::info!(version, "applied schema migration");
    }
    let broken: Option<String> = tx
        .query_row("PRAGMA foreign_key_check", [], |row| row.get(0))
        .optional()?;
    if let Some(table) = broken {
        return Err(crate::error::ShopError::Corrupt(format!(
            "迁移后表 {table} 有引用不存在的行"
        )));
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_shop_database_and_its_wal_and_shm_are_readable_by_the_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        let db = Db::open(&path).unwrap();
        let _conn = db.connect().unwrap();
        for suffix in ["", "-wal", "-shm"] {
            let file = dir.path().join(format!("shop.db{suffix}"));
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", file.display());
        }
    }

    #[test]
    fn migrations_run_once_and_set_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        let db = Db::open(&path).unwrap();
        // Opening again finds the schema current and changes nothing.
        Db::open(&path).unwrap();
        let conn = db.connect().unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn a_finished_connection_is_lent_again_and_a_busy_one_is_not_shared() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("shop.db")).unwrap();
        {
            let first = db.connect().unwrap();
            first.execute_batch("CREATE TEMP TABLE marker(x)").unwrap();
        }
        let again = db.connect().unwrap();
        let has_marker = |conn: &Connection| {
            conn.query_row("SELECT count(*) FROM temp.marker", [], |row| {
                row.get::<_, i64>(0)
            })
            .is_ok()
        };
        assert!(has_marker(&again), "the finished connection came back");
        let concurrent = db.connect().unwrap();
        assert!(!has_marker(&concurrent), "a concurrent call got its own");
        drop((again, concurrent));

        let left_open = db.connect().unwrap();
        left_open.execute_batch("BEGIN IMMEDIATE").unwrap();
        drop(left_open);
        assert!(db.idle_list().iter().all(Connection::is_autocommit));
    }

    #[test]
    fn a_call_left_unfinished_is_rolled_back_and_its_connection_lent_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("shop.db")).unwrap();
        let scratch_rows = |conn: &Connection| -> Option<i64> {
            conn.query_row("SELECT count(*) FROM scratch", [], |row| row.get(0))
                .ok()
        };
        {
            let conn = db.connect().unwrap();
            let tx = CallTx::write(&conn).unwrap();
            tx.execute_batch("CREATE TABLE scratch(x); INSERT INTO scratch VALUES (1);")
                .unwrap();
            assert_eq!(scratch_rows(&tx), Some(1));
            // Dropped without a commit, as when a call fails half-way.
        }
        let again = db.connect().unwrap();
        assert!(
            again.is_autocommit(),
            "the connection was lent again, clean"
        );
        assert_eq!(scratch_rows(&again), None, "nothing of the call stayed");

        let tx = CallTx::write(&again).unwrap();
        tx.execute_batch("CREATE TABLE scratch(x); INSERT INTO scratch VALUES (1);")
            .unwrap();
        tx.commit().unwrap();
        let read = CallTx::read(&again).unwrap();
        assert_eq!(scratch_rows(&read), Some(1), "a committed call stays");
        read.commit().unwrap();
    }

    #[test]
    fn a_version_1_database_upgrades_and_its_rows_go_to_the_demo_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            conn.execute_batch(
                "INSERT INTO product VALUES ('P', 'p', 'c', 's', 'b', 'o', '在售', '{}', '[]');
                 INSERT INTO sku VALUES ('S', 'P', 's', '{}', 100, 5, '在售');
                 INSERT INTO coupon VALUES ('C', 'c', '满减', 0, 10, NULL, NULL, 0, 9);
                 INSERT INTO user_coupon VALUES ('C', '已使用', '1', 0, 1);
                 INSERT INTO cart_item VALUES ('S', 2, 100, 0);
                 INSERT INTO orders VALUES ('1', '已签收', 100, 10, 90, 'C', 'n', 'p', 'a',
                                            'T1', 0, 1, 2, 3, NULL);
                 INSERT INTO order_item VALUES ('1', 1, 'S', 's', 100, 1);
                 INSERT INTO parcel VALUES ('T1', '1');
                 INSERT INTO parcel_event VALUES ('T1', 1, 2, 'x', 'y');
                 INSERT INTO after_sale VALUES ('AS1001', '1', 'S', '换货', 'r', '处理中', 4, NULL);
                 INSERT INTO ticket VALUES ('TK000001', '1', 't', 'd', '待处理', 5);
                 INSERT INTO idempotency VALUES ('k', 'pay_order', 'h', '{}', 6);",
            )
            .unwrap();
        }
        let db = Db::open(&path).unwrap();
        let conn = db.connect().unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let demo: (i64, String) = conn
            .query_row("SELECT id, sub FROM users", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap();
        assert_eq!(demo, (1, "demo".to_owned()));
        for table in [
            "user_coupon",
            "cart_item",
            "orders",
            "parcel",
            "after_sale",
            "ticket",
            "idempotency",
        ] {
            let owners: Vec<i64> = conn
                .prepare(&format!("SELECT user_id FROM {table}"))
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(owners, [1], "{table}");
        }
        let lines: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM order_item JOIN orders USING (order_no)",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(lines, 1, "order lines still find their order");
        let foreign_keys: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |row| row.get(0))
            .unwrap();
        assert_eq!(foreign_keys, 1, "a lent connection checks references");
        // No user column takes a default: a row always names its user.
        let err = conn
            .execute(
                "INSERT INTO cart_item (sku_code, quantity, added_price_fen, added_at)
                      VALUES ('S', 1, 100, 0)",
                [],
            )
            .unwrap_err();
        assert!(err.to_string().contains("NOT NULL"), "{err}");
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        let db = Db::open(&path).unwrap();
        db.connect()
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = Db::open(&path).unwrap_err();
        assert!(err.to_string().contains("升级"), "{err}");
    }
}
