//! The catalogue: SKUs with their models, and `search_product`.

use std::collections::HashSet;
use std::fmt;

use crate::store::{Conn, Row, ToValue, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Refusal, Result, ShopError};
use crate::money::{Fen, Yuan};
use crate::params::{
    DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchProductParams, SortOrder, given,
};

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

const SELECT_SKU: &str = "SELECT s.sku_code, s.spu_code, s.name, p.name, p.category,
            p.sub_category, p.brand, s.price_fen, s.stock, s.status, p.specs, s.specs, p.tags
     FROM sku s JOIN product p ON p.spu_code = s.spu_code";

fn parse_json<T: for<'de> Deserialize<'de>>(text: &str, index: usize) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| ShopError::Corrupt(format!("第 {index} 列不是有效的 JSON：{e}")))
}

fn hit_from_row(row: &Row) -> Result<SkuHit> {
    let mut specs: Map<String, Value> = parse_json(&row.get::<String>(10)?, 10)?;
    let own: Map<String, Value> = parse_json(&row.get::<String>(11)?, 11)?;
    specs.extend(own);
    let price_fen: Fen = row.get(7)?;
    let stock: i64 = row.get(8)?;
    let status: String = row.get(9)?;
    Ok(SkuHit {
        sku_code: row.get(0)?,
        spu_code: row.get(1)?,
        name: row.get(2)?,
        model_name: row.get(3)?,
        category: row.get(4)?,
        sub_category: row.get(5)?,
        brand: row.get(6)?,
        price_fen,
        price: Yuan(price_fen),
        stock,
        available: status == ON_SALE && stock > 0,
        status,
        specs,
        tags: parse_json(&row.get::<String>(12)?, 12)?,
    })
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

/// What `search_product` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// How many SKUs matched before the limit.
    pub matched: usize,
    pub returned: usize,
    pub sort: SortOrder,
    pub items: Vec<SkuHit>,
}

/// Every SKU, for building the keyword index.
pub(crate) fn all_skus(conn: &dyn Conn) -> Result<Vec<SkuHit>> {
    conn.query_all(SELECT_SKU, params![], hit_from_row)
}

/// How a search finds the SKUs a keyword may match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordLookup {
    /// Through the keyword index (what the shop does).
    Index,
    /// By scoring every SKU, as before the index: what tests and benchmarks
    /// compare the index with.
    Scan,
}

/// Filters the catalogue; see [`SearchProductParams`] for the filters.
pub fn search(conn: &dyn Conn, p: &SearchProductParams) -> Result<SearchResult> {
    search_with(conn, p, KeywordLookup::Index)
}

/// [`search`], finding keyword matches as `lookup` says.
pub fn search_with(
    conn: &dyn Conn,
    p: &SearchProductParams,
    lookup: KeywordLookup,
) -> Result<SearchResult> {
    let limit = p.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
        return Err(ShopError::invalid(
            "limit",
            format!("须在 1 到 {MAX_SEARCH_LIMIT} 之间，收到 {limit}"),
        ));
    }
    let min = p.min_price.map(|y| y.0);
    let max = p.max_price.map(|y| y.0);
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err(ShopError::invalid(
            "minPrice",
            "最低价不能高于最高价，请交换或修正价格区间",
        ));
    }
    let category = given(&p.category);
    if let Some(category) = category {
        let known = categories(conn)?;
        if !known.iter().any(|k| k == category) {
            return Err(Refusal::UnknownCategory {
                category: category.to_owned(),
                known: known.join("、"),
            }
            .into());
        }
    }
    let keyword = p.keyword.as_deref().map(str::trim).unwrap_or_default();
    if keyword.chars().count() > 100 {
        return Err(ShopError::invalid("keyword", "关键词最多 100 个字符"));
    }
    let query = Query::new(keyword);
    let sku_codes: HashSet<String> = p.sku_codes.iter().map(|c| normalize_code(c)).collect();
    let spu_codes: HashSet<String> = p.spu_codes.iter().map(|c| normalize_code(c)).collect();
    let tags: Vec<String> = p.tags.iter().map(|t| t.trim().to_lowercase()).collect();

    // Only the filters given become SQL, so a lookup by code goes through
    // the primary key and reads only those rows (an `?n IS NULL OR ...`
    // filter would make SQLite scan the catalogue), and a keyword through
    // its index. Each shape is prepared once per connection.
    let dialect = conn.dialect();
    let mut clauses: Vec<String> = Vec::new();
    let mut values: Vec<Box<dyn ToValue>> = Vec::new();
    if lookup == KeywordLookup::Index {
        let (found, terms) = (dialect.keyword_filter)(&query.terms);
        clauses.extend(found.into_iter().map(str::to_owned));
        values.extend(terms.into_iter().map(|t| Box::new(t) as Box<dyn ToValue>));
    }
    if let Some(category) = category {
        clauses.push("p.category = ?".to_owned());
        values.push(Box::new(category.to_owned()));
    }
    if let Some(min) = min {
        clauses.push("s.price_fen >= ?".to_owned());
        values.push(Box::new(min));
    }
    if let Some(max) = max {
        clauses.push("s.price_fen <= ?".to_owned());
        values.push(Box::new(max));
    }
    if !sku_codes.is_empty() {
        clauses.push(format!("s.sku_code IN ({})", dialect.json_text_list));
        values.push(Box::new(serde_json::to_string(&sku_codes)?));
    }
    if !spu_codes.is_empty() {
        clauses.push(format!("s.spu_code IN ({})", dialect.json_text_list));
        values.push(Box::new(serde_json::to_string(&spu_codes)?));
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    let bound: Vec<&dyn ToValue> = values.iter().map(|v| v.as_ref()).collect();
    let rows = conn.query_all(&format!("{SELECT_SKU}{filter}"), &bound, hit_from_row)?;
    let mut scored = Vec::new();
    for hit in rows {
        if (!sku_codes.is_empty() && !sku_codes.contains(&hit.sku_code))
            || (!spu_codes.is_empty() && !spu_codes.contains(&hit.spu_code))
            || (p.in_stock_only && !hit.available)
            || !tags
                .iter()
                .all(|t| hit.tags.iter().any(|h| h.to_lowercase() == *t))
        {
            continue;
        }
        if let Some(score) = query.score(&hit) {
            scored.push((score, hit));
        }
    }
    let sort = p.sort.unwrap_or(if query.is_empty() {
        SortOrder::PriceAsc
    } else {
        SortOrder::Relevance
    });
    scored.sort_by(|(sa, a), (sb, b)| {
        let primary = match sort {
            SortOrder::Relevance => sb.cmp(sa).then(b.available.cmp(&a.available)),
            SortOrder::PriceAsc => a.price_fen.cmp(&b.price_fen),
            SortOrder::PriceDesc => b.price_fen.cmp(&a.price_fen),
            SortOrder::StockDesc => b.stock.cmp(&a.stock),
        };
        primary.then_with(|| a.sku_code.cmp(&b.sku_code))
    });
    let matched = scored.len();
    let items: Vec<SkuHit> = scored
        .into_iter()
        .take(limit as usize)
        .map(|(_, hit)| hit)
        .collect();
    Ok(SearchResult {
        matched,
        returned: items.len(),
        sort,
        items,
    })
}

/// What a keyword's terms are looked for in, lower-cased, a field a line:
/// every field [`Query::score`] matches a term against (not the model name,
/// which only adds to the score of a SKU that matched). A term never holds
/// whitespace, so it cannot match across two fields.
pub fn searchable_text(hit: &SkuHit) -> String {
    let mut fields = vec![
        hit.name.as_str(),
        hit.brand.as_str(),
        hit.sku_code.as_str(),
        hit.spu_code.as_str(),
        hit.category.as_str(),
        hit.sub_category.as_str(),
    ];
    fields.extend(hit.tags.iter().map(String::as_str));
    fields.extend(hit.specs.values().filter_map(Value::as_str));
    fields.join("\n").to_lowercase()
}

/// A keyword split into lower-case terms.
struct Query {
    whole: String,
    terms: Vec<String>,
}

impl Query {
    fn new(keyword: &str) -> Self {
        let whole = keyword.to_lowercase();
        let terms = whole.split_whitespace().map(str::to_owned).collect();
        Self { whole, terms }
    }

    fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// `None` if some term matches nowhere; otherwise a relevance score where
    /// names outweigh brands and tags, which outweigh specs.
    fn score(&self, hit: &SkuHit) -> Option<u32> {
        if self.is_empty() {
            return Some(0);
        }
        let name = hit.name.to_lowercase();
        let model = hit.model_name.to_lowercase();
        let brand = hit.brand.to_lowercase();
        let sku = hit.sku_code.to_lowercase();
        let spu = hit.spu_code.to_lowercase();
        let place = format!(
            "{} {}",
            hit.category.to_lowercase(),
            hit.sub_category.to_lowercase()
        );
        let tags: Vec<String> = hit.tags.iter().map(|t| t.to_lowercase()).collect();
        let specs: Vec<String> = hit
            .specs
            .values()
            .filter_map(Value::as_str)
            .map(str::to_lowercase)
            .collect();

        let mut score = 0;
        for term in &self.terms {
            let mut best = 0;
            if sku == *term || spu == *term {
                best = best.max(100);
            }
            if name.contains(term.as_str()) {
                best = best.max(10);
            }
            if brand == *term {
                best = best.max(8);
            }
            if tags.iter().any(|t| t == term) {
                best = best.max(6);
            }
            if tags.iter().any(|t| t.contains(term.as_str())) || place.contains(term.as_str()) {
                best = best.max(5);
            }
            if sku.contains(term.as_str()) || spu.contains(term.as_str()) {
                best = best.max(4);
            }
            if brand.contains(term.as_str()) || specs.iter().any(|s| s.contains(term.as_str())) {
                best = best.max(3);
            }
            if best == 0 {
                return None;
            }
            score += best;
        }
        // Prefer the model the shopper named over accessories that mention it.
        if model == self.whole {
            score += 50;
        } else if model.starts_with(&self.whole) {
            score += 10;
        }
        if name.contains(&self.whole) {
            score += 20;
        }
        Some(score)
    }
}

impl fmt::Display for SearchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.items.is_empty() {
            return write!(
                f,
                "没有找到符合条件的商品。可以换个关键词、去掉部分筛选条件或放宽价格区间再试。"
            );
        }
        write!(f, "找到 {} 个商品", self.matched)?;
        if self.returned < self.matched {
            write!(f, "，显示前 {} 个", self.returned)?;
        }
        writeln!(f, "：")?;
        for (i, hit) in self.items.iter().enumerate() {
            let state = if hit.status != ON_SALE {
                hit.status.clone()
            } else if hit.stock <= 0 {
                "无货".to_owned()
            } else {
                format!("库存 {}", hit.stock)
            };
            writeln!(
                f,
                "{}. {} {}｜{} 元｜{}｜{}",
                i + 1,
                hit.sku_code,
                hit.name,
                hit.price,
                state,
                hit.category
            )?;
        }
        write!(
            f,
            "加入购物车请用 update_cart_item，skuCode 取上面的商品编码。"
        )
    }
}
