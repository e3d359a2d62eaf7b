//! Keyword search before and after the store's own text index, on both
//! stores: `search_product_by_scan` (every SKU scored, the old way) beside
//! `search_product` (FTS5 trigram on SQLite, pg_trgm on PostgreSQL), the
//! shop called in process so only the search is timed.

use std::time::{Duration, Instant};

use bitselect::Shop;
use bitselect::params::SearchProductParams;

use crate::BenchError;
use crate::results::Row;
use crate::stats::{Summary, summarize};

/// The keywords timed: English, Chinese, and both in one.
pub const KEYWORDS: [&str; 3] = ["iPhone 17", "降噪耳机", "MacBook Air 午夜色"];

fn params(keyword: &str) -> Result<SearchProductParams, BenchError> {
    Ok(serde_json::from_value(
        serde_json::json!({"keyword": keyword, "limit": 10}),
    )?)
}

fn shop_error(error: bitselect::ShopError) -> BenchError {
    BenchError::Run(format!("search_product: {error}"))
}

/// One search's latency and how many SKUs it matched.
fn timed(
    search: &dyn Fn(&SearchProductParams) -> Result<usize, bitselect::ShopError>,
    params: &SearchProductParams,
) -> Result<(Duration, usize), BenchError> {
    let started = Instant::now();
    let matched = search(params).map_err(shop_error)?;
    Ok((started.elapsed(), matched))
}

/// Rows for one store: per keyword, scan and index latency, `repeats`
/// each, taken in turns so drift in the machine's load hits both alike.
pub fn rows(store: &str, shop: &Shop, repeats: usize) -> Result<Vec<Row>, BenchError> {
    let scan = |p: &SearchProductParams| shop.search_product_by_scan(p).map(|r| r.matched);
    let index = |p: &SearchProductParams| shop.search_product(p).map(|r| r.matched);
    let mut rows = Vec::new();
    for keyword in KEYWORDS {
        let params = params(keyword)?;
        // Warm the caches (pages, prepared statements) of both ways.
        for _ in 0..3 {
            timed(&scan, &params)?;
            timed(&index, &params)?;
        }
        let (mut before, mut after) = (Vec::new(), Vec::new());
        let (mut scan_total, mut index_total) = (0, 0);
        for _ in 0..repeats.max(1) {
            let (took, total) = timed(&scan, &params)?;
            before.push(took);
            scan_total = total;
            let (took, total) = timed(&index, &params)?;
            after.push(took);
            index_total = total;
        }
        let (before, after): (Summary, Summary) = (summarize(&before), summarize(&after));
        let speedup = before.median.as_secs_f64() / after.median.as_secs_f64().max(1e-9);
        rows.push(Row::info(
            format!("{store}, keyword “{keyword}”: before (scan) -> after (index)"),
            format!(
                "{} -> {} ({speedup:.1}x)",
                crate::stats::ms(before.median),
                crate::stats::ms(after.median)
            ),
            format!(
                "medians of {} searches each, limit 10; p95 {} -> {}; SKUs matched: scan {scan_total}, index {index_total}",
                before.count,
                crate::stats::ms(before.p95),
                crate::stats::ms(after.p95)
            ),
        ));
    }
    Ok(rows)
}
