//! The online shop's simulated payment pages: where `pay_order` hands the
//! shopper over (MCP URL-mode elicitation) to pay in the browser.
//!
//! A page is a row: an opaque random id, whose user and order it is, the
//! amount, when it expires, when the shopper pressed "pay" on it and when a
//! `pay_order` round took that payment. The row lives in the database, so
//! any instance behind the balancer serves the page and answers the call
//! sent again. The page itself is reached by its id alone (a browser
//! carries no token); everything a call reads of it is read for the
//! call's user, so another user's id is a page that does not exist.

use crate::clock::Millis;
use crate::error::{Result, ShopError};
use crate::money::Fen;
use crate::params::OrderStatus;
use crate::store::{Conn, Row, params};
use crate::users::UserConn;

/// The path the pages are served under: `/pay/<id>`.
pub const PAY_PAGE_PREFIX: &str = "/pay/";

/// How long a page can be opened and paid on.
pub const PAGE_LIFETIME_MS: Millis = 15 * 60_000;

/// Random bytes in a page id: 128 bits, shown as 32 hex digits.
const ID_BYTES: usize = 16;

/// One payment page as the shopper sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentPage {
    pub id: String,
    pub order_no: String,
    pub amount: Fen,
    pub expires_at: Millis,
    /// When the shopper pressed "pay" on it.
    pub paid_at: Option<Millis>,
    /// The order's status now: only a 待支付 order can be paid on it.
    pub order_status: String,
}

impl PaymentPage {
    pub fn payable(&self) -> bool {
        self.paid_at.is_none() && self.order_status == OrderStatus::Pending.as_str()
    }
}

/// What a `pay_order` round finds of the page it named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageState {
    /// No such page for this user: unknown, or another user's.
    Missing,
    /// Not paid on (yet); `expired` when it can no longer be.
    Waiting { page: PaymentPage, expired: bool },
    /// The shopper paid on it; the round may take the payment.
    Paid(PaymentPage),
}

const SELECT_PAGE: &str = "SELECT p.id, p.order_no, p.amount_fen, p.expires_at, p.paid_at, o.status
     FROM payment_page p JOIN orders o ON o.order_no = p.order_no";

fn page_from_row(row: &Row<'_>) -> Result<PaymentPage> {
    Ok(PaymentPage {
        id: row.get(0)?,
        order_no: row.get(1)?,
        amount: row.get(2)?,
        expires_at: row.get(3)?,
        paid_at: row.get(4)?,
        order_status: row.get(5)?,
    })
}

/// A fresh id: 128 random bits from the operating system.
pub(crate) fn new_id() -> Result<String> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes).map_err(|error| ShopError::Random(error.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `id` is shaped like one this module makes; anything else is
/// answered as unknown without a query.
pub(crate) fn well_formed(id: &str) -> bool {
    id.len() == ID_BYTES * 2 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Opens a page for the user to pay `amount` for `order_no`.
pub fn open(conn: &UserConn<'_>, now: Millis, order_no: &str, amount: Fen) -> Result<PaymentPage> {
    let id = new_id()?;
    conn.execute(
        "INSERT INTO payment_page (id, user_id, order_no, amount_fen, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            id,
            conn.user(),
            order_no,
            amount,
            now,
            now + PAGE_LIFETIME_MS
        ],
    )?;
    let page = conn.query_opt(
        &format!("{SELECT_PAGE} WHERE p.id = ?1"),
        params![id],
        page_from_row,
    )?;
    page.ok_or_else(|| ShopError::Corrupt(format!("支付页面 {id} 写入后读不到")))
}

/// The page `id` while it can be shown: `None` when unknown or expired.
pub fn find(conn: &dyn Conn, now: Millis, id: &str) -> Result<Option<PaymentPage>> {
    if !well_formed(id) {
        return Ok(None);
    }
    conn.query_opt(
        &format!("{SELECT_PAGE} WHERE p.id = ?1 AND p.expires_at > ?2"),
        params![id, now],
        page_from_row,
    )
}

/// The shopper presses "pay" on page `id`: it is marked paid if it can
/// be paid on; pressing again changes nothing. `None` when unknown or
/// expired.
pub fn pay_on(conn: &dyn Conn, now: Millis, id: &str) -> Result<Option<PaymentPage>> {
    let Some(page) = find(conn, now, id)? else {
        return Ok(None);
    };
    if !page.payable() {
        return Ok(Some(page));
    }
    conn.execute(
        "UPDATE payment_page SET paid_at = ?2 WHERE id = ?1 AND paid_at IS NULL",
        params![id, now],
    )?;
    find(conn, now, id)
}

/// What a `pay_order` round of the user finds of page `id`.
pub fn state(conn: &UserConn<'_>, now: Millis, id: &str) -> Result<PageState> {
    if !well_formed(id) {
        return Ok(PageState::Missing);
    }
    let page = conn.query_opt(
        &format!("{SELECT_PAGE} WHERE p.id = ?1 AND p.user_id = ?2"),
        params![id, conn.user()],
        page_from_row,
    )?;
    Ok(match page {
        None => PageState::Missing,
        Some(page) if page.paid_at.is_some() => PageState::Paid(page),
        Some(page) => PageState::Waiting {
            expired: page.expires_at <= now,
            page,
        },
    })
}

/// Takes the payment made on page `id` for `order_no`, inside the write
/// that pays the order: the page must be the user's, paid on, for this
/// order and this amount, and not taken before.
pub fn take(conn: &UserConn<'_>, now: Millis, id: &str, order_no: &str, amount: Fen) -> Result<()> {
    let taken = conn.execute(
        "UPDATE payment_page SET taken_at = ?5
         WHERE id = ?1 AND user_id = ?2 AND order_no = ?3 AND amount_fen = ?4
           AND paid_at IS NOT NULL AND taken_at IS NULL",
        params![id, conn.user(), order_no, amount, now],
    )?;
    if taken == 1 {
        return Ok(());
    }
    Err(ShopError::invalid(
        "requestState",
        format!(
            "支付页面上没有可用于订单 {order_no}（应付 {amount} 分）的付款，未扣款；请重新调用 pay_order"
        ),
    ))
}
