//! The seam over SQLite: every statement is prepared once per connection
//! (rusqlite's statement cache) and rows are read into [`Row`]s.

use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::{Column, Conn, Dialect, Row, ToValue, Value};
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

fn column(value: ValueRef<'_>, index: usize) -> Result<Column> {
    match value {
        ValueRef::Null => Ok(Column::Null),
        ValueRef::Integer(value) => Ok(Column::Int(value)),
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec())
            .map(Column::Text)
            .map_err(|_| ShopError::Corrupt(format!("第 {index} 列不是 UTF-8 文本"))),
        ValueRef::Real(_) | ValueRef::Blob(_) => Err(ShopError::Corrupt(format!(
            "第 {index} 列是商城不存的类型（浮点数或二进制）"
        ))),
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

    fn query(&self, sql: &str, params: &[&dyn ToValue]) -> Result<Vec<Row>> {
        let bound = bind(params);
        let mut statement = self.prepare_cached(sql)?;
        let width = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(bound.iter()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let columns = (0..width)
                .map(|index| column(row.get_ref(index)?, index))
                .collect::<Result<Vec<_>>>()?;
            out.push(Row::new(columns));
        }
        Ok(out)
    }

    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }
}
