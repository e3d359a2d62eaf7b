//! Searching the catalog: by SKU code, keyword, category, price range, tags
//! and stock.

use crate::support::*;
use bitselect::money::YuanInput;
use bitselect::params::{SearchProductParams, SortOrder};
use pretty_assertions::assert_eq;

#[test]
fn searching_by_sku_code_finds_the_iphone_17_with_price_and_stock() {
    let t = open_shop();
    let result = t.shop.search_product(&search_sku("mg6w4ch/a")).unwrap();
    assert_eq!(result.matched, 1);
    let hit = &result.items[0];
    assert_eq!(hit.name, "iPhone 17 256GB 黑色");
    assert_eq!(
        (hit.price_fen, hit.price.to_string()),
        (679_900, "6799.00".into())
    );
    assert_eq!(hit.stock, 10);
    assert!(hit.available);
    assert_eq!(hit.specs["芯片"], "A19 芯片", "model specs are merged in");
}

#[test]
fn keyword_search_ignores_case_and_puts_the_named_model_first() {
    let t = open_shop();
    let result = t
        .shop
        .search_product(&SearchProductParams {
            keyword: Some("IPHONE 17".into()),
            limit: Some(5),
            ..Default::default()
        })
        .unwrap();
    assert!(result.matched > 5);
    assert_eq!(result.returned, 5);
    assert_eq!(result.sort, SortOrder::Relevance);
    assert!(
        result.items.iter().all(|h| h.spu_code == "IPHONE-17"),
        "{:?}",
        result.items.iter().map(|h| &h.name).collect::<Vec<_>>()
    );
}

#[test]
fn keyword_terms_must_all_match_across_name_brand_tags_and_specs() {
    let t = open_shop();
    let result = t
        .shop
        .search_product(&SearchProductParams {
            keyword: Some("iPhone 17 雾蓝色".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(result.items[0].sku_code, "MG6Y4CH/A");
    assert!(result.items.iter().all(|h| h.name.contains("雾蓝色")));
    let none = t
        .shop
        .search_product(&SearchProductParams {
            keyword: Some("iPhone 不存在的词".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(none.matched, 0);
}

#[test]
fn category_price_range_and_sort_filter_together() {
    let t = open_shop();
    let result = t
        .shop
        .search_product(&SearchProductParams {
            category: Some("手机".into()),
            min_price: Some(YuanInput(900_000)),
            max_price: Some(YuanInput(1_200_000)),
            sort: Some(SortOrder::PriceDesc),
            limit: Some(50),
            ..Default::default()
        })
        .unwrap();
    // The seed's phones from ¥9,000 to ¥12,000: the SKUs of iPhone 18 Pro,
    // 18 Pro Max and Air (data/skus.json), whatever their order.
    assert_eq!(result.matched, 16);
    let products: std::collections::BTreeSet<&str> =
        result.items.iter().map(|h| h.spu_code.as_str()).collect();
    assert_eq!(
        products,
        ["IPHONE-18-PRO", "IPHONE-18-PRO-MAX", "IPHONE-AIR"].into()
    );
    assert!(
        result
            .items
            .iter()
            .all(|h| h.category == "手机" && (900_000..=1_200_000).contains(&h.price_fen))
    );
    assert!(
        result
            .items
            .windows(2)
            .all(|w| w[0].price_fen >= w[1].price_fen)
    );
}

#[test]
fn tags_and_in_stock_only_narrow_the_results() {
    let t = open_shop();
    let all = t
        .shop
        .search_product(&SearchProductParams {
            spu_codes: vec!["IPHONE-16".into()],
            ..Default::default()
        })
        .unwrap();
    assert!(
        all.items
            .iter()
            .any(|h| h.sku_code == IPHONE_16_DELISTED && !h.available)
    );
    let in_stock = t
        .shop
        .search_product(&SearchProductParams {
            spu_codes: vec!["IPHONE-16".into()],
            in_stock_only: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(in_stock.matched, all.matched - 1);
    let cases = t
        .shop
        .search_product(&SearchProductParams {
            tags: vec!["保护壳".into(), "防摔".into()],
            limit: Some(50),
            ..Default::default()
        })
        .unwrap();
    // The seed's SKUs whose product carries both tags (data/products.json).
    assert_eq!(cases.matched, 516);
    assert!(
        cases
            .items
            .iter()
            .all(|h| h.tags.contains(&"保护壳".to_owned()) && h.tags.contains(&"防摔".to_owned()))
    );
}

#[test]
fn an_unknown_category_is_refused_with_the_known_ones() {
    let t = open_shop();
    let err = t
        .shop
        .search_product(&SearchProductParams {
            category: Some("手表".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_CATEGORY");
    assert!(err.to_string().contains("智能手表"), "{err}");
}

#[test]
fn search_limits_and_price_ranges_are_checked() {
    let t = open_shop();
    let too_many = SearchProductParams {
        limit: Some(51),
        ..Default::default()
    };
    assert_eq!(
        refusal_code(t.shop.search_product(&too_many)),
        "INVALID_ARGUMENT"
    );
    let upside_down = SearchProductParams {
        min_price: Some(YuanInput(500_000)),
        max_price: Some(YuanInput(100_000)),
        ..Default::default()
    };
    assert_eq!(
        refusal_code(t.shop.search_product(&upside_down)),
        "INVALID_ARGUMENT"
    );
}

/// Keywords a shopper or a model may type: Chinese and English, one and two
/// characters (below what the index's trigrams hold), mixed case, codes,
/// several terms, and characters that mean something to a query language.
const KEYWORDS: &[&str] = &[
    "iPhone 17",
    "iphone",
    "IPHONE 17 PRO",
    "Pro Max",
    "pro",
    "macbook air",
    "iPad",
    "AirPods",
    "watch",
    "手机",
    "耳机",
    "平板",
    "电脑",
    "苹果",
    "华为",
    "小米",
    "黑色",
    "256GB",
    "1TB",
    "M4",
    "USB-C",
    "4K",
    "降噪",
    "充电",
    "保护壳",
    "手",
    "机",
    "黑",
    "17",
    "a",
    "i",
    "ai",
    "5G",
    "mg6w4ch/a",
    "MG6W4CH",
    "IPHONE-17",
    "6w4",
    "苹 果",
    "iPhone 手机",
    "pro 黑色 256gb",
    "\"",
    "\"pro\"",
    "pro*",
    "NOT",
    "OR",
    "AND pro",
    "(pro)",
    "%",
    "_",
    "a%b",
    "column:pro",
    "-",
    "+",
    "^",
    "''",
    // SQLite reads query text up to a NUL: a term holding one is refused
    // by nothing and matches nothing.
    "\0a¯",
    "a\0",
    "iphone\0 17",
    "💻",
    "zzzz",
    "不存在的商品",
];

fn keyword(text: &str, limit: u32) -> SearchProductParams {
    SearchProductParams {
        keyword: Some(text.to_owned()),
        limit: Some(limit),
        ..Default::default()
    }
}

/// Words of the catalogue's own names, and their beginnings of one to four
/// characters: every kind of term the index has to find.
fn catalogue_words(t: &TestShop) -> Vec<String> {
    let every = t
        .shop
        .search_product(&SearchProductParams {
            limit: Some(50),
            sort: Some(SortOrder::PriceDesc),
            ..Default::default()
        })
        .unwrap();
    let mut words = Vec::new();
    for hit in every.items {
        for word in hit.name.split_whitespace() {
            let chars: Vec<char> = word.chars().collect();
            for len in 1..=chars.len().min(4) {
                words.push(chars[..len].iter().collect::<String>());
            }
            words.push(word.to_owned());
        }
    }
    words.sort();
    words.dedup();
    words
}

#[test]
fn keyword_search_through_the_index_finds_exactly_what_scoring_every_sku_found() {
    let t = open_shop();
    let mut keywords: Vec<String> = KEYWORDS.iter().map(|k| (*k).to_owned()).collect();
    keywords.extend(catalogue_words(&t));
    let mut found_any = 0;
    for text in &keywords {
        let indexed = t.shop.search_product(&keyword(text, 50)).unwrap();
        let scanned = t.shop.search_product_by_scan(&keyword(text, 50)).unwrap();
        assert_eq!(indexed, scanned, "keyword {text:?}");
        found_any += usize::from(indexed.matched > 0);
    }
    assert!(
        found_any > keywords.len() / 2,
        "the keywords mostly match something"
    );

    // With the other filters too.
    let filtered = |text: &str| SearchProductParams {
        keyword: Some(text.to_owned()),
        category: Some("手机".to_owned()),
        in_stock_only: true,
        max_price: Some(YuanInput(800_000)),
        sort: Some(SortOrder::PriceAsc),
        limit: Some(50),
        ..Default::default()
    };
    for text in ["iphone", "黑", "pro 256gb", "17"] {
        assert_eq!(
            t.shop.search_product(&filtered(text)).unwrap(),
            t.shop.search_product_by_scan(&filtered(text)).unwrap(),
            "keyword {text:?} with filters"
        );
    }
}
