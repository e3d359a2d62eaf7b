//! `search_product`: the shopper's words through the text engine
//! ([`crate::search`]), the filters on the live rows, one row per model.
//!
//! A keyword gives the models it finds, best first; the filters (category,
//! price range, in stock, tags, SKU and model codes) are then applied to the
//! SKUs as the database holds them now, before the limit, so `matched`
//! counts the models that really qualify. A search by codes alone never
//! touches the index: it reads those rows by primary key.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::{ON_SALE, SELECT_SKU, SkuRow, categories, normalize_code};
use crate::error::{Refusal, Result, ShopError};
use crate::money::{Fen, Yuan};
use crate::params::{
    DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchProductParams, SortOrder, given,
};
use crate::search::{Plan, SearchEngine, Snapshot, normalize};
use crate::store::{Conn, ToValue};

/// How many of a model's SKUs the text for the model lists; the
/// structured result holds them all.
const SKUS_IN_TEXT: usize = 6;

/// How many categories are offered when nothing matched.
const NEAREST_CATEGORIES: usize = 3;

/// How many of a category's models are named as examples.
const EXAMPLES: usize = 3;

/// One orderable configuration of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkuOption {
    pub sku_code: String,
    pub name: String,
    /// The configuration (what the name adds to the model's, or the SKU's
    /// own specs), e.g. "256GB 黑色"; absent for a model with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// What differs from the model's other SKUs, e.g. colour and capacity.
    pub specs: Map<String, Value>,
    pub price_fen: Fen,
    pub price: Yuan,
    pub stock: i64,
    pub status: String,
    /// On sale and in stock: can be added to the cart and ordered.
    pub available: bool,
}

/// One model (SPU) a search found, with its SKUs that passed the filters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHit {
    pub spu_code: String,
    pub name: String,
    pub brand: String,
    pub category: String,
    pub sub_category: String,
    pub tags: Vec<String>,
    /// What every SKU of the model shares.
    pub specs: Map<String, Value>,
    pub min_price_fen: Fen,
    pub min_price: Yuan,
    pub max_price_fen: Fen,
    pub max_price: Yuan,
    /// Some SKU can be ordered now.
    pub available: bool,
    /// The SKUs, those the keyword names first, then orderable ones, then
    /// by price.
    pub skus: Vec<SkuOption>,
}

/// A word of the keyword and what it was looked for as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchTerm {
    pub said: String,
    pub looked_for: Vec<String>,
}

/// A category offered when nothing matched, with some of its models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryOffer {
    pub category: String,
    /// Names of its models closest to the keyword.
    pub examples: Vec<String>,
}

/// What `search_product` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// How many models matched, before the limit.
    pub matched: usize,
    pub returned: usize,
    pub sort: SortOrder,
    pub items: Vec<ModelHit>,
    /// The keyword's terms as searched (after segmentation and synonyms).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<SearchTerm>,
    /// Words of the keyword left out as saying nothing about a product.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// When nothing matched a keyword: the categories closest to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nearest_categories: Vec<CategoryOffer>,
}

impl SearchResult {
    /// Every SKU of every model returned, in order.
    pub fn skus(&self) -> impl Iterator<Item = &SkuOption> {
        self.items.iter().flat_map(|m| m.skus.iter())
    }
}

/// The filters of a search, checked.
struct Filters<'p> {
    limit: usize,
    min: Option<Fen>,
    max: Option<Fen>,
    category: Option<&'p str>,
    keyword: &'p str,
    sku_codes: Vec<String>,
    spu_codes: Vec<String>,
    tags: Vec<String>,
    in_stock_only: bool,
}

fn checked<'p>(conn: &dyn Conn, p: &'p SearchProductParams) -> Result<Filters<'p>> {
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
    let mut sku_codes: Vec<String> = p.sku_codes.iter().map(|c| normalize_code(c)).collect();
    sku_codes.sort();
    sku_codes.dedup();
    let mut spu_codes: Vec<String> = p.spu_codes.iter().map(|c| normalize_code(c)).collect();
    spu_codes.sort();
    spu_codes.dedup();
    Ok(Filters {
        limit: limit as usize,
        min,
        max,
        category,
        keyword,
        sku_codes,
        spu_codes,
        tags: p.tags.iter().map(|t| t.trim().to_lowercase()).collect(),
        in_stock_only: p.in_stock_only,
    })
}

/// What the keyword asks for, as the engine understood it.
enum Wanted {
    /// No keyword (or only words of no meaning): the filters alone.
    Everything,
    /// The models the keyword found, best first.
    Ranked {
        snapshot: std::sync::Arc<Snapshot>,
        plan: Plan,
        spu_codes: Vec<String>,
    },
}

/// Searches the catalogue; see [`SearchProductParams`] for the filters.
pub(crate) fn search(
    conn: &dyn Conn,
    engine: &SearchEngine,
    p: &SearchProductParams,
) -> Result<SearchResult> {
    let mut filters = checked(conn, p)?;
    let mut ignored = Vec::new();
    let wanted = if filters.keyword.is_empty() {
        Wanted::Everything
    } else {
        let snapshot = engine.snapshot(conn)?;
        // A SKU code typed as a keyword is a lookup by that code. (A model
        // code is not: "AirTag" and "HomePod" are model codes and names
        // alike; the engine finds a model by its code's words anyway.)
        if let Some(sku) = snapshot.sku_code(filters.keyword) {
            filters.sku_codes.push(sku.to_owned());
            Wanted::Everything
        } else {
            let plan = snapshot.plan(filters.keyword);
            ignored = plan.ignored.clone();
            if plan.concepts.is_empty() {
                Wanted::Everything
            } else {
                let spu_codes = snapshot.rank(&plan)?;
                Wanted::Ranked {
                    snapshot,
                    plan,
                    spu_codes,
                }
            }
        }
    };
    let rows = match &wanted {
        Wanted::Ranked { spu_codes, .. } if spu_codes.is_empty() => Vec::new(),
        Wanted::Ranked { spu_codes, .. } => live_rows(conn, &filters, Some(spu_codes))?,
        Wanted::Everything => live_rows(conn, &filters, None)?,
    };
    let mut models = group(rows, &filters.tags)?;

    let sort = p.sort.unwrap_or(match wanted {
        Wanted::Ranked { .. } => SortOrder::Relevance,
        Wanted::Everything => SortOrder::PriceAsc,
    });
    let rank: HashMap<&str, usize> = match &wanted {
        Wanted::Ranked { spu_codes, .. } => spu_codes
            .iter()
            .enumerate()
            .map(|(at, code)| (code.as_str(), at))
            .collect(),
        Wanted::Everything => HashMap::new(),
    };
    models.sort_by(|a, b| {
        let primary = match sort {
            SortOrder::Relevance => {
                let at = |m: &Candidate| rank.get(m.spu_code()).copied().unwrap_or(usize::MAX);
                at(a).cmp(&at(b))
            }
            SortOrder::PriceAsc => a.min_price().cmp(&b.min_price()),
            SortOrder::PriceDesc => b.max_price().cmp(&a.max_price()),
            SortOrder::StockDesc => b.stock().cmp(&a.stock()),
        };
        primary.then_with(|| a.spu_code().cmp(b.spu_code()))
    });

    let matched = models.len();
    let plan = match &wanted {
        Wanted::Ranked { plan, .. } => Some(plan),
        Wanted::Everything => None,
    };
    let items = models
        .into_iter()
        .take(filters.limit)
        .map(|candidate| candidate.into_hit(plan))
        .collect::<Result<Vec<_>>>()?;
    let nearest_categories = match &wanted {
        Wanted::Ranked { snapshot, plan, .. } if matched == 0 => offers(conn, snapshot, plan)?,
        _ => Vec::new(),
    };
    Ok(SearchResult {
        matched,
        returned: items.len(),
        sort,
        items,
        terms: plan
            .map(|plan| {
                plan.concepts
                    .iter()
                    .map(|c| SearchTerm {
                        said: c.said.clone(),
                        looked_for: c.looked_for.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        ignored,
        nearest_categories,
    })
}

/// The SKUs passing the filters, as the database holds them now. Only the
/// filters given become SQL, so a lookup by code goes through the primary
/// key and reads only those rows, and the models a keyword found through
/// the index on `sku.spu_code`.
fn live_rows(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&Vec<String>>,
) -> Result<Vec<SkuRow>> {
    let list = conn.dialect().json_text_list;
    let mut clauses: Vec<String> = Vec::new();
    let mut values: Vec<Box<dyn ToValue>> = Vec::new();
    if !filters.sku_codes.is_empty() {
        clauses.push(format!("s.sku_code IN ({list})"));
        values.push(Box::new(serde_json::to_string(&filters.sku_codes)?));
    }
    if !filters.spu_codes.is_empty() {
        clauses.push(format!("s.spu_code IN ({list})"));
        values.push(Box::new(serde_json::to_string(&filters.spu_codes)?));
    }
    if let Some(found) = found {
        clauses.push(format!("s.spu_code IN ({list})"));
        values.push(Box::new(serde_json::to_string(found)?));
    }
    if let Some(category) = filters.category {
        clauses.push("p.category = ?".to_owned());
        values.push(Box::new(category.to_owned()));
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
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    let bound: Vec<&dyn ToValue> = values.iter().map(|v| v.as_ref()).collect();
    conn.query_all(&format!("{SELECT_SKU}{filter}"), &bound, SkuRow::read)
}

/// A model and its SKUs that passed the filters.
struct Candidate {
    rows: Vec<SkuRow>,
    tags: Vec<String>,
}

impl Candidate {
    fn first(&self) -> Option<&SkuRow> {
        self.rows.first()
    }

    fn spu_code(&self) -> &str {
        self.first().map_or("", |r| r.spu_code.as_str())
    }

    fn min_price(&self) -> Fen {
        self.rows
            .iter()
            .map(|r| r.price_fen)
            .min()
            .unwrap_or_default()
    }

    fn max_price(&self) -> Fen {
        self.rows
            .iter()
            .map(|r| r.price_fen)
            .max()
            .unwrap_or_default()
    }

    fn stock(&self) -> i64 {
        self.rows.iter().map(|r| r.stock).sum()
    }

    /// The model with its SKUs: those the keyword names first (a colour, a
    /// capacity), then orderable ones, then by price.
    fn into_hit(self, plan: Option<&Plan>) -> Result<ModelHit> {
        let (min, max) = (self.min_price(), self.max_price());
        let mut rows = self.rows.into_iter();
        let Some(first) = rows.next() else {
            return Err(ShopError::Corrupt("一个型号没有 SKU 行".to_owned()));
        };
        let specs: Map<String, Value> = parse_json(&first.model_specs)?;
        let mut skus = Vec::new();
        for row in std::iter::once(&first).chain(rows.as_slice()) {
            let own: Map<String, Value> = parse_json(&row.own_specs)?;
            let named = plan.map_or(0, |plan| named_terms(plan, row, &own));
            skus.push((named, sku_option(row, own)));
        }
        skus.sort_by(|(na, a), (nb, b)| {
            nb.cmp(na)
                .then(b.available.cmp(&a.available))
                .then(a.price_fen.cmp(&b.price_fen))
                .then_with(|| a.sku_code.cmp(&b.sku_code))
        });
        let skus: Vec<SkuOption> = skus.into_iter().map(|(_, s)| s).collect();
        Ok(ModelHit {
            spu_code: first.spu_code,
            name: first.model_name,
            brand: first.brand,
            category: first.category,
            sub_category: first.sub_category,
            tags: self.tags,
            specs,
            min_price_fen: min,
            min_price: Yuan(min),
            max_price_fen: max,
            max_price: Yuan(max),
            available: skus.iter().any(|s| s.available),
            skus,
        })
    }
}

fn parse_json<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| ShopError::Corrupt(format!("目录中的 JSON 无效：{e}")))
}

/// How many of the keyword's terms a SKU's own name or specs hold.
fn named_terms(plan: &Plan, row: &SkuRow, own: &Map<String, Value>) -> usize {
    let mut text = normalize(&row.name);
    for value in own.values().filter_map(Value::as_str) {
        text.push(' ');
        text.push_str(&normalize(value));
    }
    plan.concepts
        .iter()
        .filter(|c| c.looked_for.iter().any(|p| text.contains(&normalize(p))))
        .count()
}

fn sku_option(row: &SkuRow, own: Map<String, Value>) -> SkuOption {
    let config = row
        .name
        .strip_prefix(row.model_name.as_str())
        .map(str::trim)
        .filter(|rest| !rest.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            let values: Vec<&str> = own.values().filter_map(Value::as_str).collect();
            Some(values.join(" ")).filter(|v| !v.is_empty())
        });
    SkuOption {
        sku_code: row.sku_code.clone(),
        name: row.name.clone(),
        config,
        specs: own,
        price_fen: row.price_fen,
        price: Yuan(row.price_fen),
        stock: row.stock,
        available: row.available(),
        status: row.status.clone(),
    }
}

/// The rows grouped by model, keeping the models that hold every tag.
fn group(rows: Vec<SkuRow>, tags: &[String]) -> Result<Vec<Candidate>> {
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
                models.push(Candidate {
                    tags: parse_json(&row.tags)?,
                    rows: vec![row],
                });
            }
        }
    }
    models.retain(|m| {
        tags.iter()
            .all(|t| m.tags.iter().any(|h| h.to_lowercase() == *t))
    });
    Ok(models)
}

/// The categories to offer when a keyword matched nothing: those closest
/// to its words, or every category when none is close.
fn offers(conn: &dyn Conn, snapshot: &Snapshot, plan: &Plan) -> Result<Vec<CategoryOffer>> {
    let near = snapshot.nearest_categories(plan, NEAREST_CATEGORIES)?;
    if near.is_empty() {
        return Ok(categories(conn)?
            .into_iter()
            .map(|category| CategoryOffer {
                category,
                examples: Vec::new(),
            })
            .collect());
    }
    let mut offers = Vec::with_capacity(near.len());
    for n in near {
        let codes: Vec<&String> = n.spu_codes.iter().take(EXAMPLES).collect();
        let list = conn.dialect().json_text_list;
        let names: Vec<(String, String)> = conn.query_all(
            &format!("SELECT spu_code, name FROM product WHERE spu_code IN ({list})"),
            crate::store::params![serde_json::to_string(&codes)?],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        let examples = codes
            .iter()
            .filter_map(|code| {
                names
                    .iter()
                    .find(|(c, _)| c == *code)
                    .map(|(_, n)| n.clone())
            })
            .collect();
        offers.push(CategoryOffer {
            category: n.category,
            examples,
        });
    }
    Ok(offers)
}

fn state(sku: &SkuOption) -> String {
    if sku.status != ON_SALE {
        sku.status.clone()
    } else if sku.stock <= 0 {
        "无货".to_owned()
    } else {
        format!("库存 {}", sku.stock)
    }
}

impl fmt::Display for SearchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.items.is_empty() {
            write!(f, "没有找到符合条件的商品。")?;
            if !self.terms.is_empty() {
                let tried: Vec<String> = self
                    .terms
                    .iter()
                    .map(|t| {
                        let others: Vec<&str> = t
                            .looked_for
                            .iter()
                            .map(String::as_str)
                            .filter(|p| *p != t.said)
                            .collect();
                        if others.is_empty() {
                            format!("「{}」", t.said)
                        } else {
                            format!("「{}」（{}）", t.said, others.join("/"))
                        }
                    })
                    .collect();
                write!(f, "搜索过：{}，须同时符合。", tried.join("、"))?;
            }
            if !self.nearest_categories.is_empty() {
                let offered: Vec<String> = self
                    .nearest_categories
                    .iter()
                    .map(|c| {
                        if c.examples.is_empty() {
                            c.category.clone()
                        } else {
                            format!("{}（如 {}）", c.category, c.examples.join("、"))
                        }
                    })
                    .collect();
                write!(
                    f,
                    "相近的类目：{}。可以用 category 浏览这些类目，",
                    offered.join("；")
                )?;
            }
            return write!(f, "可以换个说法、去掉部分筛选条件或放宽价格区间再试。");
        }
        write!(f, "找到 {} 个型号", self.matched)?;
        if self.returned < self.matched {
            write!(f, "，显示前 {} 个", self.returned)?;
        }
        writeln!(f, "：")?;
        for (i, model) in self.items.iter().enumerate() {
            let price = if model.min_price_fen == model.max_price_fen {
                format!("{} 元", model.min_price)
            } else {
                format!("{}–{} 元", model.min_price, model.max_price)
            };
            let orderable = model.skus.iter().filter(|s| s.available).count();
            writeln!(
                f,
                "{}. {}（{}）｜{}｜{}｜{} 个配置，{} 个有货",
                i + 1,
                model.name,
                model.spu_code,
                model.category,
                price,
                model.skus.len(),
                orderable
            )?;
            for sku in model.skus.iter().take(SKUS_IN_TEXT) {
                writeln!(
                    f,
                    "   - {} {}｜{} 元｜{}",
                    sku.sku_code,
                    sku.config.as_deref().unwrap_or(&sku.name),
                    sku.price,
                    state(sku)
                )?;
            }
            if model.skus.len() > SKUS_IN_TEXT {
                writeln!(
                    f,
                    "   - 另有 {} 个配置，用 spuCodes [\"{}\"] 可看全部",
                    model.skus.len() - SKUS_IN_TEXT,
                    model.spu_code
                )?;
            }
        }
        write!(
            f,
            "加入购物车请用 update_cart_item，skuCode 取上面的商品编码。"
        )
    }
}
