//! The seam over SQLite: every statement is prepared once per connection
//! (rusqlite's statement cache) and rows are read in place as [`Row`]s.

use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::{Column, Columns, Conn, Dialect, EachRow, Row, ToValue, Value};
use crate::error::{Result, ShopError};

/// What SQLite spells differently from PostgreSQL.
pub(crate) const DIALECT: Dialect = Dialect {
    in_json_list: "IN (SELECT value FROM json_each(?))",
};

/// Statements kept prepared per connection: the domain has a few dozen
/// shapes, and the catalogue's search a few more.
pub(crate) const STATEMENT_CACHE: usize = 128;

struct Bound<'a>(Value<'a>);

impl rusqlite::ToSql for Bound<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(value) => ToSqlOutput::Borrowed(ValueRef::Integer(value)),
            Value::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
        })
    }
}

fn bind<'a>(params: &'a [&'a dyn ToValue]) -> Vec<Bound<'a>> {
    params.iter().map(|param| Bound(param.to_value())).collect()
}

impl Columns for rusqlite::Row<'_> {
    fn column(&self, index: usize) -> Result<Option<Column<'_>>> {
        let value = match self.get_ref(index) {
            Ok(value) => value,
            Err(rusqlite::Error::InvalidColumnIndex(_)) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let column = match value {
            ValueRef::Null => Column::Null,
            ValueRef::Integer(value) => Column::Int(value),
            ValueRef::Text(bytes) => Column::Text(
                std::str::from_utf8(bytes)
                    .map_err(|_| ShopError::Corrupt(format!("第 {index} 列不是 UTF-8 文本")))?,
            ),
            ValueRef::Real(_) | ValueRef::Blob(_) => {
                return Err(ShopError::Corrupt(format!(
                    "第 {index} 列是商城不存的类型（浮点数或二进制）"
                )));
            }
        };
        Ok(Some(column))
    }
}

impl Conn for Connection {
    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<u64> {
        let bound = bind(params);
        let changed = self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(bound.iter()))?;
        Ok(changed as u64)
    }

    fn query(&self, sql: &str, params: &[&dyn ToValue], each: EachRow<'_>) -> Result<()> {
        let bound = bind(params);
        let mut statement = self.prepare_cached(sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(bound.iter()))?;
        while let Some(row) = rows.next()? {
            each(&Row::new(row))?;
        }
        Ok(())
    }

    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }
}
