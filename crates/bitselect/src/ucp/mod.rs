//! The shop as a Universal Commerce Protocol business: what the standard
//! asks of a merchant beyond the shop's own tools.
//!
//! - [`names`]: the protocol's version, capability names and paths;
//! - [`signing_keys`]: the merchant's keys (the signatures themselves are
//!   the `ap2` crate's), kept in the shop's database so that every
//!   instance signs with and publishes the same set;
//! - [`cart`]: the shopper's own cart in the standard's words;
//! - [`catalog`]: the catalogue searched and looked up in the standard's
//!   words;
//! - [`checkout`]: checkout sessions on the shop's own order rules, and
//!   [`checkout_view`], the standard's checkout object drawn from one;
//! - [`consent`]: the buyer consent extension's purposes and the buyer's
//!   decisions;
//! - [`devices`]: the users' device keys, whose signatures prove consent;
//! - [`complete`]: the completion that requires the shopper's checkout
//!   mandate;
//! - [`negotiation`]: the platform's profile fetched and the capabilities
//!   both have (and the platform's order webhook);
//! - [`order_view`]: an order a checkout placed, as the standard's order,
//!   and [`webhooks`], its events signed for the platform, which
//!   [`webhook_sender`] posts;
//! - [`rest`] and [`mcp`]: the checkout over the REST and MCP bindings,
//!   and [`profile`], the business profile at `/.well-known/ucp`;
//! - [`failure`]: the standard's error answers.

pub mod cart;
pub mod catalog;
pub mod checkout;
pub mod checkout_view;
pub mod complete;
pub mod consent;
pub mod devices;
pub mod failure;
#[cfg(feature = "service")]
pub mod mcp;
pub mod names;
pub mod negotiation;
pub mod order_view;
pub mod profile;
#[cfg(feature = "service")]
pub mod rest;
pub mod signing_keys;
pub mod webhook_sender;
pub mod webhooks;
