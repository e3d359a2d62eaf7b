//! The shop's rules, exercised on the domain API with a clock that stands
//! still at the moment of seeding.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};

use bitselect::money::YuanInput;
use bitselect::params::{
    AfterSaleType, ApplyAfterSaleParams, CancelOrderParams, CartAction, ChangeAddressParams,
    OrderStatus, PayOrderParams, QueryAfterSaleParams, QueryCouponsParams, QueryLogisticsParams,
    QueryOrderParams, SearchProductParams, SortOrder, SubmitTicketParams, TicketTopic,
    UpdateCartItemParams,
};
use bitselect::{Refusal, Shop, ShopError, ShopStats};
use pretty_assertions::assert_eq;
use support::*;

fn refusal_code<T: std::fmt::Debug>(result: Result<T, ShopError>) -> &'static str {
    match result {
        Err(error) => error.code(),
        Ok(value) => panic!("expected a refusal, got {value:?}"),
    }
}

fn coupon_status(shop: &Shop, code: &str) -> (String, Option<String>) {
    let report = shop.query_coupons(&QueryCouponsParams::default()).unwrap();
    let c = report.coupons.into_iter().find(|c| c.code == code).unwrap();
    (c.status, c.used_on_order)
}

// ---- seeding ---------------------------------------------------------------

#[test]
fn the_seed_has_every_record_of_the_demo_data() {
    let t = open_shop();
    assert_eq!(
        t.shop.stats().unwrap(),
        ShopStats {
            models: 695,
            skus: 1420,
            coupons: 7,
            held_coupons: 7,
            cart_lines: 5,
            orders: 8,
            order_lines: 11,
            parcels: 5,
            parcel_events: 18,
            after_sales: 2,
            tickets: 0,
        }
    );
}

#[test]
fn seeding_happens_once_even_when_reopened_later() {
    let t = open_shop();
    let before = t.shop.query_order(&one_order("88236")).unwrap();
    t.clock.advance(DAY);
    let reopened = Shop::open_with_clock(t.dir.path(), t.clock.clone()).unwrap();
    assert_eq!(reopened.stats().unwrap().orders, 8);
    let after = reopened.query_order(&one_order("88236")).unwrap();
    assert_eq!(after.orders[0].created_at, before.orders[0].created_at);
}

#[test]
fn relative_times_are_resolved_against_the_clock_at_seeding() {
    let t = open_shop();
    let order = &t.shop.query_order(&one_order("88236")).unwrap().orders[0];
    // T0 is 20:00 in Shanghai; 88236 was created 3 minutes before.
    assert_eq!(order.created_at, "2026-11-29T19:57:00+08:00");
    assert_eq!(order.paid_at, None);
}

#[test]
fn order_88233_carries_the_edu_coupon_discount_in_exact_fen() {
    let t = open_shop();
    let order = &t.shop.query_order(&one_order("88233")).unwrap().orders[0];
    assert_eq!(order.total_amount_fen, 999_900);
    assert_eq!(order.discount_amount_fen, 79_992);
    assert_eq!(order.pay_amount_fen, 919_908);
    assert_eq!(order.pay_amount.to_string(), "9199.08");
    assert_eq!(order.coupon_code.as_deref(), Some("EDU-MAC-920"));
}

// ---- search ----------------------------------------------------------------

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
    assert!(result.matched > 0);
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
    assert!(cases.matched > 0);
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

// ---- cart ------------------------------------------------------------------

#[test]
fn the_cart_shows_prices_then_and_now_stock_and_availability() {
    let t = open_shop();
    let cart = t.shop.query_cart().unwrap();
    assert_eq!(cart.lines.len(), 5);
    assert_eq!(cart.item_count, 6);
    let line = |sku: &str| cart.lines.iter().find(|l| l.sku_code == sku).unwrap();
    let pro = line("MJT74CH/A");
    assert_eq!(
        (
            pro.added_price_fen,
            pro.current_price_fen,
            pro.price_change_fen
        ),
        (1_119_888, 999_900, -119_988)
    );
    assert_eq!(line(AIRPODS_NO_STOCK).availability, "无货");
    assert!(!line(AIRPODS_NO_STOCK).available);
    assert_eq!(line(VISION_PRO_3_LEFT).stock, 3);
    assert_eq!(line("MK8T4FE/A").subtotal_fen, 79_800);
    // 9999 + 1899 + 31999 + 2 × 399 + 379, of which all but the AirPods can be ordered.
    assert_eq!(cart.total_fen, 4_507_400);
    assert_eq!(cart.orderable_total_fen, 4_507_400 - 189_900);
}

#[test]
fn adding_the_delisted_iphone_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .update_cart_item(&add(IPHONE_16_DELISTED, 1), None)
        .unwrap_err();
    assert_eq!(err.code(), "SKU_DELISTED");
    assert!(err.to_string().contains(IPHONE_16_DELISTED));
    assert_eq!(cart_quantity(&t.shop, IPHONE_16_DELISTED), 0);
}

#[test]
fn adding_the_out_of_stock_airpods_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .update_cart_item(&add(AIRPODS_NO_STOCK, 1), None)
        .unwrap_err();
    assert_eq!(err.code(), "OUT_OF_STOCK");
    assert_eq!(
        cart_quantity(&t.shop, AIRPODS_NO_STOCK),
        1,
        "the seeded line is untouched"
    );
}

#[test]
fn adding_an_unknown_sku_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .update_cart_item(&add("NOPE123", 1), None)
        .unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_SKU");
    assert!(err.to_string().contains("search_product"));
}

#[test]
fn adding_again_accumulates_and_keeps_the_first_price() {
    let t = open_shop();
    let first = t
        .shop
        .update_cart_item(&add("mjt74ch/a", 2), None)
        .unwrap()
        .value;
    assert_eq!((first.previous_quantity, first.quantity), (1, 3));
    let line = first
        .cart
        .lines
        .iter()
        .find(|l| l.sku_code == "MJT74CH/A")
        .unwrap();
    assert_eq!(line.added_price_fen, 1_119_888);
}

#[test]
fn adding_more_than_the_stock_is_allowed_but_flagged() {
    let t = open_shop();
    let update = t
        .shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 4), None)
        .unwrap()
        .value;
    assert_eq!(update.quantity, 5);
    assert!(update.note.unwrap().contains("仅剩 3 件"));
    let line = update
        .cart
        .lines
        .iter()
        .find(|l| l.sku_code == VISION_PRO_3_LEFT)
        .unwrap();
    assert_eq!(line.availability, "库存不足（仅剩 3 件）");
}

#[test]
fn decreasing_and_removing_cart_lines() {
    let t = open_shop();
    let decrease = |q| UpdateCartItemParams {
        sku_code: "MK8T4FE/A".into(),
        action: CartAction::Decrease,
        quantity: Some(q),
    };
    let remove = UpdateCartItemParams {
        sku_code: "MK8T4FE/A".into(),
        action: CartAction::Remove,
        quantity: None,
    };
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&decrease(3), None)),
        "DECREASE_TOO_MUCH"
    );
    let down = t.shop.update_cart_item(&decrease(1), None).unwrap().value;
    assert_eq!((down.quantity, down.removed), (1, false));
    let gone = t.shop.update_cart_item(&remove, None).unwrap().value;
    assert!(gone.removed);
    assert_eq!(gone.cart.lines.len(), 4);
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&remove, None)),
        "NOT_IN_CART"
    );
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&decrease(1), None)),
        "NOT_IN_CART"
    );
}

#[test]
fn decreasing_to_zero_removes_the_line() {
    let t = open_shop();
    let update = t
        .shop
        .update_cart_item(
            &UpdateCartItemParams {
                sku_code: "MDF44FE/A".into(),
                action: CartAction::Decrease,
                quantity: Some(1),
            },
            None,
        )
        .unwrap()
        .value;
    assert!(update.removed);
    assert_eq!(cart_quantity(&t.shop, "MDF44FE/A"), 0);
}

#[test]
fn cart_quantities_are_checked() {
    let t = open_shop();
    let missing = UpdateCartItemParams {
        quantity: None,
        ..add(IPHONE_17, 1)
    };
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&missing, None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&add(IPHONE_17, 0), None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&add(IPHONE_17, 100), None)),
        "INVALID_ARGUMENT"
    );
    t.shop.update_cart_item(&add(IPHONE_17, 99), None).unwrap();
    assert_eq!(
        refusal_code(t.shop.update_cart_item(&add(IPHONE_17, 1), None)),
        "CART_LINE_LIMIT"
    );
}

// ---- ordering --------------------------------------------------------------

#[test]
fn the_seed_purchase_reserves_stock_and_empties_the_cart_line() {
    let t = open_shop();
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let order = t
        .shop
        .create_order(&order(&[(IPHONE_17, 1)]), None)
        .unwrap()
        .value;
    assert_eq!(order.order_no, "88239", "numbering continues from the seed");
    assert_eq!(order.status, "待支付");
    assert_eq!(order.pay_amount_fen, 679_900);
    assert_eq!(order.lines[0].sku_name, "iPhone 17 256GB 黑色");
    assert_eq!(order.receiver.name, "张明", "the latest order's receiver");
    assert_eq!(order.created_at, "2026-11-29T20:00:00+08:00");
    assert_eq!(
        order.next_actions,
        ["pay_order", "cancel_order", "change_address"]
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 0);
    assert_eq!(t.shop.query_cart().unwrap().lines.len(), 5);
}

#[test]
fn ordering_part_of_a_cart_line_leaves_the_rest() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 3), None).unwrap();
    t.shop
        .create_order(&order(&[(IPHONE_17, 2)]), None)
        .unwrap();
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
    assert_eq!(stock(&t.shop, IPHONE_17), 8);
}

#[test]
fn ordering_what_is_not_in_the_cart_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[(IPHONE_17, 1)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "NOT_IN_CART");
    assert!(
        err.to_string()
            .contains("购物车中没有 MG6W4CH/A，请先调用 update_cart_item"),
        "{err}"
    );
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
    assert_eq!(t.shop.stats().unwrap().orders, 8);
}

#[test]
fn ordering_more_than_the_cart_holds_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[("MK8T4FE/A", 3)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "CART_QUANTITY_SHORT");
    assert_eq!(cart_quantity(&t.shop, "MK8T4FE/A"), 2);
}

#[test]
fn ordering_the_out_of_stock_airpods_in_the_cart_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[(AIRPODS_NO_STOCK, 1)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "OUT_OF_STOCK");
}

#[test]
fn ordering_the_delisted_iphone_is_refused() {
    let t = open_shop();
    let err = t
        .shop
        .create_order(&order(&[(IPHONE_16_DELISTED, 1)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "SKU_DELISTED");
}

#[test]
fn ordering_beyond_the_stock_is_refused_and_changes_nothing() {
    let t = open_shop();
    t.shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 3), None)
        .unwrap();
    let err = t
        .shop
        .create_order(&order(&[("MK8T4FE/A", 1), (VISION_PRO_3_LEFT, 4)]), None)
        .unwrap_err();
    assert_eq!(err.code(), "INSUFFICIENT_STOCK");
    assert!(err.to_string().contains("仅剩 3 件"), "{err}");
    assert_eq!(
        stock(&t.shop, "MK8T4FE/A"),
        393,
        "the first line was not reserved"
    );
    assert_eq!(cart_quantity(&t.shop, "MK8T4FE/A"), 2);
}

#[test]
fn malformed_orders_are_refused() {
    let t = open_shop();
    assert_eq!(
        refusal_code(t.shop.create_order(&order(&[]), None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        refusal_code(
            t.shop
                .create_order(&order(&[("MK8T4FE/A", 1), ("mk8t4fe/a", 1)]), None)
        ),
        "DUPLICATE_ITEM"
    );
    assert_eq!(
        refusal_code(t.shop.create_order(&order(&[("MK8T4FE/A", 0)]), None)),
        "INVALID_ARGUMENT"
    );
    let bad_phone = bitselect::params::CreateOrderParams {
        receiver_phone: Some("call me".into()),
        ..order(&[("MK8T4FE/A", 1)])
    };
    assert_eq!(
        refusal_code(t.shop.create_order(&bad_phone, None)),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn a_given_receiver_field_overrides_only_itself() {
    let t = open_shop();
    let p = bitselect::params::CreateOrderParams {
        receiver_address: Some("北京市海淀区中关村大街 1 号".into()),
        ..order(&[("MK8T4FE/A", 1)])
    };
    let created = t.shop.create_order(&p, None).unwrap().value;
    assert_eq!(created.receiver.name, "张明");
    assert_eq!(created.receiver.phone, "13800138000");
    assert_eq!(created.receiver.address, "北京市海淀区中关村大街 1 号");
}

#[test]
fn ten_concurrent_orders_for_the_last_three_vision_pros_make_exactly_three() {
    let t = open_shop();
    // The cart holds 1; make it 10 so only stock can stop an order.
    t.shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 9), None)
        .unwrap();
    let barrier = Arc::new(Barrier::new(10));
    let handles: Vec<_> = (0..10)
        .map(|_| {
            let shop = t.shop.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                shop.create_order(&order(&[(VISION_PRO_3_LEFT, 1)]), None)
            })
        })
        .collect();
    let outcomes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let placed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(placed.len(), 3);
    for refused in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert!(
            matches!(
                refused,
                ShopError::Refused(Refusal::InsufficientStock { .. } | Refusal::OutOfStock { .. })
            ),
            "{refused}"
        );
    }
    let mut numbers: Vec<_> = placed.iter().map(|w| w.value.order_no.clone()).collect();
    numbers.sort();
    assert_eq!(numbers, ["88239", "88240", "88241"]);
    assert_eq!(stock(&t.shop, VISION_PRO_3_LEFT), 0);
    assert_eq!(cart_quantity(&t.shop, VISION_PRO_3_LEFT), 7);
    assert_eq!(t.shop.stats().unwrap().orders, 11);
}

// ---- idempotency -----------------------------------------------------------

#[test]
fn a_repeated_idempotency_key_places_one_order() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 2), None).unwrap();
    let p = order(&[(IPHONE_17, 1)]);
    let first = t.shop.create_order(&p, Some("call-1")).unwrap();
    let again = t.shop.create_order(&p, Some("call-1")).unwrap();
    assert!(!first.replayed);
    assert!(again.replayed);
    assert_eq!(again.value, first.value);
    assert_eq!(t.shop.stats().unwrap().orders, 9);
    assert_eq!(stock(&t.shop, IPHONE_17), 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
}

#[test]
fn reusing_a_key_with_other_arguments_is_refused() {
    let t = open_shop();
    t.shop
        .update_cart_item(&add(IPHONE_17, 1), Some("k"))
        .unwrap();
    let err = t
        .shop
        .update_cart_item(&add(IPHONE_17, 2), Some("k"))
        .unwrap_err();
    assert_eq!(err.code(), "IDEMPOTENCY_CONFLICT");
    let err = t
        .shop
        .create_order(&order(&[(IPHONE_17, 1)]), Some("k"))
        .unwrap_err();
    assert_eq!(err.code(), "IDEMPOTENCY_CONFLICT");
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
}

#[test]
fn a_refused_call_does_not_use_up_its_key() {
    let t = open_shop();
    let p = order(&[(IPHONE_17, 1)]);
    assert_eq!(
        refusal_code(t.shop.create_order(&p, Some("retry"))),
        "NOT_IN_CART"
    );
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let placed = t.shop.create_order(&p, Some("retry")).unwrap();
    assert!(!placed.replayed);
    assert_eq!(placed.value.status, "待支付");
}

// ---- coupons ---------------------------------------------------------------

#[test]
fn the_ipad_education_coupon_takes_eight_percent_off_the_ipad() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPAD_AIR, 1), None).unwrap();
    let placed = t
        .shop
        .create_order(
            &order_with_coupon(&[(IPAD_AIR, 1), ("MK8T4FE/A", 1)], "EDU-PAD-920"),
            None,
        )
        .unwrap()
        .value;
    // 5999.00 × 0.08 = 479.92 off the iPad only; the case is not a tablet.
    assert_eq!(placed.total_amount_fen, 599_900 + 39_900);
    assert_eq!(placed.discount_amount_fen, 47_992);
    assert_eq!(placed.pay_amount_fen, 599_900 + 39_900 - 47_992);
    assert_eq!(
        coupon_status(&t.shop, "EDU-PAD-920"),
        ("已使用".into(), Some(placed.order_no))
    );
}

#[test]
fn the_expired_coupon_is_refused_and_nothing_changes() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let err = t
        .shop
        .create_order(&order_with_coupon(&[(IPHONE_17, 1)], "NEW-1000-100"), None)
        .unwrap_err();
    assert_eq!(err.code(), "COUPON_EXPIRED");
    assert!(err.to_string().contains("NEW-1000-100"));
    assert_eq!(stock(&t.shop, IPHONE_17), 10);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);
    assert_eq!(coupon_status(&t.shop, "NEW-1000-100").0, "未使用");
}

#[test]
fn the_phone_coupon_is_refused_for_one_iphone_17() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let err = t
        .shop
        .create_order(
            &order_with_coupon(&[(IPHONE_17, 1)], "PHONE-8000-500"),
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), "COUPON_BELOW_THRESHOLD");
    assert!(err.to_string().contains("还差 1201.00 元"), "{err}");
}

#[test]
fn used_foreign_and_mismatched_coupons_are_refused() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let with = |code| order_with_coupon(&[(IPHONE_17, 1)], code);
    assert_eq!(
        refusal_code(t.shop.create_order(&with("EDU-MAC-920"), None)),
        "COUPON_USED"
    );
    assert_eq!(
        refusal_code(t.shop.create_order(&with("FREE-MONEY"), None)),
        "COUPON_NOT_HELD"
    );
    assert_eq!(
        refusal_code(t.shop.create_order(&with("ACC-500-50"), None)),
        "COUPON_CATEGORY_MISMATCH"
    );
}

#[test]
fn a_whole_shop_coupon_applies_once_its_threshold_is_met() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let placed = t
        .shop
        .create_order(&order_with_coupon(&[(IPHONE_17, 1)], "shop-5000-300"), None)
        .unwrap()
        .value;
    assert_eq!(placed.discount_amount_fen, 30_000);
    assert_eq!(placed.pay_amount.to_string(), "6499.00");
    assert_eq!(placed.coupon_code.as_deref(), Some("SHOP-5000-300"));
}

#[test]
fn query_coupons_tries_each_coupon_against_given_amounts() {
    let t = open_shop();
    let report = t
        .shop
        .query_coupons(&QueryCouponsParams {
            amount: Some(YuanInput(679_900)),
            category_amounts: BTreeMap::from([("手机".to_owned(), YuanInput(679_900))]),
        })
        .unwrap();
    assert_eq!(report.basis, "arguments");
    let verdicts: BTreeMap<_, _> = report
        .coupons
        .iter()
        .map(|c| {
            (
                c.code.as_str(),
                c.discount_fen
                    .ok_or(c.reason_code.clone().unwrap_or_default()),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        BTreeMap::from([
            ("ACC-500-50", Err("COUPON_CATEGORY_MISMATCH".to_owned())),
            ("EDU-MAC-920", Err("COUPON_USED".to_owned())),
            ("EDU-PAD-920", Err("COUPON_CATEGORY_MISMATCH".to_owned())),
            ("NEW-1000-100", Err("COUPON_EXPIRED".to_owned())),
            ("PHONE-8000-500", Err("COUPON_BELOW_THRESHOLD".to_owned())),
            ("SHOP-12000-800", Err("COUPON_BELOW_THRESHOLD".to_owned())),
            ("SHOP-5000-300", Ok(30_000)),
        ])
    );
    assert_eq!(report.best_code.as_deref(), Some("SHOP-5000-300"));
}

#[test]
fn query_coupons_defaults_to_the_orderable_cart() {
    let t = open_shop();
    let report = t
        .shop
        .query_coupons(&QueryCouponsParams::default())
        .unwrap();
    assert_eq!(report.basis, "cart");
    // The AirPods have no stock and do not count.
    assert_eq!(report.total_fen, 4_507_400 - 189_900);
    let accessories = report
        .category_amounts
        .iter()
        .find(|c| c.category == "配件")
        .unwrap();
    assert_eq!(accessories.amount_fen, 2 * 39_900 + 37_900);
    let discount = |code: &str| {
        report
            .coupons
            .iter()
            .find(|c| c.code == code)
            .unwrap()
            .discount_fen
    };
    assert_eq!(discount("ACC-500-50"), Some(5_000));
    assert_eq!(discount("SHOP-12000-800"), Some(80_000));
    assert_eq!(report.best_code.as_deref(), Some("SHOP-12000-800"));
}

#[test]
fn query_coupons_refuses_unknown_categories_and_inconsistent_amounts() {
    let t = open_shop();
    let unknown = QueryCouponsParams {
        amount: None,
        category_amounts: BTreeMap::from([("手表".to_owned(), YuanInput(100))]),
    };
    assert_eq!(
        refusal_code(t.shop.query_coupons(&unknown)),
        "UNKNOWN_CATEGORY"
    );
    let short = QueryCouponsParams {
        amount: Some(YuanInput(100)),
        category_amounts: BTreeMap::from([("手机".to_owned(), YuanInput(200))]),
    };
    assert_eq!(
        refusal_code(t.shop.query_coupons(&short)),
        "INVALID_ARGUMENT"
    );
}

/// The largest amount a tool argument may name: 1亿元, in fen.
const LARGEST_AMOUNT_FEN: i64 = 10_000_000_000;

/// 1,200 `categoryAmounts` keys that all trim to 平板, each `amount`.
fn one_category_under_many_keys(amount: YuanInput) -> BTreeMap<String, YuanInput> {
    (0..1_200)
        .map(|spaces| (format!("{}平板", " ".repeat(spaces)), amount))
        .collect()
}

#[test]
fn category_amounts_adding_up_beyond_the_largest_amount_are_refused_not_overflowed() {
    let t = open_shop();
    // Each is 9999999999999 yuan, the most digits the money parser reads.
    let huge = QueryCouponsParams {
        amount: None,
        category_amounts: one_category_under_many_keys(YuanInput(999_999_999_999_900)),
    };
    let error = t.shop.query_coupons(&huge).unwrap_err();
    assert_eq!(error.code(), "INVALID_ARGUMENT");
    assert!(error.to_string().contains("金额过大"), "{error}");
}

#[test]
fn category_amounts_at_the_largest_amount_still_add_up() {
    let t = open_shop();
    let half = YuanInput(LARGEST_AMOUNT_FEN / 2);
    let p = QueryCouponsParams {
        amount: None,
        category_amounts: BTreeMap::from([("平板".to_owned(), half), (" 平板 ".to_owned(), half)]),
    };
    let report = t.shop.query_coupons(&p).unwrap();
    assert_eq!(report.total_fen, LARGEST_AMOUNT_FEN);
    let edu = report
        .coupons
        .iter()
        .find(|c| c.code == "EDU-PAD-920")
        .unwrap();
    // 8 % of 1亿元, exact to the fen.
    assert_eq!(edu.discount_fen, Some(800_000_000));
}

#[test]
fn an_amount_argument_beyond_the_largest_amount_is_refused_when_read() {
    let error = serde_json::from_value::<QueryCouponsParams>(serde_json::json!({
        "categoryAmounts": {"电脑": 9_999_999_999_999_u64}
    }))
    .unwrap_err();
    assert!(error.to_string().contains("金额过大"), "{error}");
    let error = serde_json::from_value::<YuanInput>(serde_json::json!("100000000.01")).unwrap_err();
    assert!(error.to_string().contains("金额过大"), "{error}");
    let largest: YuanInput = serde_json::from_value(serde_json::json!(100_000_000)).unwrap();
    assert_eq!(largest, YuanInput(LARGEST_AMOUNT_FEN));
}

#[test]
fn coupons_are_not_valid_before_their_window_opens() {
    let t = open_shop();
    // SHOP-5000-300 became valid 30 days before seeding.
    t.clock.set(T0 - 31 * DAY);
    let report = t
        .shop
        .query_coupons(&QueryCouponsParams {
            amount: Some(YuanInput(600_000)),
            ..Default::default()
        })
        .unwrap();
    let shop_coupon = report
        .coupons
        .iter()
        .find(|c| c.code == "SHOP-5000-300")
        .unwrap();
    assert_eq!(
        shop_coupon.reason_code.as_deref(),
        Some("COUPON_NOT_YET_VALID")
    );
}

// ---- paying, cancelling, changing the address -------------------------------

#[test]
fn cancelling_returns_stock_and_coupon() {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPAD_AIR, 1), None).unwrap();
    let placed = t
        .shop
        .create_order(&order_with_coupon(&[(IPAD_AIR, 1)], "EDU-PAD-920"), None)
        .unwrap()
        .value;
    assert_eq!(stock(&t.shop, IPAD_AIR), 53);
    t.clock.advance(5 * MINUTE);
    let cancelled = t
        .shop
        .cancel_order(
            &CancelOrderParams {
                order_no: placed.order_no.clone(),
                reason: Some("不想要了".into()),
            },
            None,
        )
        .unwrap()
        .value;
    assert_eq!(cancelled.previous_status, "待支付");
    assert_eq!(cancelled.coupon_returned.as_deref(), Some("EDU-PAD-920"));
    assert_eq!(cancelled.refund_amount_fen, 0);
    assert_eq!(cancelled.order.status, "已取消");
    assert_eq!(
        cancelled.order.cancelled_at.as_deref(),
        Some("2026-11-29T20:05:00+08:00")
    );
    assert_eq!(stock(&t.shop, IPAD_AIR), 54);
    assert_eq!(
        coupon_status(&t.shop, "EDU-PAD-920"),
        ("未使用".into(), None)
    );
}

#[test]
fn paying_then_cancelling_refunds_what_was_paid() {
    let t = open_shop();
    let paid = t
        .shop
        .pay_order(
            &PayOrderParams {
                order_no: "88236".into(),
            },
            None,
        )
        .unwrap()
        .value;
    assert_eq!(paid.order.status, "已支付待发货");
    assert_eq!(paid.paid_amount_fen, 49_800);
    assert_eq!(
        paid.order.paid_at.as_deref(),
        Some("2026-11-29T20:00:00+08:00")
    );
    let again = t.shop.pay_order(
        &PayOrderParams {
            order_no: "88236".into(),
        },
        None,
    );
    assert_eq!(refusal_code(again), "ORDER_STATUS");

    let before = stock(&t.shop, "MFE94CH/A");
    let cancel = CancelOrderParams {
        order_no: "88236".into(),
        reason: None,
    };
    let cancelled = t.shop.cancel_order(&cancel, None).unwrap().value;
    assert_eq!(cancelled.refund_amount.to_string(), "498.00");
    assert_eq!(stock(&t.shop, "MFE94CH/A"), before + 2);
}

#[test]
fn only_orders_that_have_not_shipped_can_be_cancelled() {
    let t = open_shop();
    let cancel = |no: &str| CancelOrderParams {
        order_no: no.into(),
        reason: None,
    };
    for no in ["88234", "88231", "88237"] {
        let err = t.shop.cancel_order(&cancel(no), None).unwrap_err();
        assert_eq!(err.code(), "ORDER_STATUS", "{no}");
    }
    assert_eq!(
        refusal_code(t.shop.cancel_order(&cancel("99999"), None)),
        "UNKNOWN_ORDER"
    );
    // 88235 is paid but not shipped.
    let cancelled = t.shop.cancel_order(&cancel("88235"), None).unwrap().value;
    assert_eq!(cancelled.refund_amount_fen, 337_800);
}

#[test]
fn the_address_can_change_only_before_shipping() {
    let t = open_shop();
    let change = |no: &str| ChangeAddressParams {
        order_no: no.into(),
        receiver_name: None,
        receiver_phone: Some("13900139000".into()),
        receiver_address: Some("上海市徐汇区漕溪北路 100 号".into()),
    };
    let changed = t.shop.change_address(&change("88235"), None).unwrap().value;
    assert_eq!(changed.previous_receiver.phone, "13800138000");
    assert_eq!(changed.receiver.name, "张明");
    assert_eq!(
        changed.order.receiver.address,
        "上海市徐汇区漕溪北路 100 号"
    );
    assert_eq!(
        refusal_code(t.shop.change_address(&change("88234"), None)),
        "ORDER_STATUS"
    );
    let nothing = ChangeAddressParams {
        order_no: "88236".into(),
        receiver_name: None,
        receiver_phone: None,
        receiver_address: None,
    };
    assert_eq!(
        refusal_code(t.shop.change_address(&nothing, None)),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn new_orders_default_to_the_latest_receiver() {
    let t = open_shop();
    let change = ChangeAddressParams {
        order_no: "88236".into(),
        receiver_name: Some("李华".into()),
        receiver_phone: None,
        receiver_address: None,
    };
    t.shop.change_address(&change, None).unwrap();
    let placed = t
        .shop
        .create_order(&order(&[("MK8T4FE/A", 1)]), None)
        .unwrap()
        .value;
    assert_eq!(placed.receiver.name, "李华");
}

// ---- queries ---------------------------------------------------------------

#[test]
fn one_order_comes_back_in_full() {
    let t = open_shop();
    let list = t.shop.query_order(&one_order("88234")).unwrap();
    let order = &list.orders[0];
    assert_eq!(order.status, "已发货");
    assert_eq!(order.lines.len(), 2);
    assert_eq!(order.total_amount_fen, 699_800);
    assert_eq!(order.tracking_no.as_deref(), Some("BIT9100000234"));
    assert!(order.paid_at.is_some() && order.shipped_at.is_some());
    assert_eq!(order.received_at, None);
    assert_eq!(order.after_sale_windows, None);
    assert_eq!(
        refusal_code(t.shop.query_order(&one_order("1"))),
        "UNKNOWN_ORDER"
    );
}

#[test]
fn recent_orders_come_newest_first_and_filter_by_status() {
    let t = open_shop();
    let recent = t
        .shop
        .query_order(&QueryOrderParams {
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    let numbers: Vec<_> = recent.orders.iter().map(|o| o.order_no.as_str()).collect();
    assert_eq!(numbers, ["88236", "88235", "88234"]);
    assert_eq!(recent.matched, 8);
    let delivered = t
        .shop
        .query_order(&QueryOrderParams {
            status: Some(OrderStatus::Delivered),
            limit: Some(20),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(delivered.matched, 4);
    assert!(delivered.orders.iter().all(|o| o.status == "已签收"));
}

#[test]
fn delivered_orders_show_days_left_in_both_windows() {
    let t = open_shop();
    let windows = |no: &str| {
        let w = t.shop.query_order(&one_order(no)).unwrap().orders[0]
            .after_sale_windows
            .clone()
            .unwrap();
        (w.return_days_left, w.exchange_days_left)
    };
    assert_eq!(windows("88231"), (4, 12));
    assert_eq!(windows("88233"), (0, 5));
    assert_eq!(windows("88232"), (0, 1));
    assert_eq!(windows("88238"), (0, 0));
}

// ---- after-sales -----------------------------------------------------------

fn after_sale(order_no: &str, sku: &str, kind: AfterSaleType) -> ApplyAfterSaleParams {
    ApplyAfterSaleParams {
        order_no: order_no.into(),
        sku_code: sku.into(),
        kind,
        reason: "屏幕有划痕".into(),
    }
}

#[test]
fn the_three_day_delivered_order_can_still_be_returned() {
    let t = open_shop();
    let opened = t
        .shop
        .apply_after_sale(
            &after_sale("88231", IPHONE_17, AfterSaleType::ReturnRefund),
            None,
        )
        .unwrap()
        .value;
    // AS88231001 (an exchange) is completed, so the line is free again.
    assert_eq!(opened.after_sale_no, "AS88231002");
    assert_eq!(
        (opened.kind.as_str(), opened.status.as_str()),
        ("退货退款", "处理中")
    );
    let again = t.shop.apply_after_sale(
        &after_sale("88231", IPHONE_17, AfterSaleType::Exchange),
        None,
    );
    assert_eq!(refusal_code(again), "AFTER_SALE_IN_PROGRESS");
}

#[test]
fn the_ten_day_delivered_order_can_only_be_exchanged() {
    let t = open_shop();
    let err = t
        .shop
        .apply_after_sale(
            &after_sale("88233", "MDH74CH/A", AfterSaleType::ReturnRefund),
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), "AFTER_SALE_WINDOW_CLOSED");
    assert!(err.to_string().contains("type=换货"), "{err}");
    let exchange = t
        .shop
        .apply_after_sale(
            &after_sale("88233", "MDH74CH/A", AfterSaleType::Exchange),
            None,
        )
        .unwrap()
        .value;
    assert_eq!(exchange.kind, "换货");
}

#[test]
fn the_twenty_five_day_delivered_order_can_neither_be_returned_nor_exchanged() {
    let t = open_shop();
    for kind in [AfterSaleType::ReturnRefund, AfterSaleType::Exchange] {
        let err = t
            .shop
            .apply_after_sale(&after_sale("88238", "MJT74CH/A", kind), None)
            .unwrap_err();
        assert_eq!(err.code(), "AFTER_SALE_WINDOW_CLOSED");
        assert!(err.to_string().contains("submit_ticket"), "{err}");
    }
}

#[test]
fn the_return_window_closes_as_the_clock_moves() {
    let t = open_shop();
    t.clock.advance(4 * DAY + 1);
    let err = t
        .shop
        .apply_after_sale(
            &after_sale("88231", IPHONE_17, AfterSaleType::ReturnRefund),
            None,
        )
        .unwrap_err();
    assert_eq!(err.code(), "AFTER_SALE_WINDOW_CLOSED");
}

#[test]
fn after_sales_need_a_delivered_order_and_a_line_of_it_without_an_open_request() {
    let t = open_shop();
    let shipped = after_sale("88234", IPAD_AIR, AfterSaleType::Exchange);
    assert_eq!(
        refusal_code(t.shop.apply_after_sale(&shipped, None)),
        "ORDER_STATUS"
    );
    let foreign_line = after_sale("88231", AIRPODS_NO_STOCK, AfterSaleType::Exchange);
    assert_eq!(
        refusal_code(t.shop.apply_after_sale(&foreign_line, None)),
        "NOT_IN_ORDER"
    );
    // AS88232001 is still in progress for the AirPods of 88232.
    let open = after_sale("88232", AIRPODS_NO_STOCK, AfterSaleType::Exchange);
    let err = t.shop.apply_after_sale(&open, None).unwrap_err();
    assert_eq!(err.code(), "AFTER_SALE_IN_PROGRESS");
    assert!(err.to_string().contains("AS88232001"));
    let short_reason = ApplyAfterSaleParams {
        reason: "坏".into(),
        ..after_sale("88231", IPHONE_17, AfterSaleType::Exchange)
    };
    assert_eq!(
        refusal_code(t.shop.apply_after_sale(&short_reason, None)),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn after_sale_progress_by_number_by_order_or_all() {
    let t = open_shop();
    let by_number = t
        .shop
        .query_after_sale(&QueryAfterSaleParams {
            after_sale_no: Some("as88232001".into()),
            order_no: None,
        })
        .unwrap();
    assert_eq!(by_number.after_sales[0].status, "处理中");
    assert_eq!(by_number.after_sales[0].sku_name, "AirPods Pro 3");
    let by_order = t
        .shop
        .query_after_sale(&QueryAfterSaleParams {
            after_sale_no: None,
            order_no: Some("88231".into()),
        })
        .unwrap();
    assert_eq!(by_order.after_sales[0].after_sale_no, "AS88231001");
    assert!(by_order.after_sales[0].finished_at.is_some());
    let all = t
        .shop
        .query_after_sale(&QueryAfterSaleParams::default())
        .unwrap();
    assert_eq!(all.after_sales.len(), 2);
    let unknown = QueryAfterSaleParams {
        after_sale_no: Some("AS1".into()),
        order_no: None,
    };
    assert_eq!(
        refusal_code(t.shop.query_after_sale(&unknown)),
        "UNKNOWN_AFTER_SALE"
    );
}

// ---- logistics -------------------------------------------------------------

fn trace(tracking: Option<&str>, order: Option<&str>) -> QueryLogisticsParams {
    QueryLogisticsParams {
        tracking_no: tracking.map(Into::into),
        order_no: order.map(Into::into),
    }
}

#[test]
fn a_delivered_parcel_traces_newest_first() {
    let t = open_shop();
    let result = t
        .shop
        .query_logistics(&trace(Some("BIT9100000231"), None))
        .unwrap();
    assert_eq!(result.order_no, "88231");
    assert!(result.delivered);
    assert_eq!(result.events.len(), 4);
    assert_eq!(result.events[0].description, "已签收，签收人：本人");
    assert_eq!(result.events[3].description, "包裹已揽收");
}

#[test]
fn a_parcel_in_transit_can_be_found_by_its_order() {
    let t = open_shop();
    let result = t.shop.query_logistics(&trace(None, Some("88234"))).unwrap();
    assert_eq!(result.tracking_no, "BIT9100000234");
    assert!(!result.delivered);
    assert_eq!(result.latest.unwrap().description, "快件已发出");
}

#[test]
fn tracking_numbers_not_on_the_users_orders_are_refused() {
    let t = open_shop();
    let err = t
        .shop
        .query_logistics(&trace(Some("SF1234567890"), None))
        .unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_TRACKING_NO");
    assert!(err.to_string().contains("SF1234567890"));
    assert_eq!(
        refusal_code(t.shop.query_logistics(&trace(None, Some("88236")))),
        "NOT_SHIPPED"
    );
    assert_eq!(
        refusal_code(t.shop.query_logistics(&trace(None, None))),
        "INVALID_ARGUMENT"
    );
}

// ---- tickets ---------------------------------------------------------------

#[test]
fn tickets_are_numbered_and_checked() {
    let t = open_shop();
    let ticket = |order: Option<&str>, description: &str| SubmitTicketParams {
        topic: Some(TicketTopic::AfterSale),
        order_no: order.map(Into::into),
        description: description.into(),
    };
    let first = t
        .shop
        .submit_ticket(
            &ticket(Some("88238"), "手机超过换货期后出现质量问题，希望维修"),
            None,
        )
        .unwrap()
        .value;
    assert_eq!(
        (first.ticket_no.as_str(), first.status.as_str()),
        ("TK000001", "待处理")
    );
    assert_eq!(first.topic, "售后问题");
    let second = t
        .shop
        .submit_ticket(&ticket(None, "想咨询以旧换新"), None)
        .unwrap()
        .value;
    assert_eq!(second.ticket_no, "TK000002");
    assert_eq!(
        refusal_code(
            t.shop
                .submit_ticket(&ticket(Some("1"), "订单号不存在的问题"), None)
        ),
        "UNKNOWN_ORDER"
    );
    assert_eq!(
        refusal_code(t.shop.submit_ticket(&ticket(None, "短"), None)),
        "INVALID_ARGUMENT"
    );
}
