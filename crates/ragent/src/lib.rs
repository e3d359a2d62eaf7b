//! The agent core of the Bit Select shopping assistant: a model client, an
//! MCP hub, the confirmation policy, and durable pause and resume of tool
//! calls. No Tauri here: the desktop shell calls [`Agent`] and shares the
//! [`protocol`] types with the page.

// The face a front end uses: the agent and its settings, the protocol it
// shares with the page, the servers it configures, and the pieces an
// `AgentConfig` is built from.
pub mod agent;
pub mod clock;
pub mod error;
pub mod llm;
pub mod mcp;
pub mod policy;
pub mod protocol;
pub mod runtime;
pub mod secrets;
pub mod settings;
pub mod settings_view;
pub mod toolcall;
pub mod ucp;
pub mod web_page;

// The core's own workings.
mod argument_labels;
mod elicitation;
mod hashing;
mod redact;
mod schema;
// The page's TypeScript types, written from the protocol by a test.
#[cfg(test)]
mod parser_properties;
#[cfg(test)]
mod typescript;

// The store, the history's fitting and the model's instructions are the
// core's own too: a front end reaches them only through `Agent`. The
// benchmarks and the tests that inspect rows turn on `internals`, the one
// door to them.
#[cfg(feature = "internals")]
pub mod history;
#[cfg(not(feature = "internals"))]
mod history;
#[cfg(feature = "internals")]
pub mod instructions;
#[cfg(not(feature = "internals"))]
mod instructions;
#[cfg(feature = "internals")]
pub mod store;
#[cfg(not(feature = "internals"))]
mod store;

pub use agent::{Agent, AgentConfig, RecoveryReport};
pub use error::AgentError;
