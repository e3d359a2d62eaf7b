//! After-sales: the return and exchange windows, `apply_after_sale` and
//! `query_after_sale`.

use std::fmt;

use crate::store::{Row, params};
use serde::{Deserialize, Serialize};

use crate::catalog;
use crate::clock::{DAY_MS, Millis, days_left, format_rfc3339};
use crate::error::{Blockers, Refusal, Result, ShopError};
use crate::money::{Fen, Yuan};
use crate::orders::{self, OrderLine};
use crate::params::{
    AfterSaleType, ApplyAfterSaleParams, OrderStatus, QueryAfterSaleParams, given,
};
use crate::users::UserConn;

/// No-reason return and refund: within 7 days of delivery.
pub const RETURN_DAYS: i64 = 7;
/// Exchange: within 15 days of delivery.
pub const EXCHANGE_DAYS: i64 = 15;

pub const IN_PROGRESS: &str = "处理中";

/// Where a delivered order stands with its two windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterSaleWindows {
    pub return_deadline: String,
    /// Started days left, 0 once closed.
    pub return_days_left: i64,
    pub return_open: bool,
    pub exchange_deadline: String,
    pub exchange_days_left: i64,
    pub exchange_open: bool,
}

/// The windows of an order received at `received_at`, seen at `now`. A
/// window is open up to and including its deadline.
pub fn windows(received_at: Millis, now: Millis) -> AfterSaleWindows {
    let return_deadline = received_at + RETURN_DAYS * DAY_MS;
    let exchange_deadline = received_at + EXCHANGE_DAYS * DAY_MS;
    AfterSaleWindows {
        return_deadline: format_rfc3339(return_deadline),
        return_days_left: days_left(now, return_deadline),
        return_open: now <= return_deadline,
        exchange_deadline: format_rfc3339(exchange_deadline),
        exchange_days_left: days_left(now, exchange_deadline),
        exchange_open: now <= exchange_deadline,
    }
}

impl fmt::Display for AfterSaleWindows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.return_open {
            write!(
                f,
                "7 天无理由退货：还剩 {} 天（截止 {}）",
                self.return_days_left, self.return_deadline
            )?;
        } else {
            write!(f, "7 天无理由退货：已过期（截止 {}）", self.return_deadline)?;
        }
        if self.exchange_open {
            write!(
                f,
                "；15 天换货：还剩 {} 天（截止 {}）",
                self.exchange_days_left, self.exchange_deadline
            )
        } else {
            write!(f, "；15 天换货：已过期（截止 {}）", self.exchange_deadline)
        }
    }
}

/// One after-sale request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterSaleView {
    pub after_sale_no: String,
    pub order_no: String,
    pub sku_code: String,
    pub sku_name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub reason: String,
    pub status: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    /// What a return refunds (see [`refund_for`]); absent for an exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_amount_fen: Option<Fen>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_amount: Option<Yuan>,
}

/// What returning a line refunds: what was paid for it, that is its
/// subtotal less its share of the order's discount (in proportion to the
/// amounts, rounded half up to the fen). A one-line order refunds what was paid.
pub fn refund_for(subtotal: Fen, order_total: Fen, order_discount: Fen) -> Fen {
    if order_total <= 0 {
        return subtotal;
    }
    let share = (i128::from(order_discount) * i128::from(subtotal) * 2 + i128::from(order_total))
        / (2 * i128::from(order_total));
    subtotal - Fen::try_from(share).unwrap_or(0)
}

/// The refund of a return of `sku_code` from `order_no`; `None` for an
/// exchange or a line the order does not have.
fn refund_of(
    conn: &UserConn<'_>,
    order_no: &str,
    sku_code: &str,
    kind: AfterSaleType,
) -> Result<Option<Fen>> {
    if kind != AfterSaleType::ReturnRefund {
        return Ok(None);
    }
    let facts = orders::facts(conn, order_no)?;
    Ok(orders::line_for(conn, order_no, sku_code)?
        .map(|line| refund_for(line.subtotal_fen, facts.total, facts.discount)))
}

/// Fills in what a return refunds.
fn with_refund(conn: &UserConn<'_>, mut view: AfterSaleView) -> Result<AfterSaleView> {
    let kind = if view.kind == AfterSaleType::ReturnRefund.as_str() {
        AfterSaleType::ReturnRefund
    } else {
        AfterSaleType::Exchange
    };
    let refund = refund_of(conn, &view.order_no, &view.sku_code, kind)?;
    view.refund_amount_fen = refund;
    view.refund_amount = refund.map(Yuan);
    Ok(view)
}

/// What `query_after_sale` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterSaleList {
    pub after_sales: Vec<AfterSaleView>,
}

const SELECT_AFTER_SALE: &str = "SELECT a.after_sale_no, a.order_no, a.sku_code,
            COALESCE((SELECT i.sku_name FROM order_item i
                      WHERE i.order_no = a.order_no AND i.sku_code = a.sku_code LIMIT 1), ''),
            a.kind, a.reason, a.status, a.created_at, a.finished_at
     FROM after_sale a";

fn from_row(row: &Row<'_>) -> Result<AfterSaleView> {
    Ok(AfterSaleView {
        after_sale_no: row.get(0)?,
        order_no: row.get(1)?,
        sku_code: row.get(2)?,
        sku_name: row.get(3)?,
        kind: row.get(4)?,
        reason: row.get(5)?,
        status: row.get(6)?,
        created_at: format_rfc3339(row.get(7)?),
        finished_at: row.get::<Option<Millis>>(8)?.map(format_rfc3339),
        refund_amount_fen: None,
        refund_amount: None,
    })
}

fn get(conn: &UserConn<'_>, after_sale_no: &str) -> Result<AfterSaleView> {
    let view = conn
        .query_opt(
            &format!("{SELECT_AFTER_SALE} WHERE a.user_id = ?1 AND a.after_sale_no = ?2"),
            params![conn.user(), after_sale_no],
            from_row,
        )?
        .ok_or_else(|| Refusal::UnknownAfterSale {
            after_sale_no: after_sale_no.to_owned(),
        })?;
    with_refund(conn, view)
}

/// By number, by order, or all of them, newest first.
pub fn query(conn: &UserConn<'_>, p: &QueryAfterSaleParams) -> Result<AfterSaleList> {
    let number = p
        .after_sale_no
        .as_deref()
        .map(catalog::normalize_code)
        .filter(|n| !n.is_empty());
    if let Some(number) = number {
        return Ok(AfterSaleList {
            after_sales: vec![get(conn, &number)?],
        });
    }
    // Refuse an unknown order rather than answer "none".
    let order_no = orders::existing(conn, given(&p.order_no))?;
    let after_sales = conn
        .query_all(
            &format!(
                "{SELECT_AFTER_SALE} WHERE a.user_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR a.order_no = ?2)
                 ORDER BY a.created_at DESC, a.after_sale_no"
            ),
            params![conn.user(), order_no],
            from_row,
        )?
        .into_iter()
        .map(|view| with_refund(conn, view))
        .collect::<Result<_>>()?;
    Ok(AfterSaleList { after_sales })
}

/// What `apply_after_sale` would do now.
#[derive(Debug, Clone)]
pub struct AfterSalePlan {
    pub order_no: String,
    pub kind: AfterSaleType,
    /// The order line concerned.
    pub line: OrderLine,
    pub reason: String,
    /// What a return would refund; `None` for an exchange.
    pub refund: Option<Fen>,
    pub blockers: Blockers,
}

/// Plans a return or exchange: every check of the write, no writes. An
/// unknown order, or a SKU the order does not have, is an error; the status,
/// an open request and the windows are blockers.
pub fn plan_apply(
    conn: &UserConn<'_>,
    now: Millis,
    p: &ApplyAfterSaleParams,
) -> Result<AfterSalePlan> {
    let order_no = p.order_no.trim();
    let sku_code = catalog::normalize_code(&p.sku_code);
    let reason = p.reason.trim();
    if !(2..=200).contains(&reason.chars().count()) {
        return Err(ShopError::invalid("reason", "原因须为 2 到 200 个字"));
    }
    let facts = orders::facts(conn, order_no)?;
    let Some(line) = orders::line_for(conn, order_no, &sku_code)? else {
        return Err(Refusal::NotInOrder {
            order_no: order_no.to_owned(),
            sku: sku_code,
        }
        .into());
    };
    let mut blockers = Blockers::default();
    let received_at = match facts.received_at {
        Some(at) if facts.status == OrderStatus::Delivered.as_str() => Some(at),
        _ => {
            blockers.push(Refusal::OrderStatus {
                order_no: order_no.to_owned(),
                status: facts.status.clone(),
                action: "申请售后",
                allowed: "「已签收」",
            });
            None
        }
    };
    let open: Option<String> = conn.query_opt(
        "SELECT after_sale_no FROM after_sale
             WHERE order_no = ?1 AND sku_code = ?2 AND status = ?3",
        params![order_no, sku_code, IN_PROGRESS],
        |row| row.get(0),
    )?;
    if let Some(after_sale_no) = open {
        blockers.push(Refusal::AfterSaleInProgress {
            order_no: order_no.to_owned(),
            sku: sku_code.clone(),
            name: line.sku_name.clone(),
            after_sale_no,
        });
    }
    if let Some(received_at) = received_at
        && let Some(refusal) = window_closed(order_no, p.kind, received_at, now)
    {
        blockers.push(refusal);
    }
    Ok(AfterSalePlan {
        refund: refund_of(conn, order_no, &sku_code, p.kind)?,
        order_no: order_no.to_owned(),
        kind: p.kind,
        line,
        reason: reason.to_owned(),
        blockers,
    })
}

/// The refusal when the window for `kind` has closed at `now`.
fn window_closed(
    order_no: &str,
    kind: AfterSaleType,
    received_at: Millis,
    now: Millis,
) -> Option<Refusal> {
    let w = windows(received_at, now);
    let closed = match kind {
        AfterSaleType::ReturnRefund if !w.return_open => Some((
            "签收后 7 天的无理由退货期",
            w.return_deadline.clone(),
            w.exchange_open.then(|| w.exchange_deadline.clone()),
        )),
        AfterSaleType::Exchange if !w.exchange_open => {
            Some(("签收后 15 天的换货期", w.exchange_deadline.clone(), None))
        }
        _ => None,
    };
    closed.map(
        |(window, deadline, exchange_until)| Refusal::AfterSaleWindowClosed {
            order_no: order_no.to_owned(),
            window,
            received_at: format_rfc3339(received_at),
            deadline,
            exchange_until,
        },
    )
}

/// Opens a return or exchange for one line of a delivered order.
pub fn apply(conn: &UserConn<'_>, now: Millis, p: &ApplyAfterSaleParams) -> Result<AfterSaleView> {
    let plan = plan_apply(conn, now, p)?;
    plan.blockers.check()?;
    let count: i64 = conn.query_row(
        "SELECT COUNT(*) FROM after_sale WHERE order_no = ?1",
        params![plan.order_no],
        |row| row.get(0),
    )?;
    // The seed numbers them AS<order><3-digit sequence>, e.g. AS88232001.
    let after_sale_no = format!("AS{}{:03}", plan.order_no, count + 1);
    conn.execute(
        "INSERT INTO after_sale (after_sale_no, order_no, sku_code, kind, reason, status,
                                 created_at, user_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            after_sale_no,
            plan.order_no,
            plan.line.sku_code,
            plan.kind.as_str(),
            plan.reason,
            IN_PROGRESS,
            now,
            conn.user()
        ],
    )?;
    get(conn, &after_sale_no)
}

impl fmt::Display for AfterSaleView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "售后单 {}｜{}｜{}｜订单 {} 的 {} {}｜原因：{}｜申请于 {}",
            self.after_sale_no,
            self.kind,
            self.status,
            self.order_no,
            self.sku_code,
            self.sku_name,
            self.reason,
            self.created_at
        )?;
        if let Some(done) = &self.finished_at {
            write!(f, "｜完成于 {done}")?;
        }
        Ok(())
    }
}

impl fmt::Display for AfterSaleList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.after_sales.is_empty() {
            return write!(f, "没有售后单。");
        }
        writeln!(f, "共 {} 个售后单：", self.after_sales.len())?;
        let parts: Vec<String> = self.after_sales.iter().map(ToString::to_string).collect();
        write!(f, "{}", parts.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn windows_close_after_their_deadlines() {
        let received = 0;
        let w = windows(received, 3 * DAY_MS);
        assert_eq!((w.return_open, w.return_days_left), (true, 4));
        assert_eq!((w.exchange_open, w.exchange_days_left), (true, 12));

        let w = windows(received, 7 * DAY_MS);
        assert!(w.return_open, "the deadline itself is still inside");
        let w = windows(received, 7 * DAY_MS + 1);
        assert_eq!((w.return_open, w.return_days_left), (false, 0));
        assert_eq!(w.exchange_days_left, 8);

        let w = windows(received, 25 * DAY_MS);
        assert!(!w.return_open && !w.exchange_open);
    }
}
