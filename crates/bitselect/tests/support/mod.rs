//! Shared helpers: a seeded shop in a temporary directory on a clock that
//! stands still, small constructors for tool arguments, and readers of what
//! the shop refused or holds.
#![allow(dead_code)]

pub mod client;
pub mod isolation;
pub mod oauth;

use std::sync::Arc;

use bitselect::params::{
    CartAction, CreateOrderParams, OrderItemInput, QueryCouponsParams, QueryOrderParams,
    SearchProductParams, UpdateCartItemParams,
};
use bitselect::{FixedClock, Shop, ShopError};
use tempfile::TempDir;

/// 2026-11-29T12:00:00Z: seeding happens "now" at this instant.
pub const T0: i64 = 1_795_953_600_000;
pub const MINUTE: i64 = 60_000;
pub const DAY: i64 = 24 * 60 * MINUTE;

pub const IPHONE_17: &str = "MG6W4CH/A";
pub const IPHONE_16_DELISTED: &str = "MYEV3CH/A";
pub const AIRPODS_NO_STOCK: &str = "MFHP4CH/A";
pub const VISION_PRO_3_LEFT: &str = "MFHE4CH/A";
pub const IPAD_AIR: &str = "MH304CH/A";

/// The largest amount a tool argument may name: 1亿元, in fen.
pub const LARGEST_AMOUNT_FEN: i64 = 10_000_000_000;

pub struct TestShop {
    pub shop: Shop,
    pub clock: Arc<FixedClock>,
    /// Keeps the directory alive for the test's duration.
    pub dir: TempDir,
}

pub fn open_shop() -> TestShop {
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = Arc::new(FixedClock::new(T0));
    let shop = Shop::open_with_clock(dir.path(), clock.clone()).expect("open shop");
    TestShop { shop, clock, dir }
}

pub fn add(sku: &str, quantity: u32) -> UpdateCartItemParams {
    UpdateCartItemParams {
        sku_code: sku.into(),
        action: CartAction::Add,
        quantity: Some(quantity),
    }
}

pub fn order(items: &[(&str, u32)]) -> CreateOrderParams {
    CreateOrderParams {
        items: items
            .iter()
            .map(|(sku, quantity)| OrderItemInput {
                sku_code: (*sku).into(),
                quantity: *quantity,
            })
            .collect(),
        coupon_code: None,
        receiver_name: None,
        receiver_phone: None,
        receiver_address: None,
    }
}

pub fn order_with_coupon(items: &[(&str, u32)], coupon: &str) -> CreateOrderParams {
    CreateOrderParams {
        coupon_code: Some(coupon.into()),
        ..order(items)
    }
}

pub fn stock(shop: &Shop, sku: &str) -> i64 {
    shop.sku(sku).expect("read sku").expect("sku exists").stock
}

pub fn cart_quantity(shop: &Shop, sku: &str) -> i64 {
    shop.query_cart()
        .expect("read cart")
        .lines
        .iter()
        .find(|l| l.sku_code == sku)
        .map_or(0, |l| l.quantity)
}

pub fn search_sku(sku: &str) -> SearchProductParams {
    SearchProductParams {
        sku_codes: vec![sku.into()],
        ..Default::default()
    }
}

pub fn one_order(no: &str) -> QueryOrderParams {
    QueryOrderParams {
        order_no: Some(no.into()),
        ..Default::default()
    }
}

/// The code of a refusal; panics on success.
pub fn refusal_code<T: std::fmt::Debug>(result: Result<T, ShopError>) -> &'static str {
    match result {
        Err(error) => error.code(),
        Ok(value) => panic!("expected a refusal, got {value:?}"),
    }
}

/// A held coupon's status and the order it was used on.
pub fn coupon_status(shop: &Shop, code: &str) -> (String, Option<String>) {
    let report = shop.query_coupons(&QueryCouponsParams::default()).unwrap();
    let c = report.coupons.into_iter().find(|c| c.code == code).unwrap();
    (c.status, c.used_on_order)
}
