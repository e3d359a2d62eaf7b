//! Keyword search through the shop's text engine beside a lookup by SKU
//! code, on both stores, the shop called in process so only the search is
//! timed: the goal is a keyword search costing at most twice a lookup.

use std::time::{Duration, Instant};

use bitselect::Shop;
use bitselect::params::SearchProductParams;

use crate::BenchError;
use crate::results::Row;
use crate::shop::IPHONE;
use crate::stats::{Summary, summarize};

/// The keywords timed: English, Chinese, a synonym, a broad word, and a
/// model with a colour.
pub const KEYWORDS: [&str; 5] = [
    "iPhone 17",
    "降噪耳机",
    "laptop",
    "配件",
    "MacBook Air 午夜色",
];

fn params(value: serde_json::Value) -> Result<SearchProductParams, BenchError> {
    Ok(serde_json::from_value(value)?)
}

fn shop_error(error: bitselect::ShopError) -> BenchError {
    BenchError::Run(format!("search_product: {error}"))
}

/// One search's latency and how many models it matched.
fn timed(shop: &Shop, params: &SearchProductParams) -> Result<(Duration, usize), BenchError> {
    let started = Instant::now();
    let matched = shop.search_product(params).map_err(shop_error)?.matched;
    Ok((started.elapsed(), matched))
}

/// Rows for one store: per keyword, the lookup by code and the keyword
/// search, `repeats` each, taken in turns so drift in the machine's load
/// hits both alike.
pub fn rows(store: &str, shop: &Shop, repeats: usize) -> Result<Vec<Row>, BenchError> {
    let lookup = params(serde_json::json!({"skuCodes": [IPHONE]}))?;
    let mut rows = Vec::new();
    for keyword in KEYWORDS {
        let search = params(serde_json::json!({"keyword": keyword, "limit": 10}))?;
        // Warm the caches (pages, prepared statements, the index) of both.
        for _ in 0..3 {
            timed(shop, &lookup)?;
            timed(shop, &search)?;
        }
        let (mut by_code, mut by_keyword) = (Vec::new(), Vec::new());
        let mut matched = 0;
        for _ in 0..repeats.max(1) {
            by_code.push(timed(shop, &lookup)?.0);
            let (took, models) = timed(shop, &search)?;
            by_keyword.push(took);
            matched = models;
        }
        let (by_code, by_keyword): (Summary, Summary) =
            (summarize(&by_code), summarize(&by_keyword));
        let ratio = by_keyword.median.as_secs_f64() / by_code.median.as_secs_f64().max(1e-9);
        rows.push(Row::info(
            format!("{store}, keyword “{keyword}” beside a lookup by SKU code"),
            format!(
                "{} vs {} ({ratio:.1}x)",
                crate::stats::ms(by_keyword.median),
                crate::stats::ms(by_code.median)
            ),
            format!(
                "medians of {} calls each, in process, limit 10; p95 {} vs {}; models matched {matched}",
                by_keyword.count,
                crate::stats::ms(by_keyword.p95),
                crate::stats::ms(by_code.p95)
            ),
        ));
    }
    Ok(rows)
}
