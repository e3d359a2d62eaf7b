//! The seam over PostgreSQL: a pool of tokio-postgres connections, each
//! driven by the thread that holds it ([`super::postgres_links`]), so the
//! synchronous domain runs unchanged on whichever thread calls it (a
//! blocking thread of the server, a test's thread).
//!
//! A read is a `REPEATABLE READ READ ONLY` snapshot; a write is
//! `SERIALIZABLE`, which gives the domain's read-check-write steps the
//! guarantee SQLite's single writer gives them. A write that loses a race
//! with another (a serialization failure, a deadlock, or a unique key
//! another transaction took first) is rolled back and run again, a bounded
//! number of times; the conditional stock update stays the rule that keeps
//! stock from going below zero.
//!
//! Round trips are what a call costs here, each a wait of the calling
//! thread on its connection: a transaction's `BEGIN` travels with its
//! first statement. A read's first `SELECT` runs on its own, outside any
//! transaction (one statement is one snapshot), so a read of one statement
//! waits once and PostgreSQL begins and ends nothing for it. A read that
//! goes on to a second statement is run again from its start in a
//! `REPEATABLE READ` transaction, and its connection remembers the first
//! statement to begin that transaction at once next time.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use super::load_gate::LoadGate;
use super::postgres_links::{Link, Links, Prepared, TakeError, Taken};
use super::postgres_schema::MIGRATIONS;
use super::{Column, Columns, Conn, Dialect, EachRow, Row, ToValue, TxKind, Value};
use crate::error::{Result, ShopError};

/// Connections each instance keeps open at most.
pub const POOL_SIZE: usize = 16;

/// The longest a call waits for a connection: past it the call is shed.
const WAIT_FOR_CONNECTION: Duration = Duration::from_secs(5);

/// How many times a write that lost a race runs in all.
const ATTEMPTS: u32 = 30;

/// The migrations of concurrent instances starting at once take turns
/// under this advisory lock.
const MIGRATION_LOCK: i64 = 0x6269_7473_656c_6563; // "bitselec"

/// What PostgreSQL spells differently from SQLite. A list is an array, not
/// a subquery to join: the planner then looks each code up in the column's
/// index, where it hash-joined a scan of the whole table for `IN (SELECT
/// json_array_elements_text(..))` (it guesses a set function returns 100
/// rows).
pub(crate) const DIALECT: Dialect = Dialect {
    in_json_list: "= ANY (ARRAY(SELECT json_array_elements_text(CAST(? AS json))))",
};

/// The shop's PostgreSQL database.
pub(crate) struct PgStore {
    links: Links,
    /// The queue for the pool's connections, bounded.
    load: LoadGate,
    /// Where it is, without the password: for logs.
    target: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .finish()
    }
}

fn store_error(message: impl std::fmt::Display) -> ShopError {
    ShopError::Store(message.to_string())
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/db`, or the
    /// key=value form) and brings the schema up to date.
    pub(crate) fn connect(url: &str) -> Result<Self> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| store_error(format!("数据库地址无效：{e}")))?;
        let target = describe(&config);
        let store = Self {
            links: Links::new(config, POOL_SIZE, WAIT_FOR_CONNECTION),
            load: LoadGate::default(),
            target,
        };
        store.migrate()?;
        Ok(store)
    }

    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// The instance shed a call a moment ago: the database is too slow for
    /// the calls coming in.
    pub(crate) fn overloaded(&self) -> bool {
        self.load.overloaded()
    }

    /// A connection for a call, or why there is none.
    fn take(&self) -> Result<Taken<'_>> {
        self.links.take().map_err(|error| match error {
            // Waited for a connection the others held: too busy. A database
            // merely out of reach fails the other way.
            TakeError::Busy => self.load.shed(format!(
                "商城繁忙：{} 秒内等不到数据库连接",
                WAIT_FOR_CONNECTION.as_secs()
            )),
            TakeError::Open(why) => ShopError::Unavailable(format!("无法连接数据库：{why}")),
        })
    }

    /// Runs `call` in one transaction of `kind`; a write that lost a race
    /// runs again, up to [`ATTEMPTS`] times in all, after a short pause that
    /// grows with each attempt.
    pub(crate) fn run<T>(
        &self,
        kind: TxKind,
        mut call: impl FnMut(&dyn Conn) -> Result<T>,
    ) -> Result<T> {
        let mut attempt = 1;
        loop {
            match self.run_once(kind, &mut call) {
                Err(error) if kind == TxKind::Write && attempt < ATTEMPTS && lost_race(&error) => {
                    tracing::debug!(attempt, %error, "a write lost a race; running it again");
                    std::thread::sleep(backoff(attempt));
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }

    fn run_once<T>(
        &self,
        kind: TxKind,
        call: &mut impl FnMut(&dyn Conn) -> Result<T>,
    ) -> Result<T> {
        let waiting = self.load.wait_turn()?;
        let mut link = self.take()?;
        drop(waiting);
        let begin = match kind {
            TxKind::Read => "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
            TxKind::Write => "BEGIN ISOLATION LEVEL SERIALIZABLE",
        };
        let mut alone = if kind == TxKind::Read {
            Alone::Allowed
        } else {
            Alone::Never
        };
        let (outcome, begun) = loop {
            let conn = PgConn {
                link: &link,
                begin: Cell::new(Some(begin)),
                alone: Cell::new(alone),
                first_alone: RefCell::new(None),
            };
            let outcome = call(&conn);
            match conn.alone.get() {
                // It ran its first statement on its own and wanted another:
                // nothing is open, and it runs again in a transaction.
                Alone::Exceeded => alone = Alone::Never,
                // Its one statement was its own transaction, ended with it.
                Alone::Ran => {
                    link.ended();
                    return outcome.map_err(unavailable_if_cut_off);
                }
                Alone::Allowed | Alone::Never => break (outcome, conn.begin.get().is_none()),
            }
        };
        if !begun {
            // No statement was sent (none ran, or the first failed to be
            // prepared): no transaction was begun. A connection the server
            // ended while it sat in the pool fails here.
            link.ended();
            return outcome.map_err(unavailable_if_cut_off);
        }
        let outcome = match (outcome, kind) {
            (Ok(out), TxKind::Read) => {
                // The snapshot is read: a failed end (the connection cut
                // off) changes nothing of it, and the pool drops the link.
                match link.block_on(link.client().batch_execute("COMMIT")) {
                    Ok(()) => link.ended(),
                    Err(error) => {
                        tracing::debug!(%error, "a read's transaction did not end cleanly");
                    }
                }
                return Ok(out);
            }
            (Ok(out), TxKind::Write) => link
                .block_on(link.client().batch_execute("COMMIT"))
                .map(|()| out)
                .map_err(ShopError::from),
            (Err(error), _) => Err(error),
        };
        if outcome.is_ok() {
            link.ended();
        } else if !link.client().is_closed() {
            // A connection the server ended (while it sat in the pool, or
            // since) has nothing to roll back; one that cannot roll back is
            // broken, and the pool drops it.
            match link.block_on(link.client().batch_execute("ROLLBACK")) {
                Ok(()) => link.ended(),
                Err(error) => {
                    tracing::warn!(%error, "a failed call's transaction could not be rolled back");
                }
            }
        }
        outcome.map_err(unavailable_if_cut_off)
    }

    /// Gathers the tables' statistics now. PostgreSQL plans a statement
    /// from them, and its autovacuum gathers them only a minute or more
    /// after a bulk load: until then a table just filled is planned as if
    /// it held a few pages (whole scans where an index would serve). A
    /// failure costs only plans, so it is logged, not returned.
    pub(crate) fn analyze(&self) {
        let analyzed = self.take().and_then(|mut link| {
            link.block_on(link.client().batch_execute("ANALYZE"))?;
            link.ended();
            Ok(())
        });
        if let Err(error) = analyzed {
            tracing::warn!(%error, "the tables' statistics were not gathered");
        }
    }

    /// Brings the schema up to date, one migration a transaction, with
    /// other instances waiting on the advisory lock meanwhile.
    fn migrate(&self) -> Result<()> {
        let mut link = self
            .links
            .take()
            .map_err(|e| store_error(format!("无法连接数据库 {}：{e}", self.target)))?;
        let migrated = self.migrate_on(&link);
        let ended = match migrated {
            Ok(()) => true,
            Err(_) => link
                .block_on(link.client().batch_execute("ROLLBACK"))
                .is_ok(),
        };
        if ended {
            link.ended();
        }
        migrated
    }

    fn migrate_on(&self, link: &Link) -> Result<()> {
        let client = link.client();
        let current = link.block_on(async {
            client.batch_execute("BEGIN").await?;
            client
                .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            client
                .batch_execute(
                    "CREATE TABLE IF NOT EXISTS schema_version (
                         version    BIGINT PRIMARY KEY,
                         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                     )",
                )
                .await?;
            let current: i64 = client
                .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
                .await?
                .get(0);
            Ok::<_, tokio_postgres::Error>(current)
        })?;
        let latest = MIGRATIONS.len() as i64;
        if current > latest {
            return Err(ShopError::Corrupt(format!(
                "数据库版本 {current} 比本程序支持的 {latest} 新，请升级 bitselect"
            )));
        }
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            let version = index as i64 + 1;
            link.block_on(async {
                client.batch_execute(sql).await?;
                client
                    .execute(
                        "INSERT INTO schema_version (version) VALUES ($1)",
                        &[&version],
                    )
                    .await
            })?;
            tracing::info!(version, "applied PostgreSQL schema migration");
        }
        link.block_on(client.batch_execute("COMMIT"))?;
        Ok(())
    }
}

/// A database error that says the database is out of reach (the
/// connection closed, the server shutting down or starting, no connection
/// to be had) as [`ShopError::Unavailable`]; any other error as it is.
fn unavailable_if_cut_off(error: ShopError) -> ShopError {
    let ShopError::Postgres(cause) = &error else {
        return error;
    };
    let cut_off = cause.is_closed()
        || cause.code().is_some_and(|code| {
            // Class 08: connection exceptions; 57P01-03: the server is
            // shutting down, crashed, or not yet accepting connections.
            code.code().starts_with("08")
                || [
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                ]
                .contains(code)
        });
    if cut_off {
        // The server's own words where it sent any ("terminating connection
        // due to administrator command"); the driver's otherwise.
        let why = cause
            .as_db_error()
            .map_or_else(|| cause.to_string(), |db| db.message().to_owned());
        return ShopError::Unavailable(format!("数据库连接中断：{why}"));
    }
    error
}

/// Whether a write failed only because a concurrent one got there first, so
/// that running it again may well succeed.
fn lost_race(error: &ShopError) -> bool {
    let ShopError::Postgres(error) = error else {
        return false;
    };
    matches!(
        error.code(),
        Some(&SqlState::T_R_SERIALIZATION_FAILURE)
            | Some(&SqlState::T_R_DEADLOCK_DETECTED)
            | Some(&SqlState::UNIQUE_VIOLATION)
    )
}

/// 2, 4, 8 … ms up to 64 ms, with up to as much again at random, so that
/// writers that collided do not collide again in step.
fn backoff(attempt: u32) -> Duration {
    let base = 1u64 << attempt.min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    Duration::from_millis(base + nanos % (base + 1))
}

/// `user@host:port/db`, never the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|host| match host {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or_default(),
        config.get_dbname().unwrap_or_default()
    )
}

/// Whether `sql` is a `SELECT`, which writes nothing (a `WITH` may): the
/// only statement a read runs outside its `READ ONLY` transaction.
fn is_select(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|head| head.eq_ignore_ascii_case("SELECT"))
}

/// `?N` becomes `$N` and a bare `?` the next number, outside quoted text:
/// the one place statements are spelt for PostgreSQL.
pub(crate) fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut quoted = false;
    let mut highest = 0u32;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                    digits.push(d);
                    chars.next();
                }
                let number = match digits.parse::<u32>() {
                    Ok(number) => number,
                    Err(_) => highest + 1,
                };
                highest = highest.max(number);
                out.push('$');
                out.push_str(&number.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

/// One call's connection, inside its transaction.
struct PgConn<'a> {
    link: &'a Link,
    /// The transaction's `BEGIN` until it is sent, with the first statement.
    begin: Cell<Option<&'static str>>,
    alone: Cell<Alone>,
    /// The statement that ran on its own, until another follows it.
    first_alone: RefCell<Option<Arc<Prepared>>>,
}

/// Whether a read's statement runs on its own, outside a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alone {
    /// A read's first statement, if a `SELECT` its connection has not seen
    /// lead on to others, runs on its own.
    Allowed,
    /// The first statement ran on its own.
    Ran,
    /// A second statement followed one that ran on its own: the read must
    /// run again from its start, in a transaction.
    Exceeded,
    /// Every statement runs in the transaction (writes; a read run again).
    Never,
}

impl PgConn<'_> {
    fn prepare(&self, sql: &str) -> Result<Arc<Prepared>> {
        Ok(self.link.prepared(sql, placeholders)?)
    }

    /// Runs a read's `statement` (`sql` as the domain wrote it) on its own
    /// when it may, in the transaction otherwise.
    fn read<T>(
        &self,
        sql: &str,
        prepared: &Arc<Prepared>,
        run: impl std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        match self.alone.get() {
            Alone::Allowed if !prepared.leads_on() && is_select(sql) => {
                self.alone.set(Alone::Ran);
                self.first_alone.replace(Some(prepared.clone()));
                Ok(self.link.block_on(run)?)
            }
            _ => self.statement(run),
        }
    }

    /// Runs `run` in the transaction, unless a statement already ran on its
    /// own: then the read is to run again, and this statement fails.
    fn statement<T>(
        &self,
        run: impl std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        match self.alone.get() {
            Alone::Ran | Alone::Exceeded => {
                if let Some(first) = self.first_alone.take() {
                    first.note_leads_on();
                }
                self.alone.set(Alone::Exceeded);
                Err(ShopError::Store(
                    "一次读取有多条语句：改在一个事务中重读".to_owned(),
                ))
            }
            Alone::Allowed | Alone::Never => {
                self.alone.set(Alone::Never);
                self.in_transaction(run)
            }
        }
    }

    /// Runs `statement`, the transaction's `BEGIN` first if it has not been
    /// sent: both are written before either answer is awaited, and the
    /// connection keeps their order.
    fn in_transaction<T>(
        &self,
        statement: impl std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        let Some(begin) = self.begin.take() else {
            return Ok(self.link.block_on(statement)?);
        };
        let (begun, answer) = self.link.block_on(async {
            tokio::join!(biased; self.link.client().batch_execute(begin), statement)
        });
        begun?;
        Ok(answer?)
    }
}

/// A parameter as PostgreSQL receives it: integers fit the column's width
/// (the schema's are `BIGINT`), text goes to text and JSON alike.
#[derive(Debug)]
struct Bound<'a>(Value<'a>);

impl ToSql for Bound<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(value) => match *ty {
                Type::INT4 => i32::try_from(value)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(value)?.to_sql(ty, out),
                Type::BOOL => (value != 0).to_sql(ty, out),
                _ => value.to_sql(ty, out),
            },
            Value::Text(text) => match *ty {
                Type::JSON => {
                    out.extend_from_slice(text.as_bytes());
                    Ok(IsNull::No)
                }
                _ => text.to_sql(ty, out),
            },
        }
    }

    fn accepts(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::INT8
                | Type::INT4
                | Type::INT2
                | Type::BOOL
                | Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::JSON
                | Type::UNKNOWN
        )
    }

    to_sql_checked!();
}

fn bind<'a>(params: &'a [&'a dyn ToValue]) -> Vec<Bound<'a>> {
    params.iter().map(|param| Bound(param.to_value())).collect()
}

impl Columns for tokio_postgres::Row {
    fn column(&self, index: usize) -> Result<Option<Column<'_>>> {
        let Some(described) = self.columns().get(index) else {
            return Ok(None);
        };
        let column = match *described.type_() {
            Type::INT8 => self.try_get::<_, Option<i64>>(index)?.map(Column::Int),
            Type::INT4 => self
                .try_get::<_, Option<i32>>(index)?
                .map(|v| Column::Int(i64::from(v))),
            Type::INT2 => self
                .try_get::<_, Option<i16>>(index)?
                .map(|v| Column::Int(i64::from(v))),
            Type::BOOL => self
                .try_get::<_, Option<bool>>(index)?
                .map(|v| Column::Int(i64::from(v))),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                self.try_get::<_, Option<&str>>(index)?.map(Column::Text)
            }
            ref other => {
                return Err(ShopError::Corrupt(format!(
                    "第 {index} 列是商城不存的类型 {other}"
                )));
            }
        };
        Ok(Some(column.unwrap_or(Column::Null)))
    }
}

impl Conn for PgConn<'_> {
    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<u64> {
        let prepared = self.prepare(sql)?;
        let bound = bind(params);
        let refs: Vec<&(dyn ToSql + Sync)> =
            bound.iter().map(|b| b as &(dyn ToSql + Sync)).collect();
        self.statement(self.link.client().execute(&prepared.statement, &refs))
    }

    fn query(&self, sql: &str, params: &[&dyn ToValue], each: EachRow<'_>) -> Result<()> {
        let prepared = self.prepare(sql)?;
        let bound = bind(params);
        let refs: Vec<&(dyn ToSql + Sync)> =
            bound.iter().map(|b| b as &(dyn ToSql + Sync)).collect();
        let query = self.link.client().query(&prepared.statement, &refs);
        for row in &self.read(sql, &prepared, query)? {
            each(&Row::new(row))?;
        }
        Ok(())
    }

    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres_outside_quoted_text() {
        assert_eq!(
            placeholders("SELECT a FROM t WHERE b = ?2 AND c = ?1 AND d = '?'"),
            "SELECT a FROM t WHERE b = $2 AND c = $1 AND d = '?'"
        );
        assert_eq!(
            placeholders("x IN (?) AND y >= ? AND z = ?10"),
            "x IN ($1) AND y >= $2 AND z = $10"
        );
    }

    #[test]
    fn only_a_select_may_run_outside_a_read_s_transaction() {
        assert!(is_select("SELECT 1"));
        assert!(is_select("\n    select s.sku_code FROM sku s"));
        assert!(!is_select(
            "WITH gone AS (DELETE FROM cart_item RETURNING 1) SELECT 1"
        ));
        assert!(!is_select("UPDATE sku SET stock = 0"));
        assert!(!is_select("SEL"));
    }

    #[test]
    fn the_described_target_leaves_the_password_out() {
        let config: tokio_postgres::Config = "postgres://shop:s3cret@db.example:6543/bitselect"
            .parse()
            .unwrap();
        let described = describe(&config);
        assert_eq!(described, "postgres://shop@db.example:6543/bitselect");
    }
}
