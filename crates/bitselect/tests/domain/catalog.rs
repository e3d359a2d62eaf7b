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
    let model = &result.items[0];
    assert_eq!(model.spu_code, "IPHONE-17");
    assert_eq!(model.specs["芯片"], "A19 芯片", "the model's specs");
    assert_eq!(model.skus.len(), 1);
    let sku = &model.skus[0];
    assert_eq!(
        (model.name.as_str(), sku.config.as_deref()),
        ("iPhone 17", Some("256GB 黑色"))
    );
    assert_eq!(sku.price_fen, 679_900);
    assert_eq!(sku.stock, 10);
    assert!(sku.available);
    assert_eq!(
        (model.min_price_fen, model.max_price_fen),
        (679_900, 679_900)
    );
}

#[test]
fn a_keyword_that_is_a_sku_code_finds_that_sku_and_a_model_code_its_model_first() {
    let t = open_shop();
    let by_sku = t.shop.search_product(&keyword("mg6w4ch/a", 10)).unwrap();
    assert_eq!(codes(&by_sku), ["IPHONE-17"]);
    assert_eq!(by_sku.items[0].skus.len(), 1);
    let by_model = t.shop.search_product(&keyword("iphone-17", 10)).unwrap();
    assert_eq!(by_model.items[0].spu_code, "IPHONE-17");
    assert_eq!(by_model.items[0].skus.len(), 10);
}

#[test]
fn keyword_search_ignores_case_and_spacing_and_puts_the_named_model_first() {
    let t = open_shop();
    for text in ["IPHONE 17", "iphone17", "ｉＰｈｏｎｅ１７"] {
        let result = t.shop.search_product(&keyword(text, 5)).unwrap();
        assert_eq!(result.sort, SortOrder::Relevance);
        assert_eq!(result.items[0].spu_code, "IPHONE-17", "{text}");
        assert!(result.matched > 5, "{text}: iPhone 17's cases match too");
        assert_eq!(result.returned, 5);
    }
}

#[test]
fn a_model_is_one_row_with_its_skus_and_price_range_inside() {
    let t = open_shop();
    let result = t.shop.search_product(&keyword("airpods pro", 10)).unwrap();
    let found = codes(&result);
    let mut distinct = found.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), found.len(), "one row per model: {found:?}");
    assert_eq!(found[0], "AIRPODS-PRO-3", "the product before its cases");
    for model in &result.items {
        assert!(!model.skus.is_empty());
        assert!(
            model
                .skus
                .iter()
                .all(|s| { (model.min_price_fen..=model.max_price_fen).contains(&s.price_fen) })
        );
    }
}

#[test]
fn the_products_a_query_names_come_before_their_accessories() {
    let t = open_shop();
    let result = t.shop.search_product(&keyword("降噪耳机", 10)).unwrap();
    let mut first_two = codes(&result)[..2].to_vec();
    first_two.sort();
    assert_eq!(first_two, ["AIRPODS-MAX-2", "AIRPODS-PRO-3"]);
    let earphones = t.shop.search_product(&keyword("耳机", 10)).unwrap();
    let categories: Vec<&str> = earphones
        .items
        .iter()
        .map(|m| m.category.as_str())
        .collect();
    assert_eq!(&categories[..3], ["耳机音频"; 3], "{:?}", codes(&earphones));
}

#[test]
fn shoppers_words_find_the_catalogues_words() {
    let t = open_shop();
    let cases: &[(&str, &str)] = &[
        ("台式机", "MAC-MINI"),
        ("laptop", "MACBOOK-AIR"),
        ("tablet", "IPAD-MINI"),
        ("smart watch", "WATCH-ULTRA-4"),
        ("防丢器", "AIRTAG"),
        ("头显", "VISION-PRO"),
        ("智能音箱", "HOMEPOD-MINI"),
        ("折叠屏手机", "IPHONE-DUO"),
        ("轻薄笔记本", "MACBOOK-AIR"),
        ("运动手表", "WATCH-SE-3"),
    ];
    for (text, expected) in cases {
        let result = t.shop.search_product(&keyword(text, 10)).unwrap();
        assert!(
            codes(&result).contains(&(*expected).to_owned()),
            "{text} finds {expected}: {:?}",
            codes(&result)
        );
        assert!(!result.terms.is_empty(), "{text}: says what it looked for");
    }
}

#[test]
fn keyword_terms_must_all_match_and_the_skus_named_come_first() {
    let t = open_shop();
    let result = t
        .shop
        .search_product(&keyword("iPhone 17 雾蓝色", 10))
        .unwrap();
    assert_eq!(result.items[0].spu_code, "IPHONE-17");
    let first: Vec<&str> = result.items[0]
        .skus
        .iter()
        .take(2)
        .map(|s| s.sku_code.as_str())
        .collect();
    assert_eq!(first, ["MG6Y4CH/A", "MG744CH/A"], "the blue ones first");
}

#[test]
fn nothing_found_says_what_was_tried_and_offers_the_nearest_categories() {
    let t = open_shop();
    let none = t.shop.search_product(&keyword("华为手机", 10)).unwrap();
    assert_eq!(none.matched, 0);
    assert!(none.items.is_empty());
    let said: Vec<&str> = none.terms.iter().map(|t| t.said.as_str()).collect();
    assert_eq!(said, ["华为", "手机"]);
    assert_eq!(none.nearest_categories[0].category, "手机");
    assert!(!none.nearest_categories[0].examples.is_empty());
    let text = none.to_string();
    assert!(
        text.contains("华为") && text.contains("相近的类目：手机"),
        "{text}"
    );
}

#[test]
fn filters_apply_to_the_live_rows_before_the_limit_so_matched_is_true() {
    let t = open_shop();
    let all = t.shop.search_product(&keyword("iPhone", 50)).unwrap();
    let one = t.shop.search_product(&keyword("iPhone", 1)).unwrap();
    assert_eq!(one.matched, all.matched);
    assert_eq!(all.returned, all.matched.min(50));

    // Stock and price are read live: a SKU sold out or repriced behind the
    // shop's back is filtered as it is now.
    t.set_sku(IPHONE_17, "stock", 0);
    t.set_sku(IPHONE_17, "price_fen", 100);
    let cheap = t
        .shop
        .search_product(&SearchProductParams {
            keyword: Some("iPhone 17".into()),
            max_price: Some(YuanInput(100)),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(codes(&cheap), ["IPHONE-17"]);
    assert_eq!(cheap.items[0].skus[0].sku_code, IPHONE_17);
    let in_stock = t
        .shop
        .search_product(&SearchProductParams {
            keyword: Some("iPhone 17".into()),
            max_price: Some(YuanInput(100)),
            in_stock_only: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(in_stock.matched, 0);
}

#[test]
fn a_short_page_is_the_head_of_the_long_one_whatever_the_filters_and_sort() {
    // A page holding fewer models than match is read in two steps (which
    // models qualify, then the page's rows); one holding them all in one.
    // Both must give the same models, in the same order, with the same SKUs.
    let t = open_shop();
    let searches = [
        SearchProductParams::default(),
        SearchProductParams {
            keyword: Some("iPhone".into()),
            ..Default::default()
        },
        SearchProductParams {
            keyword: Some("保护壳".into()),
            in_stock_only: true,
            sort: Some(SortOrder::StockDesc),
            ..Default::default()
        },
        SearchProductParams {
            category: Some("配件".into()),
            min_price: Some(YuanInput(30_000)),
            max_price: Some(YuanInput(50_000)),
            sort: Some(SortOrder::PriceDesc),
            ..Default::default()
        },
        SearchProductParams {
            tags: vec!["保护壳".into()],
            keyword: Some("iPhone 17".into()),
            ..Default::default()
        },
        SearchProductParams {
            category: Some("配件".into()),
            keyword: Some("iPhone 17".into()),
            ..Default::default()
        },
        SearchProductParams {
            spu_codes: vec!["IPHONE-17".into(), "IPHONE-17E".into(), "ACC-0449".into()],
            sort: Some(SortOrder::PriceAsc),
            ..Default::default()
        },
    ];
    for search in searches {
        let long = t
            .shop
            .search_product(&SearchProductParams {
                limit: Some(50),
                ..search.clone()
            })
            .unwrap();
        assert!(long.matched >= 3, "{search:?} finds enough to page");
        for limit in [1, 2, long.matched.min(50) as u32] {
            let short = t
                .shop
                .search_product(&SearchProductParams {
                    limit: Some(limit),
                    ..search.clone()
                })
                .unwrap();
            assert_eq!(short.matched, long.matched, "{search:?} limit {limit}");
            assert_eq!(
                short.items,
                long.items[..limit as usize],
                "{search:?} limit {limit}"
            );
            // A price ceiling no SKU reaches changes nothing, though it makes
            // the database, not the index, say which models qualify.
            let ceiling = t
                .shop
                .search_product(&SearchProductParams {
                    limit: Some(limit),
                    max_price: search.max_price.or(Some(YuanInput(100_000_000))),
                    ..search.clone()
                })
                .unwrap();
            assert_eq!(
                (ceiling.matched, &ceiling.items),
                (short.matched, &short.items),
                "{search:?} limit {limit} under a price ceiling"
            );
        }
    }
}

#[test]
fn a_catalogue_change_reaches_the_search_of_every_instance() {
    let t = open_shop();
    let other = t.reopen();
    // Both instances hold an index of the catalogue as it was.
    for shop in [&t.shop, &other] {
        let found = shop.search_product(&keyword("AirTag", 10)).unwrap();
        assert_eq!(found.items[0].name, "AirTag");
        let found = shop.search_product(&keyword("星空版", 10)).unwrap();
        assert_eq!(found.matched, 0);
    }
    t.run_sql("UPDATE product SET name = 'AirTag 星空版' WHERE spu_code = 'AIRTAG'");
    // One instance first finds the model on the index it holds (the version
    // comes with the page's rows), the other first finds nothing on it.
    let renamed = t.shop.search_product(&keyword("AirTag", 10)).unwrap();
    assert_eq!(renamed.items[0].name, "AirTag 星空版");
    let new_word = other.search_product(&keyword("星空版", 10)).unwrap();
    assert_eq!(codes(&new_word), ["AIRTAG"]);
    for shop in [&t.shop, &other] {
        let found = shop.search_product(&keyword("星空版", 10)).unwrap();
        assert_eq!(codes(&found), ["AIRTAG"]);
        let found = shop.search_product(&keyword("AirTag", 10)).unwrap();
        assert_eq!(found.items[0].name, "AirTag 星空版");
    }
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
    // The seed's phones from ¥9,000 to ¥12,000: 16 SKUs of iPhone 18 Pro,
    // 18 Pro Max and Air (data/skus.json), whatever their order.
    assert_eq!(result.matched, 3);
    assert_eq!(result.skus().count(), 16);
    let products: std::collections::BTreeSet<&str> =
        result.items.iter().map(|h| h.spu_code.as_str()).collect();
    assert_eq!(
        products,
        ["IPHONE-18-PRO", "IPHONE-18-PRO-MAX", "IPHONE-AIR"].into()
    );
    assert!(result.items.iter().all(|m| m.category == "手机"));
    assert!(
        result
            .skus()
            .all(|s| (900_000..=1_200_000).contains(&s.price_fen))
    );
    assert!(
        result
            .items
            .windows(2)
            .all(|w| w[0].max_price_fen >= w[1].max_price_fen)
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
        all.skus()
            .any(|s| s.sku_code == IPHONE_16_DELISTED && !s.available)
    );
    let in_stock = t
        .shop
        .search_product(&SearchProductParams {
            spu_codes: vec!["IPHONE-16".into()],
            in_stock_only: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(in_stock.skus().count(), all.skus().count() - 1);
    let cases = t
        .shop
        .search_product(&SearchProductParams {
            tags: vec!["保护壳".into(), "防摔".into()],
            limit: Some(50),
            ..Default::default()
        })
        .unwrap();
    // The seed's models that carry both tags (data/products.json), with
    // their 516 SKUs (data/skus.json); 50 of the models shown.
    assert_eq!(cases.matched, 272);
    assert_eq!(cases.items.len(), 50);
    assert!(
        cases
            .items
            .iter()
            .all(|m| m.tags.contains(&"保护壳".to_owned()) && m.tags.contains(&"防摔".to_owned()))
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
/// characters, mixed case, codes, several terms, and characters that mean
/// something to a query language.
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

fn codes(result: &bitselect::product_search::SearchResult) -> Vec<String> {
    result.items.iter().map(|m| m.spu_code.clone()).collect()
}

#[test]
fn any_keyword_is_answered_and_filters_hold_for_every_model_found() {
    let t = open_shop();
    let mut found_any = 0;
    for text in KEYWORDS {
        let result = t.shop.search_product(&keyword(text, 50)).unwrap();
        assert_eq!(result.returned, result.items.len(), "keyword {text:?}");
        assert!(result.matched >= result.returned, "keyword {text:?}");
        found_any += usize::from(result.matched > 0);
        let filtered = t
            .shop
            .search_product(&SearchProductParams {
                keyword: Some((*text).to_owned()),
                category: Some("手机".to_owned()),
                in_stock_only: true,
                max_price: Some(YuanInput(800_000)),
                sort: Some(SortOrder::PriceAsc),
                limit: Some(50),
                ..Default::default()
            })
            .unwrap();
        assert!(filtered.items.iter().all(|m| m.category == "手机"));
        assert!(
            filtered
                .skus()
                .all(|s| s.available && s.price_fen <= 800_000),
            "keyword {text:?} with filters"
        );
    }
    assert!(
        found_any > KEYWORDS.len() / 2,
        "the keywords mostly match something"
    );
}
