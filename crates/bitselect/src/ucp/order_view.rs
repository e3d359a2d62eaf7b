//! An order placed by a checkout, as the standard's order object: its
//! lines with how many have reached the shopper, where it ships and what
//! has happened to it (shipped with its tracking number, delivered), the
//! order's totals, what happened to it since (a cancellation, an
//! after-sale), and the checkout it came from. The order's permalink (the URL of this
//! resource) is what a completed checkout's `order.permalink_url` names.

use serde_json::{Value, json};

use super::names::{CURRENCY, ORDER, ORDERS_PATH, UCP_VERSION};
use crate::clock::{Millis, format_rfc3339};
use crate::error::{Refusal, Result};
use crate::orders::{self, OrderView};
use crate::params::OrderStatus;
use crate::store::params;
use crate::users::UserConn;

/// The permalink of order `order_no` at the shop at `origin`.
pub fn permalink(origin: &str, order_no: &str) -> String {
    format!("{origin}{ORDERS_PATH}/{order_no}")
}

/// The user's order `order_no`, placed by a checkout, as the standard's
/// order object; any other order of theirs, or none, is unknown here.
pub fn render(conn: &UserConn<'_>, now: Millis, order_no: &str, origin: &str) -> Result<Value> {
    let unknown = || Refusal::UnknownOrder {
        order_no: order_no.to_owned(),
    };
    let checkout_id: String = conn
        .query_opt(
            "SELECT id FROM checkout_session WHERE order_no = ?1 AND user_id = ?2",
            params![order_no, conn.user()],
            |row| row.get(0),
        )?
        .ok_or_else(unknown)?;
    let order = orders::get(conn, now, order_no)?;
    let (status, delivered) = line_status(&order);
    let line_items: Vec<Value> = order
        .lines
        .iter()
        .map(|line| {
            json!({
                "id": format!("line_{}", line.line_no),
                "item": { "id": line.sku_code, "title": line.sku_name, "price": line.price_fen },
                "quantity": {
                    "total": line.quantity,
                    "fulfilled": if delivered { line.quantity } else { 0 },
                },
                "totals": [
                    { "type": "subtotal", "amount": line.subtotal_fen },
                    { "type": "total", "amount": line.subtotal_fen },
                ],
                "status": status,
            })
        })
        .collect();
    let all_lines: Vec<Value> = order
        .lines
        .iter()
        .map(|line| json!({ "id": format!("line_{}", line.line_no), "quantity": line.quantity }))
        .collect();
    let fulfillment = fulfillment(conn, &order, &all_lines)?;
    let mut totals = vec![json!({ "type": "subtotal", "amount": order.total_amount_fen })];
    if order.discount_amount_fen > 0 {
        totals.push(json!({ "type": "discount", "amount": -order.discount_amount_fen }));
    }
    totals.push(json!({ "type": "fulfillment", "display_text": "运费", "amount": 0 }));
    totals.push(json!({ "type": "total", "amount": order.pay_amount_fen }));
    let adjustments = adjustments(conn, &order)?;
    let mut rendered = json!({
        "ucp": {
            "version": UCP_VERSION,
            "status": "success",
            "capabilities": { ORDER: [{ "version": UCP_VERSION }] },
        },
        "id": order.order_no,
        "label": order.order_no,
        "checkout_id": checkout_id,
        "permalink_url": permalink(origin, &order.order_no),
        "line_items": line_items,
        "fulfillment": fulfillment,
        "currency": CURRENCY,
        "totals": totals,
    });
    if !adjustments.is_empty() {
        rendered["adjustments"] = Value::Array(adjustments);
    }
    Ok(rendered)
}

/// What happened to the order after it was placed, apart from its
/// delivery: its cancellation (everything paid refunded, every line
/// taken back) and each after-sale asked for (a return or an exchange
/// of one line, pending until the shop finishes it).
fn adjustments(conn: &UserConn<'_>, order: &OrderView) -> Result<Vec<Value>> {
    let mut adjustments = Vec::new();
    let cancelled: Option<Millis> = conn.query_row(
        "SELECT cancelled_at FROM orders WHERE order_no = ?1 AND user_id = ?2",
        params![order.order_no, conn.user()],
        |row| row.get(0),
    )?;
    if let Some(at) = cancelled
        && order.status == OrderStatus::Cancelled.as_str()
    {
        let lines: Vec<Value> = order
            .lines
            .iter()
            .map(|line| json!({ "id": format!("line_{}", line.line_no), "quantity": -line.quantity }))
            .collect();
        adjustments.push(json!({
            "id": "cancellation",
            "type": "cancellation",
            "occurred_at": format_rfc3339(at),
            "status": "completed",
            "line_items": lines,
            "totals": [{ "type": "total", "amount": -order.pay_amount_fen }],
            "description": "订单已取消，已付款项原路退回",
        }));
    }
    let after_sales: Vec<(String, String, String, String, String, Millis)> = conn.query_all(
        "SELECT after_sale_no, sku_code, kind, status, reason, created_at FROM after_sale
         WHERE order_no = ?1 AND user_id = ?2 ORDER BY created_at, after_sale_no",
        params![order.order_no, conn.user()],
        |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        },
    )?;
    for (number, sku_code, kind, status, reason, at) in after_sales {
        let returned = kind == "退货退款";
        let mut adjustment = json!({
            "id": number,
            "type": if returned { "return" } else { "exchange" },
            "occurred_at": format_rfc3339(at),
            "status": if status == "已完成" { "completed" } else { "pending" },
            "description": format!("{kind}：{reason}"),
        });
        if let Some(line) = order.lines.iter().find(|line| line.sku_code == sku_code)
            && returned
        {
            adjustment["line_items"] = json!([
                { "id": format!("line_{}", line.line_no), "quantity": -line.quantity }
            ]);
        }
        adjustments.push(adjustment);
    }
    Ok(adjustments)
}

/// Where the order goes (the expectation) and what has happened to it
/// (shipped, with its tracking number; delivered).
fn fulfillment(conn: &UserConn<'_>, order: &OrderView, lines: &[Value]) -> Result<Value> {
    let (shipped, received): (Option<Millis>, Option<Millis>) = conn.query_row(
        "SELECT shipped_at, received_at FROM orders WHERE order_no = ?1 AND user_id = ?2",
        params![order.order_no, conn.user()],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let mut events = Vec::new();
    if let Some(at) = shipped {
        let mut event = json!({
            "id": "shipped",
            "occurred_at": format_rfc3339(at),
            "type": "shipped",
            "line_items": lines,
        });
        if let Some(tracking) = &order.tracking_no {
            event["tracking_number"] = json!(tracking);
        }
        events.push(event);
    }
    if let Some(at) = received {
        events.push(json!({
            "id": "delivered",
            "occurred_at": format_rfc3339(at),
            "type": "delivered",
            "line_items": lines,
        }));
    }
    Ok(json!({
        "expectations": [{
            "id": "shipping",
            "line_items": lines,
            "method_type": "shipping",
            "destination": {
                "first_name": order.receiver.name,
                "phone_number": order.receiver.phone,
                "street_address": order.receiver.address,
                "address_country": "CN",
            },
            "description": "标准快递（包邮）",
        }],
        "events": events,
    }))
}

/// The standard's line status for the order's state, and whether its
/// goods have reached the shopper.
fn line_status(order: &OrderView) -> (&'static str, bool) {
    if order.status == OrderStatus::Delivered.as_str() {
        ("fulfilled", true)
    } else if order.status == OrderStatus::Cancelled.as_str() {
        ("removed", false)
    } else {
        ("processing", false)
    }
}
