//! The seam between the domain and a database: the few things the domain
//! asks of a connection (run a statement, read rows) with typed parameters
//! and typed column reads. SQLite implements it ([`sqlite`]); a transaction
//! is begun and ended by the shop's front door, never by the domain.
//!
//! Statements are written once, in the SQL both stores speak, with `?N`
//! placeholders (or bare `?`, numbered in order); a store that spells them
//! otherwise translates them in one place.

#[cfg(feature = "service")]
mod load_gate;
#[cfg(feature = "service")]
pub use load_gate::MAX_WAITING as MAX_WAITING_CALLS;
#[cfg(feature = "service")]
pub use postgres::POOL_SIZE as POOL_CONNECTIONS;
#[cfg(feature = "service")]
pub(crate) mod postgres;
#[cfg(feature = "service")]
mod postgres_links;
#[cfg(feature = "service")]
mod postgres_schema;
pub(crate) mod sqlite;
pub(crate) mod sqlite_file;
mod sqlite_schema;

pub use sqlite_schema::SCHEMA_VERSION;

use std::sync::Arc;

use self::sqlite_file::{CallTx, Db};
use crate::error::{Result, ShopError};

/// A parameter's value as the database receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Null,
    Int(i64),
    Text(&'a str),
}

/// What can be bound to a placeholder.
pub trait ToValue {
    fn to_value(&self) -> Value<'_>;
}

impl ToValue for i64 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(*self)
    }
}

impl ToValue for u32 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for i32 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value<'_> {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value<'_> {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

/// The parameters of one statement, in placeholder order.
#[macro_export]
#[doc(hidden)]
macro_rules! sql_params {
    () => { &[] as &[&dyn $crate::store::ToValue] };
    ($($value:expr),+ $(,)?) => {
        &[$(&$value as &dyn $crate::store::ToValue),+] as &[&dyn $crate::store::ToValue]
    };
}
pub(crate) use sql_params as params;

/// One column of a row, borrowed from the driver for as long as the row is
/// read: a text becomes a `String` only where the domain keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column<'r> {
    Null,
    Int(i64),
    Text(&'r str),
}

/// What a column can be read as; the column comes back when it cannot.
pub trait FromColumn: Sized {
    fn from_column(column: Column<'_>) -> std::result::Result<Self, Column<'_>>;
}

impl FromColumn for i64 {
    fn from_column(column: Column<'_>) -> std::result::Result<Self, Column<'_>> {
        match column {
            Column::Int(value) => Ok(value),
            other => Err(other),
        }
    }
}

impl FromColumn for String {
    fn from_column(column: Column<'_>) -> std::result::Result<Self, Column<'_>> {
        match column {
            Column::Text(value) => Ok(value.to_owned()),
            other => Err(other),
        }
    }
}

impl FromColumn for bool {
    fn from_column(column: Column<'_>) -> std::result::Result<Self, Column<'_>> {
        match column {
            Column::Int(value) => Ok(value != 0),
            other => Err(other),
        }
    }
}

impl<T: FromColumn> FromColumn for Option<T> {
    fn from_column(column: Column<'_>) -> std::result::Result<Self, Column<'_>> {
        match column {
            Column::Null => Ok(None),
            other => T::from_column(other).map(Some),
        }
    }
}

/// A row as a driver holds it, read one column at a time in place.
pub trait Columns {
    /// Column `index`, or `None` past the last.
    fn column(&self, index: usize) -> Result<Option<Column<'_>>>;
}

/// One row of a result, its columns in select order, read where the
/// driver holds it (a search reads dozens of rows for each call, and
/// copying each into a row of its own first cost as much as the
/// statement).
#[derive(Clone, Copy)]
pub struct Row<'r> {
    columns: &'r dyn Columns,
}

impl<'r> Row<'r> {
    pub fn new(columns: &'r dyn Columns) -> Self {
        Self { columns }
    }

    /// Column `index` read as `T`; a missing column or another type is a
    /// fault of the schema, not of the caller.
    pub fn get<T: FromColumn>(&self, index: usize) -> Result<T> {
        let column = self
            .columns
            .column(index)?
            .ok_or_else(|| ShopError::Corrupt(format!("结果没有第 {index} 列")))?;
        T::from_column(column).map_err(|found| {
            ShopError::Corrupt(format!(
                "第 {index} 列的类型不符（读到 {found:?}，要的是 {}）",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// What a query hands each row to, in order; its first error ends the query.
pub type EachRow<'a> = &'a mut dyn FnMut(&Row<'_>) -> Result<()>;

/// A connection inside the transaction of one call: what the domain asks of
/// a database.
pub trait Conn {
    /// Runs a statement; returns how many rows it changed.
    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<u64>;

    /// Runs a query and hands each row to `each`.
    fn query(&self, sql: &str, params: &[&dyn ToValue], each: EachRow<'_>) -> Result<()>;

    /// The few statements this store spells its own way.
    fn dialect(&self) -> &'static Dialect;
}

/// What the dialects spell differently, one value per store
/// (`sqlite::DIALECT`, `postgres::DIALECT`): everything else is the same SQL.
#[derive(Debug)]
pub struct Dialect {
    /// A column's membership in a JSON array of texts bound as one
    /// parameter, written after the column: `s.sku_code {in_json_list}`.
    pub in_json_list: &'static str,
}

impl dyn Conn + '_ {
    /// The first row, if any, read by `read`.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        read: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut read = Some(read);
        let mut first = None;
        self.query(sql, params, &mut |row| {
            if let Some(read) = read.take() {
                first = Some(read(row)?);
            }
            Ok(())
        })?;
        Ok(first)
    }

    /// The first row, which the statement always yields (an aggregate).
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        read: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, read)?
            .ok_or_else(|| ShopError::Corrupt(format!("查询没有返回行：{sql}")))
    }

    /// Every row, each read by `read`.
    pub fn query_all<T>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        mut read: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut all = Vec::new();
        self.query(sql, params, &mut |row| {
            all.push(read(row)?);
            Ok(())
        })?;
        Ok(all)
    }
}

/// The kinds of transaction a call runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    /// Reads only, from one consistent snapshot.
    Read,
    /// Reads and writes whose checks no concurrent writer can invalidate
    /// before the commit.
    Write,
}

/// The database the shop runs on; transactions are begun here, for the
/// shop's front door, and nowhere else.
#[derive(Debug, Clone)]
pub(crate) enum Store {
    Sqlite(Arc<Db>),
    #[cfg(feature = "service")]
    Postgres(Arc<postgres::PgStore>),
}

impl Store {
    /// Runs `call` in one transaction of `kind`, committed when it returns
    /// `Ok` and rolled back otherwise. `call` may run more than once if the
    /// store makes a transaction that lost a race with another start again.
    pub(crate) fn run<T>(
        &self,
        kind: TxKind,
        mut call: impl FnMut(&dyn Conn) -> Result<T>,
    ) -> Result<T> {
        match self {
            Self::Sqlite(db) => {
                let conn = db.connect()?;
                let tx = match kind {
                    TxKind::Read => CallTx::read(&conn)?,
                    TxKind::Write => CallTx::write(&conn)?,
                };
                let out = call(&*tx)?;
                tx.commit()?;
                Ok(out)
            }
            #[cfg(feature = "service")]
            Self::Postgres(pg) => pg.run(kind, call),
        }
    }

    /// Says that many rows were just written (a first seed, load-test
    /// users), so that the next calls are planned on what the tables now
    /// hold (see [`postgres::PgStore::analyze`]). SQLite plans without
    /// statistics.
    pub(crate) fn loaded(&self) {
        match self {
            Self::Sqlite(_) => {}
            #[cfg(feature = "service")]
            Self::Postgres(pg) => pg.analyze(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The store is a floor below the domain: its files name nothing of
    /// the crate but the store itself and the shop's error type, so a
    /// domain type that wants a column implements [`super::ToValue`] at
    /// home.
    #[test]
    fn the_store_imports_nothing_of_the_domain() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            read += 1;
            let code = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"));
            for (number, line) in code.enumerate() {
                // A path, not this test's own text.
                let Some(at) = line
                    .find("crate::")
                    .filter(|&at| !line[..at].ends_with('"'))
                else {
                    continue;
                };
                let named = &line[at + "crate::".len()..];
                assert!(
                    named.starts_with("error") || named.starts_with("store"),
                    "{}: code line {}: {}",
                    path.display(),
                    number + 1,
                    line.trim()
                );
            }
        }
        assert!(read >= 5, "read the store's files in {}", dir.display());
    }
}
