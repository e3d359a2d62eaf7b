//! The catalogue's keyword index (FTS5 with trigram tokens): which SKUs can
//! match every term of a keyword, so that a search scores those alone
//! instead of every SKU of the catalogue.
//!
//! The index narrows, the score decides: a SKU the index lets through is
//! still judged by `catalog::Query::score`, so results are those of a scan as
//! long as the index never leaves out a SKU a term matches. It holds the text
//! `catalog::searchable_text` makes (the fields the score looks at, in
//! lower case), so a term is in it exactly where the score finds it.

use crate::store::{Conn, params};

use crate::catalog::{self, searchable_text};
use crate::error::Result;

/// Trigram tokens hold three characters: a shorter term cannot be looked up
/// in the index and is found by `instr` in the indexed text instead (exact,
/// where `LIKE` would read `%` and `_` as wildcards).
const TRIGRAM_CHARS: usize = 3;

/// Fills the index when it does not hold one row per SKU (a new or upgraded
/// database). The catalogue's text only changes with the seed, so this runs
/// once per database; the caller's write transaction makes it all or nothing.
pub(crate) fn refresh(conn: &dyn Conn) -> Result<()> {
    let counts: (i64, i64) = conn.query_row(
        "SELECT (SELECT COUNT(*) FROM sku), (SELECT COUNT(*) FROM sku_search)",
        params![],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    if counts.0 == counts.1 {
        return Ok(());
    }
    conn.execute("DELETE FROM sku_search", params![])?;
    let skus = catalog::all_skus(conn)?;
    for hit in &skus {
        conn.execute(
            "INSERT INTO sku_search (sku_code, body) VALUES (?1, ?2)",
            params![hit.sku_code, searchable_text(hit)],
        )?;
    }
    tracing::info!(skus = skus.len(), "built the keyword index");
    Ok(())
}

/// SQL conditions on `s.sku_code` that keep the SKUs whose text holds every
/// term (lower-cased, without whitespace), with the values they bind.
pub(crate) fn filter(terms: &[String]) -> (Vec<&'static str>, Vec<String>) {
    // No catalogue text holds a NUL, so such a term matches nothing; and
    // SQLite would read the query text only up to it (a broken query).
    if terms.iter().any(|term| term.contains('\0')) {
        return (vec!["0"], Vec::new());
    }
    let (long, short): (Vec<&String>, Vec<&String>) = terms
        .iter()
        .partition(|term| term.chars().count() >= TRIGRAM_CHARS);
    let mut clauses = Vec::new();
    let mut values = Vec::new();
    if !long.is_empty() {
        // Each term a phrase: inside quotes only `"` is special (doubled).
        let query: Vec<String> = long
            .iter()
            .map(|term| format!("\"{}\"", term.replace('"', "\"\"")))
            .collect();
        clauses.push("s.sku_code IN (SELECT sku_code FROM sku_search WHERE sku_search MATCH ?)");
        values.push(query.join(" AND "));
    }
    for term in short {
        clauses.push("s.sku_code IN (SELECT sku_code FROM sku_search WHERE instr(body, ?) > 0)");
        values.push(term.clone());
    }
    (clauses, values)
}

/// [`filter`] for PostgreSQL: every term, whatever its length, a `LIKE`
/// on the indexed text, which `pg_trgm`'s GIN index answers for terms of
/// three characters or more and a scan of the index table for shorter
/// ones; `%`, `_` and `\` in a term are matched as themselves.
pub(crate) fn filter_trigram_like(terms: &[String]) -> (Vec<&'static str>, Vec<String>) {
    // PostgreSQL text cannot hold a NUL, and no catalogue text does.
    if terms.iter().any(|term| term.contains('\0')) {
        return (vec!["FALSE"], Vec::new());
    }
    terms
        .iter()
        .map(|term| {
            let escaped = term
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            (
                "s.sku_code IN (SELECT sku_code FROM sku_search WHERE body LIKE ?)",
                format!("%{escaped}%"),
            )
        })
        .unzip()
}
