//! The app as a Universal Commerce Protocol platform: what it reads of a
//! merchant (its profile and the keys it signs checkouts with), what a
//! card shows of a signed checkout and whether it is payable, and the
//! shopper's device key that signs the mandate when they approve.

pub mod binding;
pub mod checkout_card;
pub mod device;
pub mod evidence;
pub mod evidence_report;
pub mod platform;
pub mod profile;
