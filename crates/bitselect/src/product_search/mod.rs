//! `search_product`: the shopper's words through the text engine
//! ([`crate::search`]), the filters on the live rows, one row per model.
//!
//! A keyword gives the models it finds, best first, among those of the
//! category and tags asked for (the index knows both); the live filters
//! (price range, in stock, SKU and model codes) are then applied to the
//! SKUs as the database holds them now, before the limit, so `matched`
//! counts the models that really qualify, and only the page's models are
//! read whole ([`live`]). A search by codes alone reads those rows by
//! primary key; the text shown comes from the index's snapshot of the
//! same catalogue version.

mod live;
mod text;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::{categories, normalize_code};
use crate::error::{Refusal, Result, ShopError};
use crate::money::Fen;
use crate::params::{
    DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchProductParams, SortOrder, given,
};
use crate::search::{Plan, SearchEngine, SkuText, Snapshot, Within, catalogue_version, normalize};
use crate::store::Conn;
use live::{Candidate, LiveSku, Qualified};

/// How many categories are offered when nothing matched.
const NEAREST_CATEGORIES: usize = 3;

/// How many of a category's models are named as examples.
const EXAMPLES: usize = 3;

/// One orderable configuration of a model, with only what sets it apart:
/// its name is the model's and its configuration, and a search answers
/// many of them, so each carries no more than a shopper compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkuOption {
    pub sku_code: String,
    /// The configuration (what the name adds to the model's, or the SKU's
    /// own specs), e.g. "256GB 黑色"; absent for a model with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    pub price_fen: Fen,
    pub stock: i64,
    /// 在售 or 已下架.
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
    pub max_price_fen: Fen,
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

impl Filters<'_> {
    /// Whether a filter concerns what changes with every order (price,
    /// stock, status) or names codes: then only the database can say
    /// which models qualify.
    fn on_live_rows(&self) -> bool {
        self.min.is_some()
            || self.max.is_some()
            || self.in_stock_only
            || !self.sku_codes.is_empty()
            || !self.spu_codes.is_empty()
    }
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
    /// No keyword (or only words of no meaning): the filters alone, among
    /// the models of the category and tags asked for, if any.
    Everything { within: Option<Vec<String>> },
    /// The models the keyword found, best first.
    Ranked { plan: Plan, spu_codes: Vec<String> },
}

/// Whether the index a search ranks on is known to hold the catalogue's
/// version as the search's transaction sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Index {
    /// Checked (or just built) in this transaction.
    Current,
    /// Held from an earlier search: the search checks the version with its
    /// first read of the rows, and stops if the catalogue has moved on.
    Held,
}

/// A search's end: its answer, or the news that the index it ranked on
/// holds an older catalogue than the database's.
enum Searched {
    Found(SearchResult),
    Stale,
}

/// Searches the catalogue; see [`SearchProductParams`] for the filters.
///
/// Most searches find the catalogue as the index last saw it, so they rank
/// on the index held and learn the version with the page's rows, in one
/// statement; only a search that finds the catalogue changed builds the
/// index again and searches once more.
pub(crate) fn search(
    conn: &dyn Conn,
    engine: &SearchEngine,
    p: &SearchProductParams,
) -> Result<SearchResult> {
    if let Some(held) = engine.held()
        && let Searched::Found(result) = search_on(conn, &held, Index::Held, p)?
    {
        return Ok(result);
    }
    let snapshot = engine.snapshot(conn)?;
    match search_on(conn, &snapshot, Index::Current, p)? {
        Searched::Found(result) => Ok(result),
        // Never: a current index is not checked again.
        Searched::Stale => Err(ShopError::Corrupt("目录版本在一次读取中变化".to_owned())),
    }
}

/// Whether `snapshot` is of the catalogue `conn` sees, when not known yet:
/// from the version a read of the rows `seen`, else from a read of its own.
fn still_current(
    conn: &dyn Conn,
    snapshot: &Snapshot,
    index: Index,
    seen: Option<String>,
) -> Result<bool> {
    if index == Index::Current {
        return Ok(true);
    }
    let version = match seen {
        Some(version) => version,
        None => catalogue_version(conn)?,
    };
    Ok(version == snapshot.version())
}

fn search_on(
    conn: &dyn Conn,
    snapshot: &Snapshot,
    index: Index,
    p: &SearchProductParams,
) -> Result<Searched> {
    let mut filters = checked(conn, p)?;
    let within = Within {
        category: filters.category,
        tags: &filters.tags,
    };
    let everything = || Wanted::Everything {
        within: (within.category.is_some() || !within.tags.is_empty())
            .then(|| snapshot.all_within(within)),
    };
    let mut ignored = Vec::new();
    let wanted = if filters.keyword.is_empty() {
        everything()
    } else if let Some(sku) = snapshot.sku_code(filters.keyword) {
        // A SKU code typed as a keyword is a lookup by that code. (A model
        // code is not: "AirTag" and "HomePod" are model codes and names
        // alike; the engine finds a model by its code's words anyway.)
        let sku = sku.to_owned();
        let wanted = everything();
        filters.sku_codes.push(sku);
        wanted
    } else {
        let plan = snapshot.plan(filters.keyword);
        ignored = plan.ignored.clone();
        if plan.concepts.is_empty() {
            everything()
        } else {
            let spu_codes = snapshot.rank(&plan, within)?;
            Wanted::Ranked { plan, spu_codes }
        }
    };
    let found = match &wanted {
        Wanted::Ranked { spu_codes, .. } => Some(spu_codes.as_slice()),
        Wanted::Everything { within } => within.as_deref(),
    };
    let sort = p.sort.unwrap_or(match wanted {
        Wanted::Ranked { .. } => SortOrder::Relevance,
        Wanted::Everything { .. } => SortOrder::PriceAsc,
    });
    let (matched, candidates) = match found {
        // The index alone knows which models qualify and their order: the
        // database is asked only for the page's rows, and the version with them.
        Some(found)
            if !found.is_empty() && sort == SortOrder::Relevance && !filters.on_live_rows() =>
        {
            let page = &found[..found.len().min(filters.limit)];
            let (rows, seen) = live::rows_at_version(conn, &filters, Some(page))?;
            if !still_current(conn, snapshot, index, seen)? {
                return Ok(Searched::Stale);
            }
            (found.len(), in_order(rows, page))
        }
        _ if !still_current(conn, snapshot, index, None)? => return Ok(Searched::Stale),
        Some([]) => (0, Vec::new()),
        _ => page(conn, &filters, found, sort)?,
    };

    let plan = match &wanted {
        Wanted::Ranked { plan, .. } => Some(plan),
        Wanted::Everything { .. } => None,
    };
    // The keyword's terms, each as its normalized alternatives: what names
    // a SKU on every model of the page.
    let named: Vec<Vec<String>> = plan.map_or_else(Vec::new, |plan| {
        plan.concepts
            .iter()
            .map(|c| c.looked_for.iter().map(|p| normalize(p)).collect())
            .collect()
    });
    let items = candidates
        .into_iter()
        .map(|candidate| hit(snapshot, candidate, &named))
        .collect::<Result<Vec<_>>>()?;
    let nearest_categories = match plan {
        Some(plan) if matched == 0 => offers(conn, snapshot, plan)?,
        _ => Vec::new(),
    };
    Ok(Searched::Found(SearchResult {
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
    }))
}

/// The models passing the filters, how many, and the page of them in
/// `sort` order with their rows.
fn page(
    conn: &dyn Conn,
    filters: &Filters<'_>,
    found: Option<&[String]>,
    sort: SortOrder,
) -> Result<(usize, Vec<Candidate>)> {
    let (mut models, read) = if live::within_a_page(filters, found) {
        let (models, candidates) = live::candidates(conn, filters, found)?;
        (models, Some(candidates))
    } else {
        (live::qualified(conn, filters, found)?, None)
    };
    let rank = positions(found.unwrap_or_default());
    models.sort_by(|a, b| {
        let primary = match sort {
            SortOrder::Relevance => {
                let at =
                    |m: &Qualified| rank.get(m.spu_code.as_str()).copied().unwrap_or(usize::MAX);
                at(a).cmp(&at(b))
            }
            SortOrder::PriceAsc => a.min_price.cmp(&b.min_price),
            SortOrder::PriceDesc => b.max_price.cmp(&a.max_price),
            SortOrder::StockDesc => b.stock.cmp(&a.stock),
        };
        primary.then_with(|| a.spu_code.cmp(&b.spu_code))
    });
    let matched = models.len();
    models.truncate(filters.limit);
    let page: Vec<String> = models.into_iter().map(|m| m.spu_code).collect();
    let candidates = match read {
        Some(candidates) => candidates,
        None => live::rows(conn, filters, Some(&page))?,
    };
    Ok((matched, in_order(candidates, &page)))
}

/// Each code's place in `codes`.
fn positions(codes: &[String]) -> HashMap<&str, usize> {
    codes
        .iter()
        .enumerate()
        .map(|(at, code)| (code.as_str(), at))
        .collect()
}

/// The candidates on `page`, in its order.
fn in_order(mut candidates: Vec<Candidate>, page: &[String]) -> Vec<Candidate> {
    let at = positions(page);
    candidates.retain(|c| at.contains_key(c.spu_code()));
    candidates.sort_by_key(|c| at.get(c.spu_code()).copied().unwrap_or(usize::MAX));
    candidates
}

/// A model on the page with its SKUs: those the keyword names first (a
/// colour, a capacity), then orderable ones, then by price. The text is the
/// index's snapshot of the catalogue, the numbers the database's; `terms`
/// are the keyword's, each as its normalized alternatives.
fn hit(snapshot: &Snapshot, candidate: Candidate, terms: &[Vec<String>]) -> Result<ModelHit> {
    let spu_code = candidate.spu_code().to_owned();
    let model = snapshot
        .model(&spu_code)
        .ok_or_else(|| out_of_the_index(&spu_code))?;
    let mut skus = Vec::with_capacity(candidate.rows.len());
    for row in candidate.rows {
        let sku = snapshot
            .sku(&row.sku_code)
            .ok_or_else(|| out_of_the_index(&row.sku_code))?;
        let named = terms
            .iter()
            .filter(|alternatives| alternatives.iter().any(|p| sku.words.contains(p.as_str())))
            .count();
        skus.push((named, sku_option(&model.name, sku.text, row)));
    }
    skus.sort_by(|(na, a), (nb, b)| {
        nb.cmp(na)
            .then(b.available.cmp(&a.available))
            .then(a.price_fen.cmp(&b.price_fen))
            .then_with(|| a.sku_code.cmp(&b.sku_code))
    });
    let skus: Vec<SkuOption> = skus.into_iter().map(|(_, s)| s).collect();
    let min = skus.iter().map(|s| s.price_fen).min().unwrap_or_default();
    let max = skus.iter().map(|s| s.price_fen).max().unwrap_or_default();
    Ok(ModelHit {
        spu_code,
        name: model.name.clone(),
        brand: model.brand.clone(),
        category: model.category.clone(),
        sub_category: model.sub_category.clone(),
        tags: model.tags.clone(),
        specs: model.specs.clone(),
        min_price_fen: min,
        max_price_fen: max,
        available: skus.iter().any(|s| s.available),
        skus,
    })
}

/// A code the database holds and the index of the same catalogue version
/// does not: the version was not raised with a change.
fn out_of_the_index(code: &str) -> ShopError {
    ShopError::Search(format!("{code} 在数据库中，却不在同一目录版本的搜索索引中"))
}

fn sku_option(model_name: &str, text: &SkuText, row: LiveSku) -> SkuOption {
    let config = text
        .name
        .strip_prefix(model_name)
        // "保护壳 - 霓虹黄色" configures as "霓虹黄色".
        .map(|rest| rest.trim_start_matches([' ', '-', '–', '—', '·']).trim())
        .filter(|rest| !rest.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            let values: Vec<&str> = text.specs.values().filter_map(Value::as_str).collect();
            Some(values.join(" ")).filter(|v| !v.is_empty())
        });
    SkuOption {
        available: row.available(),
        sku_code: row.sku_code,
        config,
        price_fen: row.price_fen,
        stock: row.stock,
        status: row.status,
    }
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
        let in_list = conn.dialect().in_json_list;
        let names: Vec<(String, String)> = conn.query_all(
            &format!("SELECT spu_code, name FROM product WHERE spu_code {in_list}"),
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
