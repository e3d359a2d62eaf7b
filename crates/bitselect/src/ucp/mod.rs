//! The shop as a Universal Commerce Protocol business: what the standard
//! asks of a merchant beyond the shop's own tools.
//!
//! - [`jws`]: detached ES256 signatures over canonical JSON
//!   ([`crate::jcs`]), and the public keys (JWK) they verify with;
//! - [`signing_keys`]: the merchant's keys, kept in the shop's database so
//!   that every instance signs with and publishes the same set;
//! - [`checkout`]: checkout sessions on the shop's own order rules, and
//!   [`checkout_view`], the standard's checkout object drawn from one.

pub mod checkout;
pub mod checkout_view;
pub mod jws;
pub mod signing_keys;
