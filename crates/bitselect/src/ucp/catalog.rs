//! The catalogue in the standard's words: search (`search_catalog`),
//! lookup by id (`lookup_catalog`) and one product in full
//! (`get_product`), all answered by the shop's own search (a
//! [`Catalogue`]: `Shop::search_product`), so a platform finds what the shop's tools
//! find. A model is a product; its SKUs are the product's variants; money
//! is fen (CNY's minor unit) throughout.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::names::{CATALOG_LOOKUP, CATALOG_SEARCH, CURRENCY, UCP_VERSION};
use crate::catalog::SkuHit;
use crate::error::{Refusal, Result, ShopError};
use crate::money::YuanInput;
use crate::params::SearchProductParams;
use crate::product_search::{ModelHit, SearchResult, SkuOption};

/// The most products one search or lookup answers.
const MAX_PRODUCTS: u32 = 50;

/// Products on a search page unless the platform says.
const DEFAULT_PAGE: u32 = 10;

/// The most ids one lookup takes.
const MAX_LOOKUP_IDS: usize = 50;

/// What the standard's catalogue answers are drawn from: the shop's own
/// search and its SKUs (the shop implements it).
pub trait Catalogue {
    fn search(&self, params: &SearchProductParams) -> Result<SearchResult>;
    fn sku(&self, code: &str) -> Result<Option<SkuHit>>;
}

fn meta(capability: &str) -> Value {
    json!({
        "version": UCP_VERSION,
        "status": "success",
        "capabilities": { capability: [{ "version": UCP_VERSION }] },
    })
}

fn price(amount: i64) -> Value {
    json!({ "amount": amount, "currency": CURRENCY })
}

/// `search_catalog`: `catalog.query`, `filters.categories` (the shop's
/// top-level categories; the first is used), `filters.price` (fen),
/// `pagination.limit` (1 to 50, default 10) and `pagination.cursor` (from
/// the answer before). Pages reach the 50 most relevant products; past
/// them a message asks for a narrower query.
pub fn search(shop: &dyn Catalogue, catalog: &Value) -> Result<Value> {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let amount = |value: &Value| value.as_i64().map(YuanInput);
    let limit = match catalog["pagination"]["limit"].as_u64() {
        None => DEFAULT_PAGE,
        Some(limit) => u32::try_from(limit)
            .ok()
            .filter(|l| (1..=MAX_PRODUCTS).contains(l))
            .ok_or_else(|| {
                ShopError::invalid("pagination.limit", format!("须在 1 到 {MAX_PRODUCTS} 之间"))
            })?,
    };
    let offset = match catalog["pagination"]["cursor"].as_str() {
        None => 0,
        Some(cursor) => cursor
            .parse::<u32>()
            .ok()
            .filter(|offset| *offset < MAX_PRODUCTS)
            .ok_or_else(|| ShopError::invalid("pagination.cursor", "不是本商城给出的游标"))?,
    };
    let params = SearchProductParams {
        keyword: text(&catalog["query"]),
        category: text(&catalog["filters"]["categories"][0]),
        min_price: amount(&catalog["filters"]["price"]["min"]),
        max_price: amount(&catalog["filters"]["price"]["max"]),
        limit: Some((offset + limit).min(MAX_PRODUCTS)),
        ..SearchProductParams::default()
    };
    let found = shop.search(&params)?;
    let page: Vec<Value> = found
        .items
        .iter()
        .skip(offset as usize)
        .map(|model| product(model, None))
        .collect();
    let reachable = found.matched.min(MAX_PRODUCTS as usize);
    let next = offset as usize + page.len();
    let mut pagination = json!({ "has_next_page": next < reachable, "total_count": found.matched });
    if next < reachable {
        pagination["cursor"] = json!(next.to_string());
    }
    let mut answer =
        json!({ "ucp": meta(CATALOG_SEARCH), "products": page, "pagination": pagination });
    let mut messages: Vec<Value> = nothing_found(&found).into_iter().collect();
    if next >= reachable && found.matched > reachable {
        messages.push(json!({
            "type": "info",
            "code": "results_truncated",
            "content": format!("共有 {} 个相符的商品，只列出最相关的 {MAX_PRODUCTS} 个；请把搜索说得更具体些", found.matched),
        }));
    }
    if !messages.is_empty() {
        answer["messages"] = json!(messages);
    }
    Ok(answer)
}

/// When nothing matched: what was looked for and the nearest categories.
fn nothing_found(found: &SearchResult) -> Option<Value> {
    if !found.items.is_empty() {
        return None;
    }
    let nearest: Vec<&str> = found
        .nearest_categories
        .iter()
        .map(|offer| offer.category.as_str())
        .collect();
    let content = if nearest.is_empty() {
        "没有找到相符的商品".to_owned()
    } else {
        format!("没有找到相符的商品；相近的类目有：{}", nearest.join("、"))
    };
    Some(json!({ "type": "info", "code": "no_results", "content": content }))
}

/// `lookup_catalog`: each id a model (SPU) or a SKU code; the products
/// they name, each with the variants an id named (all of a model's for a
/// model's id), and a warning for each id that names nothing.
pub fn lookup(shop: &dyn Catalogue, catalog: &Value) -> Result<Value> {
    let ids: Vec<String> = catalog["ids"]
        .as_array()
        .map(|ids| {
            ids.iter()
                .filter_map(|id| id.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if ids.is_empty() || ids.len() > MAX_LOOKUP_IDS {
        return Err(ShopError::invalid(
            "catalog.ids",
            format!("须给出 1 到 {MAX_LOOKUP_IDS} 个编号"),
        ));
    }
    let mut models = BTreeSet::new();
    for id in &ids {
        if let Some(sku) = shop.sku(id)? {
            models.insert(sku.spu_code);
        } else {
            models.insert(id.trim().to_uppercase());
        }
    }
    let found = shop.search(&SearchProductParams {
        spu_codes: models.into_iter().collect(),
        limit: Some(MAX_PRODUCTS),
        ..SearchProductParams::default()
    })?;
    let mut named = BTreeSet::new();
    let products: Vec<Value> = found
        .items
        .iter()
        .filter_map(|model| {
            let matched = |sku: &SkuOption| -> Vec<String> {
                ids.iter()
                    .filter(|id| same(id, &sku.sku_code) || same(id, &model.spu_code))
                    .cloned()
                    .collect()
            };
            let any = model.skus.iter().any(|sku| !matched(sku).is_empty());
            any.then(|| {
                for sku in &model.skus {
                    named.extend(matched(sku));
                }
                product(model, Some(&matched))
            })
        })
        .collect();
    if products.is_empty() {
        return Err(Refusal::UnknownSku {
            sku: ids.join("、"),
        }
        .into());
    }
    let messages: Vec<Value> = ids
        .iter()
        .filter(|id| !named.contains(*id))
        .map(|id| {
            json!({
                "type": "warning",
                "code": "not_found",
                "content": format!("没有编号为 {id} 的商品"),
            })
        })
        .collect();
    let mut answer = json!({ "ucp": meta(CATALOG_LOOKUP), "products": products });
    if !messages.is_empty() {
        answer["messages"] = json!(messages);
    }
    Ok(answer)
}

/// `get_product`: one model (by its code or one of its SKUs') in full.
pub fn get_product(shop: &dyn Catalogue, catalog: &Value) -> Result<Value> {
    let id = catalog["id"]
        .as_str()
        .filter(|id| !id.trim().is_empty())
        .ok_or_else(|| ShopError::invalid("catalog.id", "须给出商品编号"))?;
    // The whole model, every variant, not just the one a SKU code names.
    let model = match shop.sku(id)? {
        Some(sku) => sku.spu_code,
        None => id.to_owned(),
    };
    let found = lookup(shop, &json!({ "ids": [model] }))?;
    Ok(json!({ "ucp": meta(CATALOG_LOOKUP), "product": found["products"][0] }))
}

fn same(id: &str, code: &str) -> bool {
    id.trim().eq_ignore_ascii_case(code)
}

/// A model as the standard's product; `matched`, for a lookup, says which
/// ids named each SKU (a SKU no id named is left out).
/// For a lookup: the ids that named a SKU.
type Named<'a> = &'a dyn Fn(&SkuOption) -> Vec<String>;

fn product(model: &ModelHit, matched: Option<Named<'_>>) -> Value {
    let variants: Vec<Value> = model
        .skus
        .iter()
        .filter_map(|sku| {
            let mut variant = json!({
                "id": sku.sku_code,
                "sku": sku.sku_code,
                "title": sku.config.clone().unwrap_or_else(|| model.name.clone()),
                "description": { "plain": format!("{} {}", model.name, sku.config.as_deref().unwrap_or_default()).trim().to_owned() },
                "price": price(sku.price_fen),
                "availability": { "available": sku.available, "status": sku.status },
            });
            if let Some(matched) = matched {
                let ids = matched(sku);
                if ids.is_empty() {
                    return None;
                }
                variant["inputs"] = json!(ids
                    .iter()
                    .map(|id| json!({ "id": id, "match": "exact" }))
                    .collect::<Vec<_>>());
            }
            Some(variant)
        })
        .collect();
    json!({
        "id": model.spu_code,
        "title": model.name,
        "description": { "plain": format!("{} {} · {}", model.brand, model.category, model.sub_category) },
        "categories": [{ "value": model.category }, { "value": model.sub_category }],
        "price_range": { "min": price(model.min_price_fen), "max": price(model.max_price_fen) },
        "variants": variants,
        "tags": model.tags,
    })
}
