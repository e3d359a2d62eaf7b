//! The shopper's saved addresses: the distinct receivers (name, phone,
//! address) of their own orders, the most recently used first. The shop
//! keeps no address book of its own; an order's receiver is what it
//! remembers, so an address changed with `change_address` is saved as well.
//!
//! `create_order` offers them when the shopper has more than one and the
//! call names no receiver (see `asking::address`).

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::Millis;
use crate::error::{Refusal, Result};
use crate::money::Fen;
use crate::orders::{self, OrderPlan, Receiver};
use crate::params::CreateOrderParams;
use crate::store::params;
use crate::users::UserConn;

/// The most addresses a question offers: the most recently used ones.
pub const MAX_OFFERED: i64 = 10;

/// One saved address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedAddress {
    /// A name for this receiver that stays the same between two requests:
    /// the start of a SHA-256 of its three fields. A form's choice carries
    /// it; numbering the list would name another address once a new order
    /// reorders it.
    pub id: String,
    pub receiver: Receiver,
    /// How a shopper reads it on a form: `张明 138****8000 上海市…`, the
    /// phone's middle digits hidden unless two addresses differ only there.
    pub title: String,
}

/// The user's saved addresses, the most recently used first, at most
/// [`MAX_OFFERED`].
pub fn saved(conn: &UserConn<'_>) -> Result<Vec<SavedAddress>> {
    let receivers = conn.query_all(
        "SELECT receiver_name, receiver_phone, receiver_address, MAX(created_at) AS last_used
         FROM orders WHERE user_id = ?1
         GROUP BY receiver_name, receiver_phone, receiver_address
         ORDER BY last_used DESC, receiver_name, receiver_phone, receiver_address
         LIMIT ?2",
        params![conn.user(), MAX_OFFERED],
        |row| {
            Ok(Receiver {
                name: row.get(0)?,
                phone: row.get(1)?,
                address: row.get(2)?,
            })
        },
    )?;
    let masked: Vec<String> = receivers.iter().map(|r| title(r, true)).collect();
    Ok(receivers
        .into_iter()
        .enumerate()
        .map(|(index, receiver)| {
            let unique = masked.iter().filter(|t| **t == masked[index]).count() == 1;
            SavedAddress {
                id: id_of(&receiver),
                title: if unique {
                    masked[index].clone()
                } else {
                    title(&receiver, false)
                },
                receiver,
            }
        })
        .collect())
}

/// The saved address named `id`; refused when the user has none by that
/// name (any more: `change_address` may have replaced it).
pub fn find(conn: &UserConn<'_>, id: &str) -> Result<Receiver> {
    saved(conn)?
        .into_iter()
        .find(|saved| saved.id == id)
        .map(|saved| saved.receiver)
        .ok_or_else(|| {
            Refusal::UnknownSavedAddress {
                address_id: id.to_owned(),
            }
            .into()
        })
}

/// What `create_order` asks the shopper to choose from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressOffer {
    pub addresses: Vec<SavedAddress>,
    /// The order's units and what it would cost, for the question's words.
    pub units: i64,
    pub pay: Fen,
}

/// The addresses to offer for an order of `p`: `None` when the arguments
/// name a receiver, when the user has at most one address, or when the
/// order would be refused anyway (it is then refused as before, unasked).
pub fn to_offer(
    conn: &UserConn<'_>,
    now: Millis,
    p: &CreateOrderParams,
) -> Result<Option<AddressOffer>> {
    // The order is planned only when there is a choice to offer.
    Ok(match choices(conn, p)? {
        Some(addresses) => offer_of(addresses, &orders::plan_create(conn, now, p)?),
        None => None,
    })
}

/// [`to_offer`] for an order already planned (`plan` is `p`'s).
pub fn offer_for(
    conn: &UserConn<'_>,
    p: &CreateOrderParams,
    plan: &OrderPlan,
) -> Result<Option<AddressOffer>> {
    Ok(choices(conn, p)?.and_then(|addresses| offer_of(addresses, plan)))
}

/// The saved addresses to choose from when `p` names no receiver and the
/// user has more than one.
fn choices(conn: &UserConn<'_>, p: &CreateOrderParams) -> Result<Option<Vec<SavedAddress>>> {
    let names_receiver =
        p.receiver_name.is_some() || p.receiver_phone.is_some() || p.receiver_address.is_some();
    if names_receiver {
        return Ok(None);
    }
    let addresses = saved(conn)?;
    Ok((addresses.len() >= 2).then_some(addresses))
}

/// The offer of `addresses` for `plan`, unless the order would be refused.
fn offer_of(addresses: Vec<SavedAddress>, plan: &OrderPlan) -> Option<AddressOffer> {
    plan.blockers.is_empty().then(|| AddressOffer {
        units: plan.lines.iter().map(|l| l.quantity).sum(),
        pay: plan.pay(),
        addresses,
    })
}

/// `p` sent to the saved address `id`.
pub fn sent_to(conn: &UserConn<'_>, p: &CreateOrderParams, id: &str) -> Result<CreateOrderParams> {
    let receiver = find(conn, id)?;
    Ok(CreateOrderParams {
        receiver_name: Some(receiver.name),
        receiver_phone: Some(receiver.phone),
        receiver_address: Some(receiver.address),
        ..p.clone()
    })
}

fn id_of(receiver: &Receiver) -> String {
    let mut hasher = Sha256::new();
    for field in [&receiver.name, &receiver.phone, &receiver.address] {
        hasher.update(field.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn title(receiver: &Receiver, mask: bool) -> String {
    let phone = if mask {
        masked_phone(&receiver.phone)
    } else {
        receiver.phone.clone()
    };
    format!("{} {} {}", receiver.name, phone, receiver.address)
}

/// `13800138000` as `138****8000`: the first three and the last four
/// characters; a number too short to hide anything is shown whole.
fn masked_phone(phone: &str) -> String {
    let chars: Vec<char> = phone.chars().collect();
    if chars.len() <= 7 {
        return phone.to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}****{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phone_shows_its_first_three_and_last_four_characters() {
        assert_eq!(masked_phone("13800138000"), "138****8000");
        assert_eq!(masked_phone("+86 138-0013-8000"), "+86****8000");
        assert_eq!(masked_phone("6543210"), "6543210");
    }
}
