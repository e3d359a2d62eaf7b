//! What the tests and the benchmarks share: one scripted model
//! ([`model::ScriptedModel`], with the turns it streams in [`turns`]) and
//! one way to start the real shop ([`shop`]), and a real authorization
//! server with a browser's part of a sign-in ([`oauth`]).

pub mod model;
pub mod oauth;
pub mod shop;
pub mod turns;

pub use model::{Received, Reply, ScriptedModel};
