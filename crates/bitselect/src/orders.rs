//! Orders: placing one from the cart, paying, cancelling, changing the
//! address before shipping, and `query_order`.

use std::collections::HashSet;
use std::fmt;

use crate::store::{Row, params};
use serde::{Deserialize, Serialize};

use crate::after_sale::{self, AfterSaleWindows};
use crate::cart;
use crate::catalog::{self, ON_SALE};
use crate::clock::{Millis, format_rfc3339};
use crate::coupons::{self, Basket};
use crate::error::{Blockers, Refusal, Result, ShopError};
use crate::money::{Fen, Yuan};
use crate::params::{
    CancelOrderParams, ChangeAddressParams, CreateOrderParams, DEFAULT_ORDER_LIMIT,
    MAX_ORDER_LIMIT, MAX_ORDER_LINES, MAX_QUANTITY, OrderStatus, PayOrderParams, QueryOrderParams,
    given,
};
use crate::users::UserConn;

/// Who receives a parcel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receiver {
    pub name: String,
    pub phone: String,
    pub address: String,
}

impl fmt::Display for Receiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.name, self.phone, self.address)
    }
}

/// One order line as bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderLine {
    pub line_no: i64,
    pub sku_code: String,
    pub sku_name: String,
    pub price_fen: Fen,
    pub price: Yuan,
    pub quantity: i64,
    pub subtotal_fen: Fen,
    pub subtotal: Yuan,
}

/// One order in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderView {
    pub order_no: String,
    pub status: String,
    pub created_at: String,
    pub paid_at: Option<String>,
    pub shipped_at: Option<String>,
    pub received_at: Option<String>,
    pub cancelled_at: Option<String>,
    pub lines: Vec<OrderLine>,
    pub item_count: i64,
    pub total_amount_fen: Fen,
    pub total_amount: Yuan,
    pub discount_amount_fen: Fen,
    pub discount_amount: Yuan,
    pub pay_amount_fen: Fen,
    pub pay_amount: Yuan,
    pub coupon_code: Option<String>,
    pub tracking_no: Option<String>,
    pub receiver: Receiver,
    /// The return and exchange windows, once the order is delivered.
    pub after_sale_windows: Option<AfterSaleWindows>,
    /// The tools that can act on this order in its current status.
    pub next_actions: Vec<String>,
}

/// The stored order, before it is shown.
struct OrderRow {
    order_no: String,
    status: String,
    total: Fen,
    discount: Fen,
    pay: Fen,
    coupon_code: Option<String>,
    receiver: Receiver,
    tracking_no: Option<String>,
    created_at: Millis,
    paid_at: Option<Millis>,
    shipped_at: Option<Millis>,
    received_at: Option<Millis>,
    cancelled_at: Option<Millis>,
}

const SELECT_ORDER: &str = "SELECT order_no, status, total_fen, discount_fen, pay_fen,
            coupon_code, receiver_name, receiver_phone, receiver_address, tracking_no,
            created_at, paid_at, shipped_at, received_at, cancelled_at
     FROM orders WHERE user_id = ?1";

fn order_from_row(row: &Row<'_>) -> Result<OrderRow> {
    Ok(OrderRow {
        order_no: row.get(0)?,
        status: row.get(1)?,
        total: row.get(2)?,
        discount: row.get(3)?,
        pay: row.get(4)?,
        coupon_code: row.get(5)?,
        receiver: Receiver {
            name: row.get(6)?,
            phone: row.get(7)?,
            address: row.get(8)?,
        },
        tracking_no: row.get(9)?,
        created_at: row.get(10)?,
        paid_at: row.get(11)?,
        shipped_at: row.get(12)?,
        received_at: row.get(13)?,
        cancelled_at: row.get(14)?,
    })
}

fn find(conn: &UserConn<'_>, order_no: &str) -> Result<OrderRow> {
    conn.query_opt(
        &format!("{SELECT_ORDER} AND order_no = ?2"),
        params![conn.user(), order_no],
        order_from_row,
    )?
    .ok_or_else(|| {
        Refusal::UnknownOrder {
            order_no: order_no.to_owned(),
        }
        .into()
    })
}

/// Passes an optional order number through, refusing one that does not exist.
pub(crate) fn existing<'a>(
    conn: &UserConn<'_>,
    order_no: Option<&'a str>,
) -> Result<Option<&'a str>> {
    if let Some(order_no) = order_no {
        find(conn, order_no)?;
    }
    Ok(order_no)
}

/// What rules outside this module need of an order.
pub(crate) struct OrderFacts {
    pub status: String,
    pub received_at: Option<Millis>,
    pub total: Fen,
    pub discount: Fen,
}

pub(crate) fn facts(conn: &UserConn<'_>, order_no: &str) -> Result<OrderFacts> {
    let row = find(conn, order_no)?;
    Ok(OrderFacts {
        status: row.status,
        received_at: row.received_at,
        total: row.total,
        discount: row.discount,
    })
}

fn lines(conn: &UserConn<'_>, order_no: &str) -> Result<Vec<OrderLine>> {
    conn.query_all(
        "SELECT line_no, sku_code, sku_name, price_fen, quantity
         FROM order_item WHERE order_no = ?1 ORDER BY line_no",
        params![order_no],
        |row| {
            let price: Fen = row.get(3)?;
            let quantity: i64 = row.get(4)?;
            Ok(OrderLine {
                line_no: row.get(0)?,
                sku_code: row.get(1)?,
                sku_name: row.get(2)?,
                price_fen: price,
                price: Yuan(price),
                quantity,
                subtotal_fen: price * quantity,
                subtotal: Yuan(price * quantity),
            })
        },
    )
}

/// The line of `order_no` for `sku_code`, if the order has one.
pub(crate) fn line_for(
    conn: &UserConn<'_>,
    order_no: &str,
    sku_code: &str,
) -> Result<Option<OrderLine>> {
    Ok(lines(conn, order_no)?
        .into_iter()
        .find(|l| l.sku_code == sku_code))
}

fn next_actions(status: &str, windows: Option<&AfterSaleWindows>) -> Vec<String> {
    let actions: &[&str] = match status {
        "待支付" => &["pay_order", "cancel_order", "change_address"],
        "已支付待发货" => &["cancel_order", "change_address"],
        "已发货" => &["query_logistics", "submit_ticket"],
        "已签收" if windows.is_some_and(|w| w.exchange_open) => {
            &["apply_after_sale", "query_logistics", "submit_ticket"]
        }
        "已签收" => &["query_logistics", "submit_ticket"],
        _ => &[],
    };
    actions.iter().map(|a| (*a).to_owned()).collect()
}

fn view(conn: &UserConn<'_>, now: Millis, row: OrderRow) -> Result<OrderView> {
    let lines = lines(conn, &row.order_no)?;
    let windows = match (row.status.as_str(), row.received_at) {
        ("已签收", Some(received)) => Some(after_sale::windows(received, now)),
        _ => None,
    };
    Ok(OrderView {
        next_actions: next_actions(&row.status, windows.as_ref()),
        item_count: lines.iter().map(|l| l.quantity).sum(),
        order_no: row.order_no,
        status: row.status,
        created_at: format_rfc3339(row.created_at),
        paid_at: row.paid_at.map(format_rfc3339),
        shipped_at: row.shipped_at.map(format_rfc3339),
        received_at: row.received_at.map(format_rfc3339),
        cancelled_at: row.cancelled_at.map(format_rfc3339),
        lines,
        total_amount_fen: row.total,
        total_amount: Yuan(row.total),
        discount_amount_fen: row.discount,
        discount_amount: Yuan(row.discount),
        pay_amount_fen: row.pay,
        pay_amount: Yuan(row.pay),
        coupon_code: row.coupon_code,
        tracking_no: row.tracking_no,
        receiver: row.receiver,
        after_sale_windows: windows,
    })
}

/// Loads and shows one order.
pub fn get(conn: &UserConn<'_>, now: Millis, order_no: &str) -> Result<OrderView> {
    let row = find(conn, order_no)?;
    view(conn, now, row)
}

/// What `query_order` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderList {
    pub orders: Vec<OrderView>,
    /// How many orders match, before the limit.
    pub matched: i64,
}

/// One order by number, or the most recent ones.
pub fn query(conn: &UserConn<'_>, now: Millis, p: &QueryOrderParams) -> Result<OrderList> {
    if let Some(order_no) = given(&p.order_no) {
        return Ok(OrderList {
            orders: vec![get(conn, now, order_no)?],
            matched: 1,
        });
    }
    let limit = p.limit.unwrap_or(DEFAULT_ORDER_LIMIT);
    if !(1..=MAX_ORDER_LIMIT).contains(&limit) {
        return Err(ShopError::invalid(
            "limit",
            format!("须在 1 到 {MAX_ORDER_LIMIT} 之间，收到 {limit}"),
        ));
    }
    let status = p.status.map(OrderStatus::as_str);
    let matched: i64 = conn.query_row(
        "SELECT COUNT(*) FROM orders WHERE user_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)",
        params![conn.user(), status],
        |row| row.get(0),
    )?;
    let rows = conn.query_all(
        &format!(
            "{SELECT_ORDER} AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)
             ORDER BY created_at DESC, order_no DESC LIMIT ?3"
        ),
        params![conn.user(), status, limit],
        order_from_row,
    )?;
    let orders = rows
        .into_iter()
        .map(|row| view(conn, now, row))
        .collect::<Result<_>>()?;
    Ok(OrderList { orders, matched })
}

fn check_text(field: &str, value: &str, min: usize, max: usize) -> Result<String> {
    let value = value.trim();
    let chars = value.chars().count();
    if chars < min || chars > max {
        return Err(ShopError::invalid(
            field,
            format!("长度须在 {min} 到 {max} 个字符之间，收到「{value}」"),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(ShopError::invalid(field, "不能包含换行等控制字符"));
    }
    Ok(value.to_owned())
}

fn check_phone(value: &str) -> Result<String> {
    let value = value.trim();
    let digits = value.chars().filter(char::is_ascii_digit).count();
    let allowed = value
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | ' '));
    if !allowed || !(7..=15).contains(&digits) {
        return Err(ShopError::invalid(
            "receiverPhone",
            format!("「{value}」不是有效的电话号码，请提供 7 到 15 位数字的手机号或座机号"),
        ));
    }
    Ok(value.to_owned())
}

/// Fills the receiver from the given fields, the rest from `base`; `None`
/// when fields are missing and there is no `base` to take them from.
pub(crate) fn receiver_from(
    base: Option<Receiver>,
    name: Option<&str>,
    phone: Option<&str>,
    address: Option<&str>,
) -> Result<Option<Receiver>> {
    let name = name
        .map(|n| check_text("receiverName", n, 1, 20))
        .transpose()?;
    let phone = phone.map(check_phone).transpose()?;
    let address = address
        .map(|a| check_text("receiverAddress", a, 5, 120))
        .transpose()?;
    match (base, name, phone, address) {
        (_, Some(name), Some(phone), Some(address)) => Ok(Some(Receiver {
            name,
            phone,
            address,
        })),
        (Some(base), name, phone, address) => Ok(Some(Receiver {
            name: name.unwrap_or(base.name),
            phone: phone.unwrap_or(base.phone),
            address: address.unwrap_or(base.address),
        })),
        (None, ..) => Ok(None),
    }
}

fn latest_receiver(conn: &UserConn<'_>) -> Result<Option<Receiver>> {
    conn.query_opt(
        "SELECT receiver_name, receiver_phone, receiver_address FROM orders
         WHERE user_id = ?1
         ORDER BY created_at DESC, order_no DESC LIMIT 1",
        params![conn.user()],
        |row| {
            Ok(Receiver {
                name: row.get(0)?,
                phone: row.get(1)?,
                address: row.get(2)?,
            })
        },
    )
}

/// Continues the shop's numbering: the seed ends at 88238, so 88239 is next.
fn next_order_no(conn: &UserConn<'_>) -> Result<String> {
    let last: Option<i64> = conn.query_row(
        "SELECT MAX(CAST(order_no AS INTEGER)) FROM orders",
        params![],
        |row| row.get(0),
    )?;
    Ok((last.unwrap_or(10_000) + 1).to_string())
}

/// One line of a planned order: a SKU of the catalogue and what the cart
/// holds of it.
#[derive(Debug, Clone)]
pub struct PlannedLine {
    pub sku: catalog::SkuHit,
    pub quantity: i64,
    /// Units in the cart and the price of the line's first add; `None` when
    /// the cart does not hold the SKU.
    pub in_cart: Option<(i64, Fen)>,
}

/// The coupon a planned order would use.
#[derive(Debug, Clone)]
pub struct PlannedCoupon {
    pub code: String,
    pub name: String,
    /// What it takes off; `None` when it does not apply (a blocker says why).
    pub discount: Option<Fen>,
}

/// What `create_order` would do now, worked out without writing.
#[derive(Debug, Clone)]
pub struct OrderPlan {
    pub lines: Vec<PlannedLine>,
    /// The goods at today's prices, in all and per category.
    pub basket: Basket,
    /// `None` when no coupon was asked for, or the shopper holds no such one.
    pub coupon: Option<PlannedCoupon>,
    /// Where it would ship; `None` when it has nowhere to ship to.
    pub receiver: Option<Receiver>,
    pub blockers: Blockers,
}

impl OrderPlan {
    pub fn discount(&self) -> Fen {
        self.coupon.as_ref().and_then(|c| c.discount).unwrap_or(0)
    }

    /// What the shopper would have to pay.
    pub fn pay(&self) -> Fen {
        self.basket.total - self.discount()
    }
}

/// The items' arguments, checked before anything is looked up.
fn check_items(p: &CreateOrderParams) -> Result<Vec<(String, i64)>> {
    if p.items.is_empty() {
        return Err(ShopError::invalid(
            "items",
            "至少要有一件商品；先用 query_cart 查看购物车",
        ));
    }
    check_lines(
        "items",
        p.items
            .iter()
            .map(|item| (item.sku_code.as_str(), i64::from(item.quantity))),
    )
}

/// Lines of an order as asked for (SKU code, quantity): at most
/// [`MAX_ORDER_LINES`], each quantity in range, no SKU twice; codes
/// normalized. `field` names the argument in a refusal.
pub fn check_lines<'a>(
    field: &str,
    lines: impl ExactSizeIterator<Item = (&'a str, i64)>,
) -> Result<Vec<(String, i64)>> {
    if lines.len() > MAX_ORDER_LINES {
        return Err(ShopError::invalid(
            field,
            format!("一个订单最多 {MAX_ORDER_LINES} 行商品"),
        ));
    }
    let mut seen = HashSet::new();
    let mut checked = Vec::with_capacity(lines.len());
    for (sku_code, quantity) in lines {
        let code = catalog::normalize_code(sku_code);
        if !(1..=i64::from(MAX_QUANTITY)).contains(&quantity) {
            return Err(ShopError::invalid(
                format!("{field}.quantity"),
                format!("{code} 的数量须在 1 到 {MAX_QUANTITY} 之间，收到 {quantity}"),
            ));
        }
        if !seen.insert(code.clone()) {
            return Err(Refusal::DuplicateItem { sku: code }.into());
        }
        checked.push((code, quantity));
    }
    Ok(checked)
}

/// Where an order's lines come from: the shopper's cart (the shop's own
/// tools) or a checkout session's line items (the commerce standard's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSource {
    Cart,
    Checkout,
}

/// Each line against catalogue, stock and, for a cart order, the cart. An
/// unknown SKU is an error; the other refusals are blockers, a line's in
/// the order the write checks.
pub fn plan_lines(
    conn: &UserConn<'_>,
    items: Vec<(String, i64)>,
    source: LineSource,
    blockers: &mut Blockers,
) -> Result<Vec<PlannedLine>> {
    let mut lines = Vec::with_capacity(items.len());
    for (code, quantity) in items {
        let sku = catalog::sku(conn, &code)?;
        // Availability first: telling a model to add a delisted SKU to the
        // cart would only lead to a second refusal.
        if let Some(refusal) = sku.unavailable() {
            blockers.push(refusal);
        }
        let in_cart = match source {
            LineSource::Cart => cart::line_of(conn, &code)?,
            LineSource::Checkout => None,
        };
        if source == LineSource::Cart {
            match in_cart {
                None => blockers.push(Refusal::NotInCart {
                    sku: code.clone(),
                    name: sku.name.clone(),
                }),
                Some((held, _)) if held < quantity => blockers.push(Refusal::CartShort {
                    sku: code.clone(),
                    name: sku.name.clone(),
                    in_cart: held,
                    requested: quantity,
                }),
                Some(_) => {}
            }
        }
        if sku.unavailable().is_none() && sku.stock < quantity {
            blockers.push(Refusal::InsufficientStock {
                sku: code,
                name: sku.name.clone(),
                requested: quantity,
                stock: sku.stock,
            });
        }
        lines.push(PlannedLine {
            sku,
            quantity,
            in_cart,
        });
    }
    Ok(lines)
}

/// The goods of `lines` at today's prices, in all and per category.
pub fn basket_of(lines: &[PlannedLine]) -> Basket {
    let mut basket = Basket::default();
    for line in lines {
        let amount = line.sku.price_fen * line.quantity;
        basket.total += amount;
        *basket
            .by_category
            .entry(line.sku.category.clone())
            .or_insert(0) += amount;
    }
    basket
}

/// The coupon `code` against `basket` now: `None` when the shopper holds no
/// such coupon (a blocker says so), else what it takes off, if it applies.
pub fn plan_coupon(
    conn: &UserConn<'_>,
    now: Millis,
    code: &str,
    basket: &Basket,
    blockers: &mut Blockers,
) -> Result<Option<PlannedCoupon>> {
    match coupons::held(conn, &catalog::normalize_code(code)) {
        Ok(held) => {
            let outcome = coupons::evaluate(&held, now, basket);
            let discount = outcome.as_ref().ok().copied();
            if let Err(refusal) = outcome {
                blockers.push(refusal);
            }
            Ok(Some(PlannedCoupon {
                code: held.code,
                name: held.name,
                discount,
            }))
        }
        Err(ShopError::Refused(refusal)) => {
            blockers.push(refusal);
            Ok(None)
        }
        Err(other) => Err(other),
    }
}

/// Plans an order: every check and amount of `create_order`, no writes.
pub fn plan_create(conn: &UserConn<'_>, now: Millis, p: &CreateOrderParams) -> Result<OrderPlan> {
    let mut blockers = Blockers::default();
    let lines = plan_lines(conn, check_items(p)?, LineSource::Cart, &mut blockers)?;
    let basket = basket_of(&lines);
    let coupon = match given(&p.coupon_code) {
        Some(code) => plan_coupon(conn, now, code, &basket, &mut blockers)?,
        None => None,
    };
    let receiver = receiver_from(
        latest_receiver(conn)?,
        p.receiver_name.as_deref(),
        p.receiver_phone.as_deref(),
        p.receiver_address.as_deref(),
    )?;
    if receiver.is_none() {
        blockers.push(Refusal::NoDefaultReceiver);
    }
    Ok(OrderPlan {
        lines,
        basket,
        coupon,
        receiver,
        blockers,
    })
}

/// Writes a planned order: reserves stock, deducts the cart (for an order
/// from the cart), uses the coupon.
fn commit_create(
    conn: &UserConn<'_>,
    now: Millis,
    plan: OrderPlan,
    source: LineSource,
) -> Result<OrderView> {
    let receiver = plan.receiver.clone().ok_or(Refusal::NoDefaultReceiver)?;
    let order_no = next_order_no(conn)?;
    let coupon_code = plan
        .coupon
        .as_ref()
        .filter(|c| c.discount.is_some())
        .map(|c| c.code.clone());
    conn.execute(
        "INSERT INTO orders (order_no, status, total_fen, discount_fen, pay_fen, coupon_code,
                             receiver_name, receiver_phone, receiver_address, created_at,
                             user_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            order_no,
            OrderStatus::Pending.as_str(),
            plan.basket.total,
            plan.discount(),
            plan.pay(),
            coupon_code,
            receiver.name,
            receiver.phone,
            receiver.address,
            now,
            conn.user()
        ],
    )?;
    for (index, line) in plan.lines.iter().enumerate() {
        // Conditional on stock: even if the plan were stale, this can never
        // take stock below zero.
        let reserved = conn.execute(
            "UPDATE sku SET stock = stock - ?2
             WHERE sku_code = ?1 AND stock >= ?2 AND status = ?3",
            params![line.sku.sku_code, line.quantity, ON_SALE],
        )?;
        if reserved != 1 {
            return Err(Refusal::InsufficientStock {
                sku: line.sku.sku_code.clone(),
                name: line.sku.name.clone(),
                requested: line.quantity,
                stock: catalog::sku(conn, &line.sku.sku_code)?.stock,
            }
            .into());
        }
        if source == LineSource::Cart {
            cart::deduct(conn, &line.sku.sku_code, line.quantity)?;
        }
        conn.execute(
            "INSERT INTO order_item (order_no, line_no, sku_code, sku_name, price_fen, quantity)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                order_no,
                index as i64 + 1,
                line.sku.sku_code,
                line.sku.name,
                line.sku.price_fen,
                line.quantity
            ],
        )?;
    }
    if let Some(code) = &coupon_code {
        coupons::mark_used(conn, code, &order_no, now)?;
    }
    get(conn, now, &order_no)
}

/// Places an order from cart lines: reserves stock, deducts the cart, uses
/// the coupon. The caller runs it inside one immediate transaction.
pub fn create(conn: &UserConn<'_>, now: Millis, p: &CreateOrderParams) -> Result<OrderView> {
    let plan = plan_create(conn, now, p)?;
    plan.blockers.check()?;
    commit_create(conn, now, plan, LineSource::Cart)
}

/// Places and pays the order a completed checkout stands for: stock
/// reserved and the coupon used as for any order, the cart untouched,
/// paid at once (the shopper's mandate is the payment's authority). The
/// caller runs it inside the completion's transaction.
pub fn place_paid_checkout_order(
    conn: &UserConn<'_>,
    now: Millis,
    plan: OrderPlan,
) -> Result<OrderView> {
    plan.blockers.check()?;
    let placed = commit_create(conn, now, plan, LineSource::Checkout)?;
    let paid = pay(
        conn,
        now,
        &PayOrderParams {
            order_no: placed.order_no,
        },
    )?;
    Ok(paid.order)
}

/// The refusal when the order's status is not one of `allowed`.
fn status_blocker(
    order: &OrderView,
    allowed: &[OrderStatus],
    action: &'static str,
    allowed_text: &'static str,
) -> Blockers {
    let mut blockers = Blockers::default();
    if !allowed.iter().any(|s| s.as_str() == order.status) {
        blockers.push(Refusal::OrderStatus {
            order_no: order.order_no.clone(),
            status: order.status.clone(),
            action,
            allowed: allowed_text,
        });
    }
    blockers
}

/// What `pay_order` would do now.
#[derive(Debug, Clone)]
pub struct PayPlan {
    pub order: OrderView,
    /// What would be charged.
    pub amount: Fen,
    pub blockers: Blockers,
}

/// Plans a payment: the order must await payment; its amount to pay is charged.
pub fn plan_pay(conn: &UserConn<'_>, now: Millis, p: &PayOrderParams) -> Result<PayPlan> {
    let order = get(conn, now, p.order_no.trim())?;
    Ok(PayPlan {
        blockers: status_blocker(&order, &[OrderStatus::Pending], "支付", "「待支付」"),
        amount: order.pay_amount_fen,
        order,
    })
}

/// What `pay_order` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub order_no: String,
    pub paid_amount_fen: Fen,
    pub paid_amount: Yuan,
    pub order: OrderView,
}

/// Simulated payment: 待支付 -> 已支付待发货.
pub fn pay(conn: &UserConn<'_>, now: Millis, p: &PayOrderParams) -> Result<Payment> {
    let plan = plan_pay(conn, now, p)?;
    plan.blockers.check()?;
    let order_no = plan.order.order_no;
    conn.execute(
        "UPDATE orders SET status = ?2, paid_at = ?3 WHERE order_no = ?1 AND user_id = ?4",
        params![order_no, OrderStatus::Paid.as_str(), now, conn.user()],
    )?;
    Ok(Payment {
        paid_amount_fen: plan.amount,
        paid_amount: Yuan(plan.amount),
        order: get(conn, now, &order_no)?,
        order_no,
    })
}

/// A SKU and how many units went back to stock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Restocked {
    pub sku_code: String,
    pub quantity: i64,
}

/// What `cancel_order` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cancellation {
    pub order_no: String,
    pub previous_status: String,
    pub restocked: Vec<Restocked>,
    /// The coupon that is usable again.
    pub coupon_returned: Option<String>,
    /// What goes back to the shopper (0 when nothing was paid).
    pub refund_amount_fen: Fen,
    pub refund_amount: Yuan,
    pub reason: Option<String>,
    pub order: OrderView,
}

/// What `cancel_order` would do now.
#[derive(Debug, Clone)]
pub struct CancelPlan {
    pub order: OrderView,
    /// What goes back to the shopper: what was paid, 0 when nothing was.
    pub refund: Fen,
    /// The coupon that would be usable again.
    pub coupon_returned: Option<String>,
    pub reason: Option<String>,
    pub blockers: Blockers,
}

/// Plans a cancellation: only before shipping; stock, coupon and what was
/// paid come back.
pub fn plan_cancel(conn: &UserConn<'_>, now: Millis, p: &CancelOrderParams) -> Result<CancelPlan> {
    let order = get(conn, now, p.order_no.trim())?;
    let reason = p
        .reason
        .as_deref()
        .map(|r| check_text("reason", r, 1, 200))
        .transpose()?;
    Ok(CancelPlan {
        blockers: status_blocker(
            &order,
            &[OrderStatus::Pending, OrderStatus::Paid],
            "取消",
            "「待支付」或「已支付待发货」",
        ),
        refund: if order.paid_at.is_some() {
            order.pay_amount_fen
        } else {
            0
        },
        coupon_returned: coupons::used_on(conn, &order.order_no)?,
        reason,
        order,
    })
}

/// Cancels an order that has not shipped: stock and coupon come back.
pub fn cancel(conn: &UserConn<'_>, now: Millis, p: &CancelOrderParams) -> Result<Cancellation> {
    let plan = plan_cancel(conn, now, p)?;
    plan.blockers.check()?;
    let order_no = plan.order.order_no;
    let mut restocked = Vec::new();
    for line in plan.order.lines {
        let restored = conn.execute(
            "UPDATE sku SET stock = stock + ?2 WHERE sku_code = ?1",
            params![line.sku_code, line.quantity],
        )?;
        if restored != 1 {
            return Err(ShopError::Corrupt(format!(
                "订单 {order_no} 的商品 {} 不在商品库中，无法退回库存",
                line.sku_code
            )));
        }
        restocked.push(Restocked {
            sku_code: line.sku_code,
            quantity: line.quantity,
        });
    }
    let coupon_returned = coupons::release(conn, &order_no)?;
    conn.execute(
        "UPDATE orders SET status = ?2, cancelled_at = ?3 WHERE order_no = ?1 AND user_id = ?4",
        params![order_no, OrderStatus::Cancelled.as_str(), now, conn.user()],
    )?;
    Ok(Cancellation {
        previous_status: plan.order.status,
        restocked,
        coupon_returned,
        refund_amount_fen: plan.refund,
        refund_amount: Yuan(plan.refund),
        reason: plan.reason,
        order: get(conn, now, &order_no)?,
        order_no,
    })
}

/// What `change_address` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddressChange {
    pub order_no: String,
    pub previous_receiver: Receiver,
    pub receiver: Receiver,
    pub order: OrderView,
}

/// What `change_address` would do now.
#[derive(Debug, Clone)]
pub struct AddressPlan {
    /// The order as it is, with the receiver before the change.
    pub order: OrderView,
    /// The receiver after the change.
    pub receiver: Receiver,
    pub blockers: Blockers,
}

/// Plans a change of receiver: only before shipping, at least one field.
pub fn plan_change_address(
    conn: &UserConn<'_>,
    now: Millis,
    p: &ChangeAddressParams,
) -> Result<AddressPlan> {
    let order = get(conn, now, p.order_no.trim())?;
    if p.receiver_name.is_none() && p.receiver_phone.is_none() && p.receiver_address.is_none() {
        return Err(ShopError::invalid(
            "receiverAddress",
            "receiverName、receiverPhone、receiverAddress 至少填写一项",
        ));
    }
    let receiver = receiver_from(
        Some(order.receiver.clone()),
        p.receiver_name.as_deref(),
        p.receiver_phone.as_deref(),
        p.receiver_address.as_deref(),
    )?
    .unwrap_or_else(|| order.receiver.clone());
    Ok(AddressPlan {
        blockers: status_blocker(
            &order,
            &[OrderStatus::Pending, OrderStatus::Paid],
            "修改收货地址",
            "发货前（「待支付」或「已支付待发货」）",
        ),
        receiver,
        order,
    })
}

/// Changes the receiver of an order that has not shipped.
pub fn change_address(
    conn: &UserConn<'_>,
    now: Millis,
    p: &ChangeAddressParams,
) -> Result<AddressChange> {
    let plan = plan_change_address(conn, now, p)?;
    plan.blockers.check()?;
    let order_no = plan.order.order_no;
    let receiver = plan.receiver;
    conn.execute(
        "UPDATE orders SET receiver_name = ?2, receiver_phone = ?3, receiver_address = ?4
         WHERE order_no = ?1 AND user_id = ?5",
        params![
            order_no,
            receiver.name,
            receiver.phone,
            receiver.address,
            conn.user()
        ],
    )?;
    Ok(AddressChange {
        previous_receiver: plan.order.receiver,
        receiver,
        order: get(conn, now, &order_no)?,
        order_no,
    })
}

fn opt(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("—")
}

impl fmt::Display for OrderView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "订单 {}｜{}", self.order_no, self.status)?;
        for line in &self.lines {
            writeln!(
                f,
                "- {} {} ×{}｜单价 {} 元｜小计 {} 元",
                line.sku_code, line.sku_name, line.quantity, line.price, line.subtotal
            )?;
        }
        write!(
            f,
            "商品金额 {} 元，优惠 {} 元",
            self.total_amount, self.discount_amount
        )?;
        if let Some(code) = &self.coupon_code {
            write!(f, "（优惠券 {code}）")?;
        }
        writeln!(f, "，实付 {} 元", self.pay_amount)?;
        writeln!(f, "收货人：{}", self.receiver)?;
        writeln!(
            f,
            "下单 {}｜支付 {}｜发货 {}｜签收 {}{}",
            self.created_at,
            opt(&self.paid_at),
            opt(&self.shipped_at),
            opt(&self.received_at),
            self.cancelled_at
                .as_ref()
                .map(|c| format!("｜取消 {c}"))
                .unwrap_or_default()
        )?;
        if let Some(tracking) = &self.tracking_no {
            writeln!(f, "运单号 {tracking}")?;
        }
        if let Some(w) = &self.after_sale_windows {
            writeln!(f, "{w}")?;
        }
        if self.next_actions.is_empty() {
            write!(f, "该订单已无可执行的操作。")
        } else {
            write!(f, "可用操作：{}", self.next_actions.join("、"))
        }
    }
}

impl fmt::Display for OrderList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.orders.is_empty() {
            return write!(f, "没有符合条件的订单。");
        }
        if self.orders.len() > 1 || self.matched > 1 {
            writeln!(
                f,
                "共 {} 个订单，按下单时间倒序显示 {} 个：",
                self.matched,
                self.orders.len()
            )?;
        }
        let parts: Vec<String> = self.orders.iter().map(ToString::to_string).collect();
        write!(f, "{}", parts.join("\n\n"))
    }
}

impl fmt::Display for Payment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "订单 {} 已支付 {} 元（模拟支付），等待发货。\n{}",
            self.order_no, self.paid_amount, self.order
        )
    }
}

impl fmt::Display for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "订单 {} 已取消（原状态 {}）",
            self.order_no, self.previous_status
        )?;
        let items: Vec<String> = self
            .restocked
            .iter()
            .map(|r| format!("{} ×{}", r.sku_code, r.quantity))
            .collect();
        write!(f, "，库存已退回：{}", items.join("、"))?;
        if let Some(code) = &self.coupon_returned {
            write!(f, "；优惠券 {code} 已退回，可再次使用")?;
        }
        if self.refund_amount_fen > 0 {
            write!(f, "；将退款 {} 元", self.refund_amount)?;
        }
        write!(f, "。\n{}", self.order)
    }
}

impl fmt::Display for AddressChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "订单 {} 的收货信息已由「{}」改为「{}」。\n{}",
            self.order_no, self.previous_receiver, self.receiver, self.order
        )
    }
}
