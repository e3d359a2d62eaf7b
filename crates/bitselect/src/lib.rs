//! The Bit Select shop (比特严选): an electronics reseller's domain over its
//! own SQLite database, and an MCP server exposing it as nineteen tools: thirteen that read
//! and write, and a read-only preview of each write but `submit_ticket`.
//!
//! - [`Shop`] is the domain: open it on a data directory and call it
//!   directly (`shop.create_order(&params, key)`), or
//! - serve it over MCP: [`ShopServer`] is the rmcp handler; [`serve_io`]
//!   runs it over any byte stream (an in-process `tokio::io::duplex`),
//!   [`serve_stdio`] over stdin/stdout and [`serve_http`] over streamable
//!   HTTP. The `bitselect-mcp` binary wraps these with a command line.
//!
//! Every cart, order, coupon held, parcel and after-sale belongs to a user;
//! a [`Shop`] acts for one [`Caller`] (the demo user unless told otherwise)
//! and sees only that user's rows ([`users`], [`callers`]).
//!
//! Money is integer fen throughout ([`money`]); time comes from an
//! injectable [`Clock`].

pub mod addresses;
pub mod after_sale;
pub mod asking;
pub mod auth;
pub mod callers;
pub mod cart;
pub mod catalog;
pub mod cli;
pub mod clock;
pub mod coupons;
pub mod error;
pub mod idempotency;
mod known_users;
pub mod load_users;
pub mod logistics;
pub mod money;
pub mod order_events;
pub mod orders;
pub mod origins;
pub mod params;
#[cfg(feature = "service")]
pub mod pay_page;
pub mod payment_pages;
pub mod preview;
pub mod product_search;
mod search;
mod seed;
pub mod serve;
pub mod server;
mod shop;
pub mod shopper_words;
pub mod store;
pub mod tickets;
pub mod ucp;
pub mod users;

pub use auth::AuthConfig;
pub use callers::Callers;
pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{Refusal, ShopError};
#[cfg(feature = "service")]
pub use serve::{Bind, HEALTH_PATH, http_service, serve_http, serve_http_authenticated};
pub use serve::{HttpAccess, MCP_PATH, ServeError, serve_io, serve_stdio};
pub use server::ShopServer;
pub use shop::{DB_FILE, Shop, ShopStats, Written};
pub use store::SCHEMA_VERSION;
#[cfg(feature = "service")]
pub use store::{MAX_WAITING_CALLS, POOL_CONNECTIONS};
pub use users::{Caller, Subject};
