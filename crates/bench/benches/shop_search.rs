//! The shop's domain reads, called directly: product search by keyword and
//! by SKU code, and the cart.

use bitselect::Shop;
use bitselect::params::SearchProductParams;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

fn params(value: serde_json::Value) -> SearchProductParams {
    serde_json::from_value(value).unwrap()
}

fn search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let shop = Shop::open(dir.path()).unwrap();
    let keyword = params(json!({"keyword": "iPhone 17", "limit": 10}));
    let synonym = params(json!({"keyword": "降噪耳机", "limit": 10}));
    let code = params(json!({"skuCodes": ["MG6W4CH/A"]}));
    let mut group = c.benchmark_group("shop");
    group.throughput(Throughput::Elements(1));
    group.bench_function("search_product_keyword", |b| {
        b.iter(|| shop.search_product(&keyword).unwrap())
    });
    // A shopper's word the catalogue does not use (a synonym).
    group.bench_function("search_product_keyword_synonym", |b| {
        b.iter(|| shop.search_product(&synonym).unwrap())
    });
    group.bench_function("search_product_sku_code", |b| {
        b.iter(|| shop.search_product(&code).unwrap())
    });
    group.bench_function("query_cart", |b| b.iter(|| shop.query_cart().unwrap()));
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
