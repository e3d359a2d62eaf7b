//! What the tests and the benchmarks share: one scripted model
//! ([`model::ScriptedModel`], with the turns it streams in [`turns`]) and
//! one way to start the real shop ([`shop`]).

pub mod model;
pub mod shop;
pub mod turns;

pub use model::{Received, Reply, ScriptedModel};
