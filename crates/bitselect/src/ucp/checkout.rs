//! Checkout sessions of the commerce standard on the shop's own rules: the
//! same catalogue, prices, stock, coupons and saved addresses as the
//! shop's tools, planned by the same functions (`orders::plan_lines`,
//! `orders::plan_coupon`, `addresses::saved`).
//!
//! A session keeps only what the platform said (its lines, buyer,
//! destinations and discount codes, in `checkout_session.inputs`); what it
//! costs and whether it can be completed are worked out again at every
//! answer ([`super::checkout_view`]), so a price or stock change shows at
//! once. Create and update are full replacements of those inputs.

use serde::{Deserialize, Serialize};

use super::cart as ucp_cart;
use super::consent;
use super::signing_keys::CHECKOUT_LIFETIME_MS;
use crate::cart;
use crate::clock::Millis;
use crate::error::{Refusal, Result, ShopError};
use crate::orders;
use crate::payment_pages;
use crate::store::params;
use crate::users::UserConn;

/// The prefix of a checkout session's id; the rest is 128 random bits.
const ID_PREFIX: &str = "chk_";

/// The most destinations a platform may send for one checkout.
const MAX_DESTINATIONS: usize = 10;

/// The most discount codes a platform may send.
const MAX_CODES: usize = 10;

/// Where a checkout session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Open: its status (incomplete or ready) follows from its inputs.
    Open,
    Completed,
    Canceled,
}

impl SessionState {
    fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
        }
    }

    fn parse(text: &str) -> Result<Self> {
        match text {
            "open" => Ok(Self::Open),
            "completed" => Ok(Self::Completed),
            "canceled" => Ok(Self::Canceled),
            other => Err(ShopError::Corrupt(format!("结账会话状态未知：{other}"))),
        }
    }

    /// How the shopper reads a closed session's state.
    fn closed_word(self) -> Option<&'static str> {
        match self {
            Self::Open => None,
            Self::Completed => Some("完成"),
            Self::Canceled => Some("取消"),
        }
    }
}

// ---- What the platform sends on create and update ----

/// A create or update request: the platform's whole view of the checkout.
/// Members the shop does not act on (context, signals, payment, ...) are
/// accepted and left out.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckoutRequest {
    /// The shopper's cart to check out: its lines are the checkout's, and
    /// an open checkout of it already is the one answered.
    #[serde(default)]
    pub cart_id: Option<String>,
    #[serde(default)]
    pub line_items: Vec<LineItemRequest>,
    #[serde(default)]
    pub buyer: Option<Buyer>,
    #[serde(default)]
    pub fulfillment: Option<FulfillmentRequest>,
    #[serde(default)]
    pub discounts: Option<DiscountsRequest>,
}

impl CheckoutRequest {
    /// The request in `body`; a body of the wrong shape is an invalid
    /// argument naming what is wrong.
    pub fn from_body(body: &serde_json::Value) -> Result<Self> {
        Self::deserialize(body).map_err(|error| ShopError::invalid("body", error.to_string()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LineItemRequest {
    /// The line's id on an update (echoed from an earlier answer).
    #[serde(default)]
    pub id: Option<String>,
    pub item: ItemRequest,
    pub quantity: i64,
}

/// The item of a line: its SKU code.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ItemRequest {
    pub id: String,
}

/// Who is buying, as the platform says; echoed back, not checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buyer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    /// The buyer's consent decisions, by purpose (the buyer consent
    /// extension), checked against the purposes the shop offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<consent::Decisions>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct FulfillmentRequest {
    #[serde(default)]
    pub methods: Vec<MethodRequest>,
}

/// A fulfillment method as the platform sends it; the shop ships only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct MethodRequest {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub destinations: Vec<PostalDestination>,
    #[serde(default)]
    pub selected_destination_id: Option<String>,
}

/// A shipping address the platform gives (the standard's postal address).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostalDestination {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_locality: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub street_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
}

impl PostalDestination {
    /// The receiver an order to it would carry, by the order's own rules;
    /// `Err` says which part is missing or malformed.
    pub fn receiver(&self) -> Result<orders::Receiver> {
        if !matches!(self.address_country.as_deref(), Some("CN" | "CHN" | "中国")) {
            return Err(ShopError::invalid(
                "address_country",
                "比特严选只配送中国大陆地址（address_country 为 CN）",
            ));
        }
        let name: String = [&self.last_name, &self.first_name]
            .into_iter()
            .flatten()
            .map(|part| part.trim())
            .collect();
        let address: String = [
            &self.address_region,
            &self.address_locality,
            &self.street_address,
            &self.extended_address,
        ]
        .into_iter()
        .flatten()
        .map(|part| part.trim())
        .collect();
        let missing = |field: &str| ShopError::invalid(field, "收货地址缺少这一项");
        if name.is_empty() {
            return Err(missing("first_name"));
        }
        let phone = self
            .phone_number
            .as_deref()
            .ok_or_else(|| missing("phone_number"))?;
        if address.is_empty() {
            return Err(missing("street_address"));
        }
        orders::receiver_from(None, Some(&name), Some(phone), Some(&address))?
            .ok_or_else(|| missing("street_address"))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct DiscountsRequest {
    #[serde(default)]
    pub codes: Vec<String>,
}

// ---- What a session keeps ----

/// The platform's inputs, as stored: everything else is worked out again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs {
    pub lines: Vec<InputLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<Buyer>,
    /// Destinations the platform gave, each with an id.
    #[serde(default)]
    pub destinations: Vec<PostalDestination>,
    /// A platform destination's id or a saved address's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_destination: Option<String>,
    #[serde(default)]
    pub codes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputLine {
    pub id: String,
    pub sku: String,
    pub quantity: i64,
}

impl Inputs {
    /// The request's inputs, checked as an order's would be: at least one
    /// line, at most the order's number of lines, quantities in range, no
    /// SKU twice; destinations and codes bounded.
    pub fn from_request(request: &CheckoutRequest) -> Result<Self> {
        if request.line_items.is_empty() {
            return Err(ShopError::invalid("line_items", "至少要有一件商品"));
        }
        let checked = orders::check_lines(
            "line_items",
            request
                .line_items
                .iter()
                .map(|line| (line.item.id.as_str(), line.quantity)),
        )?;
        let mut lines = Vec::with_capacity(checked.len());
        for (index, ((sku, quantity), asked)) in
            checked.into_iter().zip(&request.line_items).enumerate()
        {
            let id = asked
                .id
                .clone()
                .filter(|id| is_plain_id(id) && !lines.iter().any(|l: &InputLine| &l.id == id))
                .unwrap_or_else(|| format!("li_{}", index + 1));
            lines.push(InputLine { id, sku, quantity });
        }
        let method = request
            .fulfillment
            .as_ref()
            .and_then(|f| {
                f.methods
                    .iter()
                    .find(|m| m.kind.as_deref().is_none_or(|kind| kind == "shipping"))
            })
            .cloned()
            .unwrap_or_default();
        if method.destinations.len() > MAX_DESTINATIONS {
            return Err(ShopError::invalid(
                "fulfillment.methods.destinations",
                format!("最多 {MAX_DESTINATIONS} 个收货地址"),
            ));
        }
        let destinations = method
            .destinations
            .into_iter()
            .enumerate()
            .map(|(index, mut destination)| {
                let id = destination
                    .id
                    .take()
                    .filter(|id| is_plain_id(id))
                    .unwrap_or_else(|| format!("dest_{}", index + 1));
                destination.id = Some(id);
                destination
            })
            .collect();
        let codes: Vec<String> = request
            .discounts
            .as_ref()
            .map(|d| d.codes.iter().map(|c| c.trim().to_uppercase()).collect())
            .unwrap_or_default();
        if codes.len() > MAX_CODES {
            return Err(ShopError::invalid(
                "discounts.codes",
                format!("最多 {MAX_CODES} 个优惠码"),
            ));
        }
        if let Some(decisions) = request.buyer.as_ref().and_then(|b| b.consent.as_ref()) {
            consent::check(decisions)?;
        }
        Ok(Self {
            lines,
            buyer: request.buyer.clone(),
            destinations,
            selected_destination: method.selected_destination_id,
            codes,
        })
    }
}

/// An id the platform chose that the shop will echo: short, printable.
fn is_plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A stored checkout session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    pub state: SessionState,
    pub inputs: Inputs,
    pub order_no: Option<String>,
    /// The signed checkout a completion answered, which every later read
    /// answers again: a completed checkout does not change.
    pub receipt: Option<String>,
    pub created_at: Millis,
    pub expires_at: Millis,
}

impl Session {
    /// Whether it is still open at `now`: not completed, canceled or
    /// past its expiry.
    pub fn open_at(&self, now: Millis) -> bool {
        self.state == SessionState::Open && now < self.expires_at
    }

    /// The refusal for changing it when it is closed at `now`.
    pub fn refuse_change(&self, now: Millis, action: &'static str) -> Result<()> {
        let state = if self.state == SessionState::Open && now >= self.expires_at {
            SessionState::Canceled
        } else {
            self.state
        };
        match state.closed_word() {
            None => Ok(()),
            Some(status) => Err(Refusal::CheckoutClosed {
                id: self.id.clone(),
                status,
                action,
            }
            .into()),
        }
    }
}

/// Starts a session for the user with the request's inputs.
pub fn create(conn: &UserConn<'_>, now: Millis, request: &CheckoutRequest) -> Result<Session> {
    let mut request = request.clone();
    if let Some(cart_id) = &request.cart_id {
        ucp_cart::check_id(conn, cart_id)?;
        if let Some(open) = open_for_cart(conn, now, cart_id)? {
            return Ok(open);
        }
        // The cart's lines, whatever the request's say.
        request.line_items = cart::view(conn)?
            .lines
            .into_iter()
            .map(|line| LineItemRequest {
                id: None,
                item: ItemRequest { id: line.sku_code },
                quantity: line.quantity,
            })
            .collect();
    }
    let inputs = Inputs::from_request(&request)?;
    let id = format!("{ID_PREFIX}{}", payment_pages::new_id()?);
    conn.execute(
        "INSERT INTO checkout_session (id, user_id, state, inputs, cart_id, created_at,
                                       updated_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
        params![
            id,
            conn.user(),
            SessionState::Open.as_str(),
            serde_json::to_string(&inputs)?,
            request.cart_id,
            now,
            now + CHECKOUT_LIFETIME_MS
        ],
    )?;
    get(conn, &id)
}

/// The open, unexpired checkout of the user's cart `cart_id`, if any.
fn open_for_cart(conn: &UserConn<'_>, now: Millis, cart_id: &str) -> Result<Option<Session>> {
    let id: Option<String> = conn.query_opt(
        "SELECT id FROM checkout_session
         WHERE user_id = ?1 AND cart_id = ?2 AND state = ?3 AND expires_at > ?4
         ORDER BY created_at DESC LIMIT 1",
        params![conn.user(), cart_id, SessionState::Open.as_str(), now],
        |row| row.get(0),
    )?;
    id.map(|id| get(conn, &id)).transpose()
}

/// The user's session `id`; refused when they have none by that id.
pub fn get(conn: &UserConn<'_>, id: &str) -> Result<Session> {
    let unknown = || Refusal::UnknownCheckout { id: id.to_owned() };
    // Anything not shaped like an id the shop makes is unknown, unqueried.
    if !id
        .strip_prefix(ID_PREFIX)
        .is_some_and(payment_pages::well_formed)
    {
        return Err(unknown().into());
    }
    conn.query_opt(
        "SELECT state, inputs, order_no, receipt, created_at, expires_at FROM checkout_session
         WHERE id = ?1 AND user_id = ?2",
        params![id, conn.user()],
        |row| {
            Ok(Session {
                id: id.to_owned(),
                state: SessionState::parse(&row.get::<String>(0)?)?,
                inputs: serde_json::from_str(&row.get::<String>(1)?)?,
                order_no: row.get(2)?,
                receipt: row.get(3)?,
                created_at: row.get(4)?,
                expires_at: row.get(5)?,
            })
        },
    )?
    .ok_or_else(|| unknown().into())
}

/// Replaces the session's inputs with the request's; refused once the
/// session is completed, canceled or expired.
pub fn update(
    conn: &UserConn<'_>,
    now: Millis,
    id: &str,
    request: &CheckoutRequest,
) -> Result<Session> {
    let session = get(conn, id)?;
    session.refuse_change(now, "更新")?;
    let inputs = Inputs::from_request(request)?;
    conn.execute(
        "UPDATE checkout_session SET inputs = ?1, updated_at = ?2 WHERE id = ?3 AND user_id = ?4",
        params![serde_json::to_string(&inputs)?, now, id, conn.user()],
    )?;
    get(conn, id)
}

/// Marks an open session completed by `order_no`, keeping `receipt`
/// (the signed checkout answered) for every later read.
pub fn mark_completed(
    conn: &UserConn<'_>,
    now: Millis,
    id: &str,
    order_no: &str,
    receipt: &str,
) -> Result<()> {
    conn.execute(
        "UPDATE checkout_session SET state = ?1, order_no = ?2, receipt = ?3, updated_at = ?4
         WHERE id = ?5 AND user_id = ?6",
        params![
            SessionState::Completed.as_str(),
            order_no,
            receipt,
            now,
            id,
            conn.user()
        ],
    )?;
    Ok(())
}

/// Cancels an open session; refused once it is completed or canceled.
pub fn cancel(conn: &UserConn<'_>, now: Millis, id: &str) -> Result<Session> {
    let session = get(conn, id)?;
    session.refuse_change(now, "取消")?;
    conn.execute(
        "UPDATE checkout_session SET state = ?1, updated_at = ?2 WHERE id = ?3 AND user_id = ?4",
        params![SessionState::Canceled.as_str(), now, id, conn.user()],
    )?;
    get(conn, id)
}
