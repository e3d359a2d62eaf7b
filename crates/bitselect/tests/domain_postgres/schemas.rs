//! The two stores hold one schema: every table the shop keeps, with the
//! same columns, each of the same kind (integer or text) and as nullable,
//! in SQLite as in PostgreSQL. A statement is written once for both
//! (`store/mod.rs`), so a column one of them lacks is a call that fails
//! there only.

use std::collections::BTreeMap;

use crate::support::*;

/// A column as both stores can say it: its kind and whether it may be null.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Column {
    kind: &'static str,
    nullable: bool,
}

/// Table name to its columns by name.
type Schema = BTreeMap<String, BTreeMap<String, Column>>;

/// What a declared type holds: the shop keeps integers (fen, milliseconds,
/// counts, flags) and text, nothing else.
fn kind(declared: &str) -> &'static str {
    let declared = declared.to_ascii_lowercase();
    if declared.contains("int") {
        "integer"
    } else if declared.contains("text") || declared.contains("char") {
        "text"
    } else {
        panic!("a column of type {declared:?}: the shop keeps only integers and text")
    }
}

fn sqlite_schema(shop: &TestShop) -> Schema {
    let conn = shop.shop.connection().expect("a SQLite connection");
    let mut tables = conn
        .prepare(
            "SELECT m.name, c.name, c.type, c.\"notnull\", c.pk \
             FROM sqlite_master m JOIN pragma_table_info(m.name) c \
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'",
        )
        .unwrap();
    let mut schema = Schema::new();
    let rows = tables
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, i64>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (table, column, declared, not_null, primary_key) = row.unwrap();
        // SQLite lets a primary key column hold NULL unless it says NOT
        // NULL; the shop never writes one, and PostgreSQL forbids it.
        let nullable = not_null == 0 && primary_key == 0;
        schema.entry(table).or_default().insert(
            column,
            Column {
                kind: kind(&declared),
                nullable,
            },
        );
    }
    schema
}

fn postgres_schema(database: &str) -> Schema {
    let listed = postgres::cluster().psql(
        database,
        "SELECT table_name, column_name, data_type, is_nullable \
         FROM information_schema.columns c \
         JOIN information_schema.tables t USING (table_schema, table_name) \
         WHERE table_schema = 'public' AND t.table_type = 'BASE TABLE' \
         AND table_name <> 'schema_version' \
         ORDER BY 1, 2",
    );
    let mut schema = Schema::new();
    for line in listed.lines() {
        let fields: Vec<&str> = line.split('|').collect();
        let [table, column, declared, nullable] = fields[..] else {
            panic!("psql wrote {line:?}");
        };
        schema.entry(table.to_string()).or_default().insert(
            column.to_string(),
            Column {
                kind: kind(declared),
                nullable: nullable == "YES",
            },
        );
    }
    schema
}

#[test]
fn sqlite_and_postgresql_hold_the_same_tables_and_columns() {
    let on_sqlite = open_shop_on(TestStore::Sqlite);
    let on_postgres = open_shop_on(TestStore::Postgres);
    let sqlite = sqlite_schema(&on_sqlite);
    let database = on_postgres.database.as_deref().unwrap();
    // Each store keeps its migrations' version its own way: SQLite in
    // `PRAGMA user_version`, PostgreSQL in a table of its own, left out.
    let postgres = postgres_schema(database);
    assert_ne!(
        postgres::cluster().psql(database, "SELECT MAX(version) FROM schema_version"),
        ""
    );

    let tables = |schema: &Schema| schema.keys().cloned().collect::<Vec<_>>();
    assert_eq!(tables(&sqlite), tables(&postgres), "the same tables");
    for (table, columns) in &sqlite {
        assert_eq!(columns, &postgres[table], "the columns of {table}");
    }
    assert!(
        sqlite.len() >= 15,
        "every table of the shop was read: {:?}",
        tables(&sqlite)
    );
}
