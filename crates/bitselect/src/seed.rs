//! First-start seeding from the data files the crate carries (data/*.json,
//! embedded at build time so the binary is self-contained).
//!
//! Relative times (`{"offset_minutes": N}`) are resolved against the moment
//! of seeding and stored as absolute unix milliseconds. Seeding runs once: a
//! `seeded_at` row in `shop_meta`, written in the same transaction, marks it.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::clock::{MINUTE_MS, Millis};
use crate::error::{Result, ShopError};
use crate::money::{Fen, de_fen};
use crate::store::{Conn, params};
use crate::users::{DEMO_USER, UserConn};

const PRODUCTS: &str = include_str!("../data/products.json");
const SKUS: &str = include_str!("../data/skus.json");
const COUPONS: &str = include_str!("../data/coupons.json");
const USER_STATE: &str = include_str!("../data/user_state.json");

#[derive(Debug, Deserialize)]
struct Offset {
    offset_minutes: i64,
}

impl Offset {
    fn at(&self, now: Millis) -> Millis {
        now + self.offset_minutes * MINUTE_MS
    }
}

fn at_opt(offset: &Option<Offset>, now: Millis) -> Option<Millis> {
    offset.as_ref().map(|o| o.at(now))
}

#[derive(Debug, Deserialize)]
struct ProductRow {
    spu_code: String,
    name: String,
    category: String,
    sub_category: String,
    brand: String,
    brand_owner: String,
    status: String,
    specs: serde_json::Map<String, serde_json::Value>,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct SkuRow {
    sku_code: String,
    spu_code: String,
    name: String,
    specs: serde_json::Map<String, serde_json::Value>,
    #[serde(deserialize_with = "de_fen")]
    price: Fen,
    stock: i64,
    status: String,
}

#[derive(Debug, Deserialize)]
struct CouponRow {
    code: String,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(deserialize_with = "de_fen")]
    threshold: Fen,
    /// Fen off for 满减; the multiplier in hundredths for 折扣.
    #[serde(deserialize_with = "de_fen")]
    discount_value: i64,
    category: Option<String>,
    valid_from: Offset,
    valid_to: Offset,
}

#[derive(Debug, Deserialize)]
struct UserState {
    cart: Vec<CartRow>,
    coupons: Vec<UserCouponRow>,
    orders: Vec<OrderRow>,
    logistics: Vec<ParcelRow>,
    after_sales: Vec<AfterSaleRow>,
}

#[derive(Debug, Deserialize)]
struct CartRow {
    sku_code: String,
    quantity: i64,
    #[serde(deserialize_with = "de_fen")]
    added_price: Fen,
    added_at: Offset,
}

#[derive(Debug, Deserialize)]
struct UserCouponRow {
    code: String,
    status: String,
    order_no: Option<String>,
    claimed_at: Offset,
    used_at: Option<Offset>,
}

#[derive(Debug, Deserialize)]
struct OrderRow {
    order_no: String,
    status: String,
    items: Vec<OrderItemRow>,
    #[serde(deserialize_with = "de_fen")]
    total_amount: Fen,
    #[serde(deserialize_with = "de_fen")]
    discount_amount: Fen,
    #[serde(deserialize_with = "de_fen")]
    pay_amount: Fen,
    coupon_code: Option<String>,
    receiver: ReceiverRow,
    tracking_no: Option<String>,
    created_at: Offset,
    paid_at: Option<Offset>,
    shipped_at: Option<Offset>,
    received_at: Option<Offset>,
    cancelled_at: Option<Offset>,
}

#[derive(Debug, Deserialize)]
struct OrderItemRow {
    sku_code: String,
    sku_name: String,
    #[serde(deserialize_with = "de_fen")]
    price: Fen,
    quantity: i64,
}

#[derive(Debug, Deserialize)]
struct ReceiverRow {
    name: String,
    phone: String,
    address: String,
}

#[derive(Debug, Deserialize)]
struct ParcelRow {
    tracking_no: String,
    order_no: String,
    events: Vec<ParcelEventRow>,
}

#[derive(Debug, Deserialize)]
struct ParcelEventRow {
    at: Offset,
    location: String,
    description: String,
}

#[derive(Debug, Deserialize)]
struct AfterSaleRow {
    after_sale_no: String,
    order_no: String,
    sku_code: String,
    #[serde(rename = "type")]
    kind: String,
    reason: String,
    status: String,
    created_at: Offset,
    finished_at: Option<Offset>,
}

fn parse<T: DeserializeOwned>(file: &'static str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| ShopError::Seed {
        file,
        message: e.to_string(),
    })
}

/// Seeds the database unless it already was, in the caller's write
/// transaction. Returns whether it seeded now.
pub fn seed_once(tx: &dyn Conn, now: Millis) -> Result<bool> {
    let seeded: Option<String> = tx.query_opt(
        "SELECT value FROM shop_meta WHERE key = 'seeded_at'",
        params![],
        |row| row.get(0),
    )?;
    if seeded.is_some() {
        return Ok(false);
    }
    let products: Vec<ProductRow> = parse("products.json", PRODUCTS)?;
    let skus: Vec<SkuRow> = parse("skus.json", SKUS)?;
    let coupons: Vec<CouponRow> = parse("coupons.json", COUPONS)?;
    let state: UserState = parse("user_state.json", USER_STATE)?;

    insert_catalogue(tx, &products, &skus)?;
    insert_coupons(tx, &coupons, &state.coupons, now)?;
    insert_cart(tx, &state.cart, now)?;
    insert_orders(tx, &state.orders, now)?;
    insert_logistics(tx, &state.logistics, now)?;
    insert_after_sales(tx, &state.after_sales, now)?;
    tx.execute(
        "INSERT INTO shop_meta (key, value) VALUES ('seeded_at', ?1)",
        params![now.to_string()],
    )?;
    tracing::info!(
        products = products.len(),
        skus = skus.len(),
        orders = state.orders.len(),
        "seeded the shop database"
    );
    Ok(true)
}

fn insert_catalogue(tx: &dyn Conn, products: &[ProductRow], skus: &[SkuRow]) -> Result<()> {
    let insert = "INSERT INTO product (spu_code, name, category, sub_category, brand, brand_owner,
                              status, specs, tags)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    for p in products {
        let specs = serde_json::Value::Object(p.specs.clone()).to_string();
        let tags = serde_json::to_string(&p.tags).map_err(|e| ShopError::Seed {
            file: "products.json",
            message: e.to_string(),
        })?;
        tx.execute(
            insert,
            params![
                p.spu_code,
                p.name,
                p.category,
                p.sub_category,
                p.brand,
                p.brand_owner,
                p.status,
                specs,
                tags
            ],
        )?;
    }
    let insert = "INSERT INTO sku (sku_code, spu_code, name, specs, price_fen, stock, status)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    for s in skus {
        let specs = serde_json::Value::Object(s.specs.clone()).to_string();
        tx.execute(
            insert,
            params![
                s.sku_code, s.spu_code, s.name, specs, s.price, s.stock, s.status
            ],
        )?;
    }
    Ok(())
}

fn insert_coupons(
    tx: &dyn Conn,
    coupons: &[CouponRow],
    held: &[UserCouponRow],
    now: Millis,
) -> Result<()> {
    let insert = "INSERT INTO coupon (code, name, kind, threshold_fen, amount_off_fen, pay_percent,
                             category, valid_from, valid_to)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    for c in coupons {
        let (amount_off, pay_percent) = match c.kind.as_str() {
            "折扣" => (None, Some(c.discount_value)),
            _ => (Some(c.discount_value), None),
        };
        tx.execute(
            insert,
            params![
                c.code,
                c.name,
                c.kind,
                c.threshold,
                amount_off,
                pay_percent,
                c.category,
                c.valid_from.at(now),
                c.valid_to.at(now)
            ],
        )?;
    }
    let demo = UserConn::new(tx, DEMO_USER);
    for h in held {
        hand_out_coupon(
            &demo,
            &h.code,
            &h.status,
            h.order_no.as_deref(),
            h.claimed_at.at(now),
            at_opt(&h.used_at, now),
        )?;
    }
    Ok(())
}

/// Gives the user a coupon of the shop's.
pub(crate) fn hand_out_coupon(
    conn: &UserConn<'_>,
    code: &str,
    status: &str,
    order_no: Option<&str>,
    claimed_at: Millis,
    used_at: Option<Millis>,
) -> Result<()> {
    conn.execute(
        "INSERT INTO user_coupon (user_id, code, status, order_no, claimed_at, used_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![conn.user(), code, status, order_no, claimed_at, used_at],
    )?;
    Ok(())
}

fn insert_cart(tx: &dyn Conn, cart: &[CartRow], now: Millis) -> Result<()> {
    let demo = UserConn::new(tx, DEMO_USER);
    for line in cart {
        put_in_cart(
            &demo,
            &line.sku_code,
            line.quantity,
            line.added_price,
            line.added_at.at(now),
        )?;
    }
    Ok(())
}

/// A new line in the user's cart, as seeded.
pub(crate) fn put_in_cart(
    conn: &UserConn<'_>,
    sku_code: &str,
    quantity: i64,
    added_price: Fen,
    added_at: Millis,
) -> Result<()> {
    conn.execute(
        "INSERT INTO cart_item (user_id, sku_code, quantity, added_price_fen, added_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![conn.user(), sku_code, quantity, added_price, added_at],
    )?;
    Ok(())
}

fn insert_orders(tx: &dyn Conn, orders: &[OrderRow], now: Millis) -> Result<()> {
    let insert_order =
        "INSERT INTO orders (order_no, status, total_fen, discount_fen, pay_fen, coupon_code,
                             receiver_name, receiver_phone, receiver_address, tracking_no,
                             created_at, paid_at, shipped_at, received_at, cancelled_at,
                             user_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
    let insert_line =
        "INSERT INTO order_item (order_no, line_no, sku_code, sku_name, price_fen, quantity)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    for o in orders {
        tx.execute(
            insert_order,
            params![
                o.order_no,
                o.status,
                o.total_amount,
                o.discount_amount,
                o.pay_amount,
                o.coupon_code,
                o.receiver.name,
                o.receiver.phone,
                o.receiver.address,
                o.tracking_no,
                o.created_at.at(now),
                at_opt(&o.paid_at, now),
                at_opt(&o.shipped_at, now),
                at_opt(&o.received_at, now),
                at_opt(&o.cancelled_at, now),
                DEMO_USER
            ],
        )?;
        for (index, item) in o.items.iter().enumerate() {
            tx.execute(
                insert_line,
                params![
                    o.order_no,
                    index as i64 + 1,
                    item.sku_code,
                    item.sku_name,
                    item.price,
                    item.quantity
                ],
            )?;
        }
    }
    Ok(())
}

fn insert_logistics(tx: &dyn Conn, parcels: &[ParcelRow], now: Millis) -> Result<()> {
    let insert_parcel = "INSERT INTO parcel (tracking_no, order_no, user_id) VALUES (?1, ?2, ?3)";
    let insert_event = "INSERT INTO parcel_event (tracking_no, seq, at, location, description)
         VALUES (?1, ?2, ?3, ?4, ?5)";
    for p in parcels {
        tx.execute(insert_parcel, params![p.tracking_no, p.order_no, DEMO_USER])?;
        for (index, e) in p.events.iter().enumerate() {
            tx.execute(
                insert_event,
                params![
                    p.tracking_no,
                    index as i64 + 1,
                    e.at.at(now),
                    e.location,
                    e.description
                ],
            )?;
        }
    }
    Ok(())
}

fn insert_after_sales(tx: &dyn Conn, rows: &[AfterSaleRow], now: Millis) -> Result<()> {
    let insert = "INSERT INTO after_sale (after_sale_no, order_no, sku_code, kind, reason, status,
                                 created_at, finished_at, user_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    for a in rows {
        tx.execute(
            insert,
            params![
                a.after_sale_no,
                a.order_no,
                a.sku_code,
                a.kind,
                a.reason,
                a.status,
                a.created_at.at(now),
                at_opt(&a.finished_at, now),
                DEMO_USER
            ],
        )?;
    }
    Ok(())
}
