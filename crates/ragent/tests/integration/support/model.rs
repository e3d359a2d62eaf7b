//! The scripted model every test talks to, and the turns it streams: the
//! workspace's one, from `test-support`.

pub use test_support::model::{ScriptedModel, sse, sse_cut};
pub use test_support::turns::*;
