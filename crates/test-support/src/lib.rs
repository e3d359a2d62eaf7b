//! What the tests and the benchmarks share: one scripted model
//! ([`model::ScriptedModel`], with the turns it streams in [`turns`]) and
//! one way to start the real shop ([`shop`]); and the shop as a service: a
//! real authorization server with a browser's part of a sign-in
//! ([`oauth`]) and a shopper's whole sign-in ([`sign_in`]), a private
//! PostgreSQL cluster ([`postgres`]), `bitselect-mcp --http` instances
//! ([`shop_process`]) and HAProxy in front of them ([`balancer`]); and
//! a small filesystem a test can fill ([`small_disk`]) and a slow way to
//! the database ([`slow_link`]); and a data directory's settings saved
//! before the app starts ([`settings`]).

pub mod balancer;
pub mod model;
pub mod oauth;
pub mod ports;
pub mod postgres;
pub mod settings;
pub mod shop;
pub mod shop_process;
pub mod sign_in;
pub mod slow_link;
pub mod small_disk;
pub mod turns;

pub use model::{Received, Reply, ScriptedModel};
