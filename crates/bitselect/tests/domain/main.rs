//! The shop's rules, exercised on the domain API with a clock that stands
//! still at the moment of seeding. One test binary with a module a topic:
//! a binary a topic would link the shop once per topic and build slower.

#[path = "../support/mod.rs"]
mod support;

mod addresses;
mod after_sale;
mod cart;
mod catalog;
mod checkout;
mod complete;
mod coupons;
mod devices;
mod idempotency;
mod logistics;
mod money;
mod order_changes;
mod order_events;
mod orders;
mod previews;
mod relevance;
mod seed;
mod signing;
mod tickets;
