//! What the tests and the benchmarks share: one scripted model
//! ([`model::ScriptedModel`], with the turns it streams in [`turns`]) and
//! one way to start the real shop ([`shop`]), a real authorization server
//! with a browser's part of a sign-in ([`oauth`]) and a private PostgreSQL
//! cluster ([`postgres`]).

pub mod model;
pub mod oauth;
pub mod postgres;
pub mod shop;
pub mod turns;

pub use model::{Received, Reply, ScriptedModel};
