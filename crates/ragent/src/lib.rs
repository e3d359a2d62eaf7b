//! The agent core of the Bit Select shopping assistant: a model client, an
//! MCP hub, the confirmation policy, and durable pause and resume of tool
//! calls. No Tauri here: the desktop shell calls [`Agent`] and shares the
//! [`protocol`] types with the page.

pub mod agent;
pub mod argument_labels;
pub mod clock;
pub mod elicitation;
pub mod error;
pub mod hashing;
pub mod history;
pub mod instructions;
pub mod llm;
pub mod mcp;
pub mod policy;
pub mod protocol;
pub mod runtime;
pub mod schema;
pub mod secrets;
pub mod settings;
pub mod settings_view;
// The store is the core's own: a front end reaches it only through
// `Agent`. The benchmarks and the tests that inspect rows turn on
// `internals`.
#[cfg(feature = "internals")]
pub mod store;
#[cfg(not(feature = "internals"))]
mod store;
pub mod toolcall;
pub mod typescript;
pub mod web_page;

pub use agent::{Agent, AgentConfig, RecoveryReport};
pub use error::AgentError;
