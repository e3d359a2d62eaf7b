//! Coupons: applied to an order, refused with a reason, and tried against
//! given amounts or the cart.

use std::collections::BTreeMap;

use crate::support::*;
use bitselect::money::YuanInput;
use bitselect::params::QueryCouponsParams;
use pretty_assertions::assert_eq;

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
