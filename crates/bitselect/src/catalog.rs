//! The catalogue: SKUs with their models, looked up by code (the search
//! is `product_search`).

use crate::store::{Conn, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Refusal, Result, ShopError};
use crate::money::{Fen, Yuan};

pub const ON_SALE: &str = "在售";

/// Codes are upper case in the catalogue; accept what a model types.
pub fn normalize_code(code: &str) -> String {
    code.trim().to_uppercase()
}

/// One orderable SKU with its model's facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkuHit {
    pub sku_code: String,
    pub spu_code: String,
    pub name: String,
    pub model_name: String,
    pub category: String,
    pub sub_category: String,
    pub brand: String,
    pub price_fen: Fen,
    pub price: Yuan,
    pub stock: i64,
    pub status: String,
    /// On sale and in stock: can be added to the cart and ordered.
    pub available: bool,
    /// The model's specs merged with this configuration's own.
    pub specs: Map<String, Value>,
    pub tags: Vec<String>,
}

impl SkuHit {
    /// Why this SKU cannot be added or ordered at all, if it cannot.
    pub fn unavailable(&self) -> Option<Refusal> {
        if self.status != ON_SALE {
            Some(Refusal::Delisted {
                sku: self.sku_code.clone(),
                name: self.name.clone(),
            })
        } else if self.stock <= 0 {
            Some(Refusal::OutOfStock {
                sku: self.sku_code.clone(),
                name: self.name.clone(),
            })
        } else {
            None
        }
    }
}

/// A SKU with its model's facts, column by column (`product_search` reads
/// the same columns).
pub(crate) const SELECT_SKU: &str = "SELECT s.sku_code, s.spu_code, s.name, p.name, p.category,
            p.sub_category, p.brand, s.price_fen, s.stock, s.status, p.specs, s.specs, p.tags
     FROM sku s JOIN product p ON p.spu_code = s.spu_code";

fn parse_json<T: for<'de> Deserialize<'de>>(text: &str, index: usize) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| ShopError::Corrupt(format!("第 {index} 列不是有效的 JSON：{e}")))
}

/// One row of [`SELECT_SKU`], its JSON columns still text.
pub(crate) struct SkuRow {
    pub sku_code: String,
    pub spu_code: String,
    pub name: String,
    pub model_name: String,
    pub category: String,
    pub sub_category: String,
    pub brand: String,
    pub price_fen: Fen,
    pub stock: i64,
    pub status: String,
    pub model_specs: String,
    pub own_specs: String,
    pub tags: String,
}

impl SkuRow {
    pub(crate) fn read(row: &Row<'_>) -> Result<Self> {
        Ok(Self {
            sku_code: row.get(0)?,
            spu_code: row.get(1)?,
            name: row.get(2)?,
            model_name: row.get(3)?,
            category: row.get(4)?,
            sub_category: row.get(5)?,
            brand: row.get(6)?,
            price_fen: row.get(7)?,
            stock: row.get(8)?,
            status: row.get(9)?,
            model_specs: row.get(10)?,
            own_specs: row.get(11)?,
            tags: row.get(12)?,
        })
    }

    /// On sale and in stock.
    pub(crate) fn available(&self) -> bool {
        self.status == ON_SALE && self.stock > 0
    }

    fn into_hit(self) -> Result<SkuHit> {
        let mut specs: Map<String, Value> = parse_json(&self.model_specs, 10)?;
        let own: Map<String, Value> = parse_json(&self.own_specs, 11)?;
        specs.extend(own);
        Ok(SkuHit {
            available: self.available(),
            tags: parse_json(&self.tags, 12)?,
            sku_code: self.sku_code,
            spu_code: self.spu_code,
            name: self.name,
            model_name: self.model_name,
            category: self.category,
            sub_category: self.sub_category,
            brand: self.brand,
            price_fen: self.price_fen,
            price: Yuan(self.price_fen),
            stock: self.stock,
            status: self.status,
            specs,
        })
    }
}

fn hit_from_row(row: &Row<'_>) -> Result<SkuHit> {
    SkuRow::read(row)?.into_hit()
}

/// Looks a SKU up by code.
pub fn find_sku(conn: &dyn Conn, sku_code: &str) -> Result<Option<SkuHit>> {
    conn.query_opt(
        &format!("{SELECT_SKU} WHERE s.sku_code = ?1"),
        params![sku_code],
        hit_from_row,
    )
}

/// Looks a SKU up by code, refusing an unknown one.
pub fn sku(conn: &dyn Conn, sku_code: &str) -> Result<SkuHit> {
    find_sku(conn, sku_code)?.ok_or_else(|| {
        Refusal::UnknownSku {
            sku: sku_code.to_owned(),
        }
        .into()
    })
}

/// How a confirmation card names a SKU: its model and its configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkuLabel {
    /// The model's name, e.g. "iPhone 17".
    pub name: String,
    /// The configuration, e.g. "256GB 黑色"; `None` for a model with one.
    pub spec: Option<String>,
}

/// Splits `sku_name` into model and configuration: the rest of the name after
/// the model's, else the SKU's own specs (some accessory names put the size
/// first). A SKU gone from the catalogue keeps the name it was sold under.
pub fn label(conn: &dyn Conn, sku_code: &str, sku_name: &str) -> Result<SkuLabel> {
    let found: Option<(String, String)> = conn.query_opt(
        "SELECT p.name, s.specs FROM sku s JOIN product p ON p.spu_code = s.spu_code
             WHERE s.sku_code = ?1",
        params![sku_code],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let Some((model, own_specs)) = found else {
        return Ok(SkuLabel {
            name: sku_name.to_owned(),
            spec: None,
        });
    };
    let rest = sku_name.strip_prefix(model.as_str()).map(str::trim);
    let spec = match rest {
        Some(rest) if !rest.is_empty() => rest.to_owned(),
        _ => {
            let own: Map<String, Value> = serde_json::from_str(&own_specs)?;
            let values: Vec<String> = own
                .values()
                .map(|v| match v {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect();
            values.join(" ")
        }
    };
    Ok(SkuLabel {
        name: model,
        spec: Some(spec).filter(|s| !s.is_empty()),
    })
}

/// The top-level categories, in a stable order.
pub fn categories(conn: &dyn Conn) -> Result<Vec<String>> {
    conn.query_all(
        "SELECT DISTINCT category FROM product ORDER BY category",
        params![],
        |row| row.get(0),
    )
}
