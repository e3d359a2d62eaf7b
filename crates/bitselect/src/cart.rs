//! A user's cart: `query_cart` and `update_cart_item`, plus the
//! deductions an order makes.

use std::fmt;

use crate::store::params;
use serde::{Deserialize, Serialize};

use crate::catalog::{self, ON_SALE, SkuHit};
use crate::clock::{Millis, format_rfc3339};
use crate::coupons::Basket;
use crate::error::{Blockers, Refusal, Result, ShopError};
use crate::money::{Fen, Yuan};
use crate::params::{CartAction, MAX_QUANTITY, UpdateCartItemParams};
use crate::users::UserConn;

/// One cart line with what it costs now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CartLine {
    pub sku_code: String,
    pub name: String,
    pub category: String,
    pub quantity: i64,
    pub added_at: String,
    pub added_price_fen: Fen,
    pub added_price: Yuan,
    pub current_price_fen: Fen,
    pub current_price: Yuan,
    /// Current minus added price: negative is a price drop.
    pub price_change_fen: Fen,
    pub price_change: Yuan,
    pub stock: i64,
    pub status: String,
    /// The whole line can be ordered now.
    pub available: bool,
    /// 可下单 / 已下架 / 无货 / 库存不足（仅剩 n 件）.
    pub availability: String,
    /// Quantity × current price.
    pub subtotal_fen: Fen,
    pub subtotal: Yuan,
}

/// What `query_cart` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CartView {
    pub lines: Vec<CartLine>,
    pub item_count: i64,
    pub total_fen: Fen,
    pub total: Yuan,
    /// The sum of the lines that can be ordered now.
    pub orderable_total_fen: Fen,
    pub orderable_total: Yuan,
}

/// What `update_cart_item` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CartUpdate {
    pub action: CartAction,
    pub sku_code: String,
    pub name: String,
    pub previous_quantity: i64,
    /// 0 when the line is gone.
    pub quantity: i64,
    pub removed: bool,
    /// A warning the shopper should hear, e.g. that stock is short.
    pub note: Option<String>,
    pub cart: CartView,
}

fn availability(status: &str, stock: i64, quantity: i64) -> (bool, String) {
    if status != ON_SALE {
        (false, status.to_owned())
    } else if stock <= 0 {
        (false, "无货".to_owned())
    } else if stock < quantity {
        (false, format!("库存不足（仅剩 {stock} 件）"))
    } else {
        (true, "可下单".to_owned())
    }
}

/// A cart line's facts, before they are priced and judged.
struct LineFacts {
    sku_code: String,
    name: String,
    category: String,
    quantity: i64,
    added_at: String,
    added_price: Fen,
    current_price: Fen,
    stock: i64,
    status: String,
}

impl LineFacts {
    fn line(self) -> CartLine {
        let (available, availability) = availability(&self.status, self.stock, self.quantity);
        let (added, current, quantity) = (self.added_price, self.current_price, self.quantity);
        CartLine {
            sku_code: self.sku_code,
            name: self.name,
            category: self.category,
            quantity,
            added_at: self.added_at,
            added_price_fen: added,
            added_price: Yuan(added),
            current_price_fen: current,
            current_price: Yuan(current),
            price_change_fen: current - added,
            price_change: Yuan(current - added),
            stock: self.stock,
            status: self.status,
            available,
            availability,
            subtotal_fen: current * quantity,
            subtotal: Yuan(current * quantity),
        }
    }
}

impl CartView {
    /// The totals of `lines`.
    fn of(lines: Vec<CartLine>) -> Self {
        let total: Fen = lines.iter().map(|l| l.subtotal_fen).sum();
        let orderable: Fen = lines
            .iter()
            .filter(|l| l.available)
            .map(|l| l.subtotal_fen)
            .sum();
        Self {
            item_count: lines.iter().map(|l| l.quantity).sum(),
            lines,
            total_fen: total,
            total: Yuan(total),
            orderable_total_fen: orderable,
            orderable_total: Yuan(orderable),
        }
    }
}

/// The whole cart, newest line first.
pub fn view(conn: &UserConn<'_>) -> Result<CartView> {
    let lines = conn.query_all(
        "SELECT c.sku_code, s.name, p.category, c.quantity, c.added_at, c.added_price_fen,
                s.price_fen, s.stock, s.status
         FROM cart_item c
         JOIN sku s ON s.sku_code = c.sku_code
         JOIN product p ON p.spu_code = s.spu_code
         WHERE c.user_id = ?1
         ORDER BY c.added_at DESC, c.sku_code",
        params![conn.user()],
        |row| {
            Ok(LineFacts {
                sku_code: row.get(0)?,
                name: row.get(1)?,
                category: row.get(2)?,
                quantity: row.get(3)?,
                added_at: format_rfc3339(row.get(4)?),
                added_price: row.get(5)?,
                current_price: row.get(6)?,
                stock: row.get(7)?,
                status: row.get(8)?,
            }
            .line())
        },
    )?;
    Ok(CartView::of(lines))
}

/// The orderable lines as a coupon basket.
pub fn orderable_basket(conn: &UserConn<'_>) -> Result<Basket> {
    let mut basket = Basket::default();
    for line in view(conn)?.lines.into_iter().filter(|l| l.available) {
        basket.total += line.subtotal_fen;
        *basket.by_category.entry(line.category).or_insert(0) += line.subtotal_fen;
    }
    Ok(basket)
}

/// How many units of `sku_code` the cart holds and at what price the line
/// was first added, if the cart has it.
pub(crate) fn line_of(conn: &UserConn<'_>, sku_code: &str) -> Result<Option<(i64, Fen)>> {
    conn.query_opt(
        "SELECT quantity, added_price_fen FROM cart_item WHERE user_id = ?1 AND sku_code = ?2",
        params![conn.user(), sku_code],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

/// Takes `quantity` units of `sku_code` out of the cart, dropping the line
/// when nothing is left. The caller has checked that there are enough.
pub(crate) fn deduct(conn: &UserConn<'_>, sku_code: &str, quantity: i64) -> Result<()> {
    // Drop the line when nothing would be left (the table keeps quantity > 0).
    let changed = match conn.execute(
        "DELETE FROM cart_item WHERE user_id = ?3 AND sku_code = ?1 AND quantity = ?2",
        params![sku_code, quantity, conn.user()],
    )? {
        0 => conn.execute(
            "UPDATE cart_item SET quantity = quantity - ?2
             WHERE user_id = ?3 AND sku_code = ?1 AND quantity > ?2",
            params![sku_code, quantity, conn.user()],
        )?,
        deleted => deleted,
    };
    if changed != 1 {
        return Err(ShopError::Corrupt(format!(
            "购物车中 {sku_code} 的数量在扣减时已改变"
        )));
    }
    Ok(())
}

fn required_quantity(p: &UpdateCartItemParams) -> Result<i64> {
    match p.quantity {
        None => Err(ShopError::invalid(
            "quantity",
            "action 为 add 或 decrease 时必须填写数量（1 到 99）",
        )),
        Some(q) if !(1..=MAX_QUANTITY).contains(&q) => Err(ShopError::invalid(
            "quantity",
            format!("须在 1 到 {MAX_QUANTITY} 之间，收到 {q}"),
        )),
        Some(q) => Ok(i64::from(q)),
    }
}

/// What `update_cart_item` would do now, worked out without writing.
#[derive(Debug, Clone)]
pub struct CartPlan {
    pub action: CartAction,
    pub sku: SkuHit,
    /// Units in the cart before the call.
    pub previous: i64,
    /// Units in the cart after it (0: the line is gone).
    pub quantity: i64,
    /// The price of the line's first add, when the cart has the line.
    pub added_price: Option<Fen>,
    /// A warning the write gives along with its result.
    pub note: Option<String>,
    /// Why the write would be refused.
    pub blockers: Blockers,
    /// The cart as the call would leave it.
    pub cart_after: CartView,
}

/// Plans one cart change: every check of the write, no writes. Bad
/// arguments and a SKU that is neither in the catalogue nor in the cart are
/// errors; the rest of the refusals are the plan's blockers.
pub fn plan_update(conn: &UserConn<'_>, now: Millis, p: &UpdateCartItemParams) -> Result<CartPlan> {
    let sku_code = catalog::normalize_code(&p.sku_code);
    let line = line_of(conn, &sku_code)?;
    let previous = line.map_or(0, |(quantity, _)| quantity);
    let change = match p.action {
        CartAction::Add | CartAction::Decrease => required_quantity(p)?,
        CartAction::Remove => previous,
    };
    let sku = match catalog::find_sku(conn, &sku_code)? {
        Some(sku) => sku,
        // Taking away what the cart does not hold is refused as such.
        None if p.action != CartAction::Add => {
            // Not in the catalogue either: the code is all there is to name.
            return Err(Refusal::NotInCart {
                name: sku_code.clone(),
                sku: sku_code,
            }
            .into());
        }
        None => return Err(Refusal::UnknownSku { sku: sku_code }.into()),
    };
    let mut blockers = Blockers::default();
    let mut note = None;
    let quantity = match p.action {
        CartAction::Add => {
            if let Some(refusal) = sku.unavailable() {
                blockers.push(refusal);
            }
            let would_be = previous + change;
            if would_be > i64::from(MAX_QUANTITY) {
                blockers.push(Refusal::CartLineLimit {
                    sku: sku_code.clone(),
                    name: sku.name.clone(),
                    would_be,
                    max: i64::from(MAX_QUANTITY),
                });
            }
            if would_be > sku.stock && sku.stock > 0 {
                note = Some(format!(
                    "注意：{} 仅剩 {} 件，购物车中的 {would_be} 件目前不能全部下单",
                    sku.name, sku.stock
                ));
            }
            would_be
        }
        CartAction::Decrease | CartAction::Remove if previous == 0 => {
            blockers.push(Refusal::NotInCart {
                sku: sku_code.clone(),
                name: sku.name.clone(),
            });
            0
        }
        CartAction::Decrease if change > previous => {
            blockers.push(Refusal::DecreaseTooMuch {
                sku: sku_code.clone(),
                name: sku.name.clone(),
                in_cart: previous,
                requested: change,
            });
            previous
        }
        CartAction::Decrease | CartAction::Remove => previous - change,
    };
    let cart_after = cart_after(conn, now, &sku, quantity)?;
    Ok(CartPlan {
        action: p.action,
        previous,
        quantity,
        added_price: line.map(|(_, price)| price),
        note,
        blockers,
        cart_after,
        sku,
    })
}

/// The cart with `sku`'s line at `quantity`, priced and judged as
/// [`view`] would once the change is written.
fn cart_after(conn: &UserConn<'_>, now: Millis, sku: &SkuHit, quantity: i64) -> Result<CartView> {
    let mut lines = view(conn)?.lines;
    let at = lines.iter().position(|l| l.sku_code == sku.sku_code);
    let facts = |added_at, added_price| LineFacts {
        sku_code: sku.sku_code.clone(),
        name: sku.name.clone(),
        category: sku.category.clone(),
        quantity,
        added_at,
        added_price,
        current_price: sku.price_fen,
        stock: sku.stock,
        status: sku.status.clone(),
    };
    match at {
        Some(index) if quantity == 0 => {
            lines.remove(index);
        }
        Some(index) => {
            let old = &lines[index];
            lines[index] = facts(old.added_at.clone(), old.added_price_fen).line();
        }
        None if quantity > 0 => lines.insert(0, facts(format_rfc3339(now), sku.price_fen).line()),
        None => {}
    }
    Ok(CartView::of(lines))
}

/// Writes a plan that nothing blocks.
fn commit_update(conn: &UserConn<'_>, now: Millis, plan: CartPlan) -> Result<CartUpdate> {
    let sku_code = &plan.sku.sku_code;
    match plan.action {
        // A line keeps the price and time of its first add, so the cart can
        // show how the price moved since.
        CartAction::Add => {
            conn.execute(
                "INSERT INTO cart_item (user_id, sku_code, quantity, added_price_fen, added_at)
                 VALUES (?5, ?1, ?2, ?3, ?4)
                 ON CONFLICT (user_id, sku_code)
                 DO UPDATE SET quantity = cart_item.quantity + excluded.quantity",
                params![
                    sku_code,
                    plan.quantity - plan.previous,
                    plan.sku.price_fen,
                    now,
                    conn.user()
                ],
            )?;
        }
        CartAction::Decrease => deduct(conn, sku_code, plan.previous - plan.quantity)?,
        CartAction::Remove => {
            conn.execute(
                "DELETE FROM cart_item WHERE user_id = ?1 AND sku_code = ?2",
                params![conn.user(), sku_code],
            )?;
        }
    }
    Ok(CartUpdate {
        action: plan.action,
        sku_code: plan.sku.sku_code,
        name: plan.sku.name,
        previous_quantity: plan.previous,
        quantity: plan.quantity,
        removed: plan.quantity == 0,
        note: plan.note,
        cart: view(conn)?,
    })
}

/// Adds, decreases or removes one cart line.
pub fn update(conn: &UserConn<'_>, now: Millis, p: &UpdateCartItemParams) -> Result<CartUpdate> {
    let plan = plan_update(conn, now, p)?;
    plan.blockers.check()?;
    commit_update(conn, now, plan)
}

impl fmt::Display for CartView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lines.is_empty() {
            return write!(f, "购物车是空的。");
        }
        writeln!(
            f,
            "购物车共 {} 行 {} 件，按现价合计 {} 元，其中可下单 {} 元：",
            self.lines.len(),
            self.item_count,
            self.total,
            self.orderable_total
        )?;
        for line in &self.lines {
            write!(
                f,
                "- {} {} ×{}｜现价 {} 元",
                line.sku_code, line.name, line.quantity, line.current_price
            )?;
            if line.price_change_fen != 0 {
                write!(
                    f,
                    "（加入时 {} 元，{} {} 元）",
                    line.added_price,
                    if line.price_change_fen < 0 {
                        "降价"
                    } else {
                        "涨价"
                    },
                    Yuan(line.price_change_fen.abs())
                )?;
            }
            writeln!(
                f,
                "｜小计 {} 元｜库存 {}｜{}",
                line.subtotal, line.stock, line.availability
            )?;
        }
        write!(f, "下单请用 create_order，items 只能取上面可下单的商品。")
    }
}

impl fmt::Display for CartUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.action, self.removed) {
            (CartAction::Add, _) => write!(
                f,
                "已将 {} {} 加入购物车，现有 {} 件（原 {} 件）。",
                self.sku_code, self.name, self.quantity, self.previous_quantity
            )?,
            (_, true) => write!(
                f,
                "已从购物车删除 {} {}（原 {} 件）。",
                self.sku_code, self.name, self.previous_quantity
            )?,
            (_, false) => write!(
                f,
                "已将购物车中 {} {} 从 {} 件减少到 {} 件。",
                self.sku_code, self.name, self.previous_quantity, self.quantity
            )?,
        }
        if let Some(note) = &self.note {
            write!(f, "{note}")?;
        }
        write!(f, "\n{}", self.cart)
    }
}
