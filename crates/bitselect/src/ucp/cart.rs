//! The standard's cart is the shopper's own cart: the same lines the
//! shop's `query_cart` and `update_cart_item` see, so a platform and the
//! shop's own tools never keep two baskets. Each user has one; its id
//! follows from the user. Create and update set its lines to the
//! request's (by the cart's own rules: catalogue, stock, quantity
//! limits), cancel empties it.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::names::{CART, CURRENCY, UCP_VERSION};
use crate::cart;
use crate::clock::Millis;
use crate::error::{Refusal, Result, ShopError};
use crate::orders;
use crate::params::{CartAction, UpdateCartItemParams};
use crate::users::UserConn;

/// The id of the user's cart: what the standard names it by.
fn id_of(conn: &UserConn<'_>) -> String {
    let digest = Sha256::digest(format!("cart:{}", conn.user().get()).as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("cart_{hex}")
}

/// Refused unless `id` is the user's cart.
pub(crate) fn check_id(conn: &UserConn<'_>, id: &str) -> Result<()> {
    if id == id_of(conn) {
        Ok(())
    } else {
        Err(Refusal::UnknownCart { id: id.to_owned() }.into())
    }
}

/// The user's cart as the standard's cart.
pub fn view(conn: &UserConn<'_>) -> Result<Value> {
    let cart = cart::view(conn)?;
    let mut messages = Vec::new();
    let line_items: Vec<Value> = cart
        .lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            if !line.available {
                messages.push(json!({
                    "type": "warning",
                    "code": "item_unavailable",
                    "path": format!("$.line_items[{index}]"),
                    "content": format!("{}：{}", line.name, line.availability),
                }));
            }
            json!({
                "id": format!("li_{}", index + 1),
                "item": { "id": line.sku_code, "title": line.name, "price": line.current_price_fen },
                "quantity": line.quantity,
                "totals": [
                    { "type": "subtotal", "amount": line.subtotal_fen },
                    { "type": "total", "amount": line.subtotal_fen },
                ],
            })
        })
        .collect();
    let mut answer = json!({
        "ucp": {
            "version": UCP_VERSION,
            "status": "success",
            "capabilities": { CART: [{ "version": UCP_VERSION }] },
        },
        "id": id_of(conn),
        "line_items": line_items,
        "currency": CURRENCY,
        "totals": [
            { "type": "subtotal", "amount": cart.total_fen },
            { "type": "total", "amount": cart.total_fen },
        ],
    });
    if !messages.is_empty() {
        answer["messages"] = json!(messages);
    }
    Ok(answer)
}

/// The cart `id` as it stands.
pub fn get(conn: &UserConn<'_>, id: &str) -> Result<Value> {
    check_id(conn, id)?;
    view(conn)
}

/// Sets the user's cart lines to `request`'s `line_items` (SKU codes and
/// quantities), each change by the cart's own rules; `id` is `None` for a
/// create.
pub fn replace(
    conn: &UserConn<'_>,
    now: Millis,
    id: Option<&str>,
    request: &Value,
) -> Result<Value> {
    if let Some(id) = id {
        check_id(conn, id)?;
    }
    let items = request["line_items"]
        .as_array()
        .ok_or_else(|| ShopError::invalid("cart.line_items", "须给出商品行（数组）"))?;
    let mut wanted = Vec::with_capacity(items.len());
    for item in items {
        let sku = item["item"]["id"].as_str().unwrap_or_default();
        let quantity = item["quantity"]
            .as_i64()
            .ok_or_else(|| ShopError::invalid("cart.line_items.quantity", "须为整数"))?;
        wanted.push((sku, quantity));
    }
    let wanted = orders::check_lines("cart.line_items", wanted.into_iter())?;
    let held = cart::view(conn)?;
    for line in &held.lines {
        if !wanted.iter().any(|(sku, _)| *sku == line.sku_code) {
            change(conn, now, &line.sku_code, CartAction::Remove, None)?;
        }
    }
    for (sku, quantity) in &wanted {
        let now_held = held
            .lines
            .iter()
            .find(|line| &line.sku_code == sku)
            .map_or(0, |line| line.quantity);
        match quantity.cmp(&now_held) {
            std::cmp::Ordering::Greater => {
                change(conn, now, sku, CartAction::Add, Some(quantity - now_held))?;
            }
            std::cmp::Ordering::Less => {
                change(
                    conn,
                    now,
                    sku,
                    CartAction::Decrease,
                    Some(now_held - quantity),
                )?;
            }
            std::cmp::Ordering::Equal => {}
        }
    }
    view(conn)
}

/// Empties the user's cart `id`.
pub fn cancel(conn: &UserConn<'_>, now: Millis, id: &str) -> Result<Value> {
    check_id(conn, id)?;
    for line in cart::view(conn)?.lines {
        change(conn, now, &line.sku_code, CartAction::Remove, None)?;
    }
    view(conn)
}

fn change(
    conn: &UserConn<'_>,
    now: Millis,
    sku: &str,
    action: CartAction,
    quantity: Option<i64>,
) -> Result<()> {
    let quantity = quantity
        .map(|q| u32::try_from(q).map_err(|_| ShopError::invalid("quantity", "数量超出范围")))
        .transpose()?;
    cart::update(
        conn,
        now,
        &UpdateCartItemParams {
            sku_code: sku.to_owned(),
            action,
            quantity,
        },
    )
    .map(drop)
}
