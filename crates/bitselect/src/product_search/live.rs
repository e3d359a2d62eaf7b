//! The search's filters on what the database holds now: price, stock and
//! status change with every order, so they are never taken from the text
//! index. Only those columns are read here; the text of a model and its
//! SKUs comes from the index's snapshot of the catalogue.
//!
//! Two reads. [`qualified`] answers, per model, whether any of its SKUs
//! pass the filters and what ordering needs (lowest and highest price,
//! stock), from small columns only: that is what `matched` counts and what
//! the page is chosen from. [`rows`] then reads the whole rows of the
//! models on the page. When the codes asked for or the models a keyword
//! found are no more than a page, one read of whole rows does both, and
//! [`rows_at_version`] reads the catalogue version beside them, so that the
//! common search makes one round trip.

use std::collections::HashMap;

use super::Filters;
use crate::catalog::ON_SALE;
use crate::error::Result;
use crate::money::Fen;
use crate::search::CATALOGUE_VERSION_COLUMN;
use crate::store::{Conn, Row, ToValue};

/// A SKU's live columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LiveSku {
    pub sku_code: String,
    pub spu_code: String,
    pub price_fen: Fen,
    pub stock: i64,
    pub status: String,
}

impl LiveSku {
    const COLUMNS: &str = "s.sku_code, s.spu_code, s.price_fen, s.stock, s.status";
    /// The column after [`Self::COLUMNS`], when a read adds one.
    const NEXT_COLUMN: usize = 5;

    fn read(row: &Row<'_>) -> Result<Self> {
        Ok(Self {
            sku_code: row.get(0)?,
            spu_code: row.get(1)?,
            price_fen: row.get(2)?,
            stock: row.get(3)?,
            status: row.get(4)?,
        })
    }

    pub fn available(&self) -> bool {
        self.status == ON_SALE && self.stock > 0
    }
}

/// A model with at least one SKU passing the filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Qualified {
    pub spu_code: String,
    /// The lowest and highest price of its SKUs that passed.
    pub min_price: Fen,
    pub max_price: Fen,
    /// The stock of its SKUs that passed.
    pub stock: i64,
}

/// A model and its SKUs that passed the filters.
pub(super) struct Candidate {
    pub rows: Vec<LiveSku>,
}

impl Candidate {
    pub fn spu_code(&self) -> &str {
        self.rows.first().map_or("", |r| r.spu_code.as_str())
    }

    fn qualified(&self) -> Qualified {
        let prices = self.rows.iter().map(|r| r.price_fen);
        Qualified {
            spu_code: self.spu_code().to_owned(),
            min_price: prices.clone().min().unwrap_or_default(),
            max_price: prices.max().unwrap_or_default(),
            stock: self.rows.iter().map(|r| r.stock).sum(),
        }
    }
}

/// Whether the search is known to concern at most `limit` models before
/// any row is read: then reading whole rows at once costs no more than the
/// two reads.
pub(super) fn within_a_page(filters: &Filters<'_>, found: Option<&[String]>) -> bool {
    let bounds = [
        found.map(<[String]>::len),
        (!filters.sku_codes.is_empty()).then_some(filters.sku_codes.len()),
        (!filters.spu_codes.is_empty()).then_some(filters.spu_codes.len()),
    ];
    bounds
        .into_iter()
        .flatten()
        .min()
        .is_some_and(|models| models <= filters.limit)
}

/// The models passing the filters (among `found`, when a keyword found
/// some), unordered, with their whole rows.
pub(super) fn candidates(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
) -> Result<(Vec<Qualified>, Vec<Candidate>)> {
    let candidates = rows(conn, filters, found)?;
    Ok((
        candidates.iter().map(Candidate::qualified).collect(),
        candidates,
    ))
}

/// The models passing the filters (among `found`, when given), unordered,
/// without their rows.
pub(super) fn qualified(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
) -> Result<Vec<Qualified>> {
    let (clauses, values) = clauses(conn, filters, found)?;
    let sql = format!(
        "SELECT s.spu_code, MIN(s.price_fen), MAX(s.price_fen), CAST(SUM(s.stock) AS BIGINT)
         FROM sku s{clauses} GROUP BY s.spu_code"
    );
    let bound: Vec<&dyn ToValue> = values.iter().map(|v| v.as_ref()).collect();
    conn.query_all(&sql, &bound, |row| {
        Ok(Qualified {
            spu_code: row.get(0)?,
            min_price: row.get(1)?,
            max_price: row.get(2)?,
            stock: row.get(3)?,
        })
    })
}

/// The models passing the filters (among `found`, when given), with their
/// SKUs that passed, as whole rows.
pub(super) fn rows(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
) -> Result<Vec<Candidate>> {
    let rows = read_rows(conn, filters, found, LiveSku::COLUMNS, LiveSku::read)?;
    Ok(group(rows))
}

/// [`rows`], with the catalogue version the same statement saw (`None`
/// when no row came back). Every row carries the version; the first is read.
pub(super) fn rows_at_version(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
) -> Result<(Vec<Candidate>, Option<String>)> {
    let columns = format!("{}, {CATALOGUE_VERSION_COLUMN}", LiveSku::COLUMNS);
    let mut version = None;
    let rows = read_rows(conn, filters, found, &columns, |row| {
        if version.is_none() {
            version = Some(row.get::<String>(LiveSku::NEXT_COLUMN)?);
        }
        LiveSku::read(row)
    })?;
    Ok((group(rows), version))
}

/// The SKU rows passing the filters, as `columns` and read by `read`.
fn read_rows<T>(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
    columns: &str,
    read: impl FnMut(&Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let (clauses, values) = clauses(conn, filters, found)?;
    let bound: Vec<&dyn ToValue> = values.iter().map(|v| v.as_ref()).collect();
    conn.query_all(
        &format!("SELECT {columns} FROM sku s{clauses}"),
        &bound,
        read,
    )
}

/// The filters on live columns and codes, as a WHERE clause and its
/// values (category and tags are the index's: `found` holds them). Only
/// the filters given become SQL, so a lookup by code goes through the
/// primary key and reads only those rows, and the models found through the
/// index on `sku.spu_code`.
fn clauses(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
) -> Result<(String, Vec<Box<dyn ToValue>>)> {
    let in_list = conn.dialect().in_json_list;
    let mut clauses: Vec<String> = Vec::new();
    let mut values: Vec<Box<dyn ToValue>> = Vec::new();
    if !filters.sku_codes.is_empty() {
        clauses.push(format!("s.sku_code {in_list}"));
        values.push(Box::new(serde_json::to_string(&filters.sku_codes)?));
    }
    if !filters.spu_codes.is_empty() {
        clauses.push(format!("s.spu_code {in_list}"));
        values.push(Box::new(serde_json::to_string(&filters.spu_codes)?));
    }
    if let Some(found) = found {
        clauses.push(format!("s.spu_code {in_list}"));
        values.push(Box::new(serde_json::to_string(found)?));
    }
    if let Some(min) = filters.min {
        clauses.push("s.price_fen >= ?".to_owned());
        values.push(Box::new(min));
    }
    if let Some(max) = filters.max {
        clauses.push("s.price_fen <= ?".to_owned());
        values.push(Box::new(max));
    }
    if filters.in_stock_only {
        clauses.push("s.status = ? AND s.stock > 0".to_owned());
        values.push(Box::new(ON_SALE.to_owned()));
    }
    let clauses = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    Ok((clauses, values))
}

/// The rows grouped by model.
fn group(rows: Vec<LiveSku>) -> Vec<Candidate> {
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut models: Vec<Candidate> = Vec::new();
    for row in rows {
        match at.get(&row.spu_code) {
            Some(&index) => {
                if let Some(model) = models.get_mut(index) {
                    model.rows.push(row);
                }
            }
            None => {
                at.insert(row.spu_code.clone(), models.len());
                models.push(Candidate { rows: vec![row] });
            }
        }
    }
    models
}
