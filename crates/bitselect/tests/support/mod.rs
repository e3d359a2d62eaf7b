//! Shared helpers: a seeded shop in a temporary directory on a clock that
//! stands still, small constructors for tool arguments, and readers of what
//! the shop refused or holds.
#![allow(dead_code)]

pub mod asking;
pub mod client;
pub mod isolation;
pub mod mandate;
pub mod oauth;
pub mod ordering;
pub mod platform;
pub mod postgres;
pub mod purchase;
pub mod shop_process;
pub mod stack;

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
    /// The PostgreSQL database the shop is in, dropped with it; `None`:
    /// SQLite in `dir`.
    pub database: Option<postgres::Database>,
}

/// The stores the domain tests run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestStore {
    Sqlite,
    Postgres,
}

pub fn open_shop() -> TestShop {
    open_shop_on(TestStore::Sqlite)
}

/// A shop seeded at [`T0`] on a clock that stands still, in a store of its
/// own: a SQLite file in a temporary directory or a PostgreSQL database of
/// the test binary's cluster.
pub fn open_shop_on(store: TestStore) -> TestShop {
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = Arc::new(FixedClock::new(T0));
    let database = match store {
        TestStore::Sqlite => None,
        TestStore::Postgres => Some(postgres::seeded_database()),
    };
    let shop = open_on(dir.path(), &clock, database.as_deref());
    TestShop {
        shop,
        clock,
        dir,
        database,
    }
}

fn open_on(dir: &std::path::Path, clock: &Arc<FixedClock>, database: Option<&str>) -> Shop {
    match database {
        None => Shop::open_with_clock(dir, clock.clone()).expect("open shop"),
        Some(name) => Shop::open_postgres_with_clock(&postgres::cluster().url(name), clock.clone())
            .expect("open shop on PostgreSQL"),
    }
}

impl TestShop {
    /// The same store opened again, on the same clock.
    pub fn reopen(&self) -> Shop {
        open_on(self.dir.path(), &self.clock, self.database.as_deref())
    }

    /// Sets one column of a SKU behind the shop's back, as a merchant's
    /// other systems would.
    pub fn set_sku(&self, sku: &str, column: &str, value: i64) {
        self.run_sql(&format!(
            "UPDATE sku SET {column} = {value} WHERE sku_code = '{sku}'"
        ));
    }

    /// Runs a statement on the store behind the shop's back.
    pub fn run_sql(&self, sql: &str) {
        match &self.database {
            None => {
                self.shop.connection().unwrap().execute(sql, []).unwrap();
            }
            Some(name) => {
                postgres::cluster().psql(name, sql);
            }
        }
    }
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

/// An order of `items` to 李雷, a receiver the seed does not have.
pub fn to_li_lei(items: &[(&str, u32)]) -> CreateOrderParams {
    CreateOrderParams {
        receiver_name: Some("李雷".into()),
        receiver_phone: Some("13700137000".into()),
        receiver_address: Some("北京市海淀区中关村大街 1 号".into()),
        ..order(items)
    }
}

/// The seed's shopper with a second saved address, from an order to
/// 李雷 a minute after the seed, and two iPhones left in the cart.
pub fn shop_with_two_addresses() -> TestShop {
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 3), None).unwrap();
    t.clock.advance(MINUTE);
    t.shop
        .create_order(&to_li_lei(&[(IPHONE_17, 1)]), None)
        .unwrap();
    t
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
