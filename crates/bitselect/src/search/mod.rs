//! The catalogue's text engine: what `search_product` finds for a
//! shopper's words, the same on both stores and on every instance.
//!
//! Each shop (instance) holds an index of the catalogue in memory
//! ([`index::Snapshot`], tantivy), built from the database when the shop
//! starts, with the catalogue's text at that version: a result's names,
//! specs and tags come from there, and only price, stock and status are
//! read live from the database at every search (`product_search`).
//!
//! Fresh across instances: the database keeps a catalogue version
//! (`shop_meta.catalogue_version`), which triggers raise whenever a model
//! or a SKU's text (code, model, name, specs) is inserted, changed or
//! deleted; stock and price changes leave it alone. Every keyword search
//! reads it in the search's own transaction: with the page's live rows, in
//! the same statement, when the index held found models in relevance order
//! with no live filter (the common search: one round trip), else by itself
//! (a primary-key lookup). If it is not the version the index was built
//! at, the index is rebuilt from that same transaction and the search runs
//! again on it. Two instances on one database therefore
//! search the same catalogue text, and a build depends only on that text
//! (documents in model code order, one indexing thread, ties broken by
//! code), so they answer alike.

mod analyzer;
mod catalogue;
mod index;
mod plan;
mod vocabulary;

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};

pub(crate) use analyzer::normalize;
pub(crate) use catalogue::SkuText;
pub(crate) use index::{Snapshot, Within};
pub(crate) use plan::Plan;

use crate::error::{Result, ShopError};
use crate::store::{Conn, params};
use catalogue::ModelText;

macro_rules! catalogue_version_key {
    () => {
        "catalogue_version"
    };
}

/// The key of the catalogue version in `shop_meta`.
pub(crate) const CATALOGUE_VERSION_KEY: &str = catalogue_version_key!();

/// The catalogue version as a column of another read, so that a search
/// ranked on the index it held learns the version from its rows' statement
/// instead of asking first in a round trip of its own.
pub(crate) const CATALOGUE_VERSION_COLUMN: &str = concat!(
    "(SELECT value FROM shop_meta WHERE key = '",
    catalogue_version_key!(),
    "')"
);

/// A shop's search engine: the index of the catalogue version it last saw.
/// Clones of a shop share one.
#[derive(Debug, Default)]
pub(crate) struct SearchEngine {
    current: Mutex<Option<Arc<Snapshot>>>,
}

impl SearchEngine {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The index of the catalogue as `conn` sees it: the one held if the
    /// catalogue version is still the same, else one built now.
    pub(crate) fn snapshot(&self, conn: &dyn Conn) -> Result<Arc<Snapshot>> {
        let version = catalogue_version(conn)?;
        let mut current = self.lock();
        if let Some(snapshot) = current.as_ref()
            && snapshot.version() == version
        {
            return Ok(snapshot.clone());
        }
        let started = std::time::Instant::now();
        let catalogue = load_catalogue(conn)?;
        let models = catalogue.len();
        let built = Arc::new(Snapshot::build(version.clone(), catalogue)?);
        tracing::info!(
            models,
            %version,
            ms = started.elapsed().as_millis() as u64,
            "built the catalogue's search index"
        );
        *current = Some(built.clone());
        Ok(built)
    }

    /// The index last built, if any, without asking the database whether
    /// the catalogue is still at its version: whoever uses it must check.
    pub(crate) fn held(&self) -> Option<Arc<Snapshot>> {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, Option<Arc<Snapshot>>> {
        // The slot holds a whole snapshot or none; a panic elsewhere leaves it usable.
        self.current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The catalogue version as `conn` sees it.
pub(crate) fn catalogue_version(conn: &dyn Conn) -> Result<String> {
    conn.query_opt(
        "SELECT value FROM shop_meta WHERE key = ?1",
        params![CATALOGUE_VERSION_KEY],
        |row| row.get(0),
    )?
    .ok_or_else(|| ShopError::Corrupt("shop_meta 没有目录版本（catalogue_version）".to_owned()))
}

fn parse<T: for<'de> serde::Deserialize<'de>>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| ShopError::Corrupt(format!("目录中的 JSON 无效：{e}")))
}

/// Every model's text with its SKUs'.
fn load_catalogue(conn: &dyn Conn) -> Result<Vec<ModelText>> {
    let mut models: Vec<ModelText> = conn.query_all(
        "SELECT spu_code, name, category, sub_category, brand, specs, tags
         FROM product ORDER BY spu_code",
        params![],
        |row| {
            Ok(ModelText {
                spu_code: row.get(0)?,
                name: row.get(1)?,
                category: row.get(2)?,
                sub_category: row.get(3)?,
                brand: row.get(4)?,
                specs: parse(&row.get::<String>(5)?)?,
                tags: parse(&row.get::<String>(6)?)?,
                skus: Vec::new(),
            })
        },
    )?;
    let skus: Vec<(String, SkuText)> = conn.query_all(
        "SELECT spu_code, sku_code, name, specs FROM sku ORDER BY sku_code",
        params![],
        |row| {
            Ok((
                row.get(0)?,
                SkuText {
                    sku_code: row.get(1)?,
                    name: row.get(2)?,
                    specs: parse::<Map<String, Value>>(&row.get::<String>(3)?)?,
                },
            ))
        },
    )?;
    // Sorted here: the stores' collations may order codes differently.
    models.sort_by(|a, b| a.spu_code.cmp(&b.spu_code));
    for (spu_code, sku) in skus {
        if let Ok(at) = models.binary_search_by(|m| m.spu_code.as_str().cmp(&spu_code))
            && let Some(model) = models.get_mut(at)
        {
            model.skus.push(sku);
        }
    }
    Ok(models)
}
