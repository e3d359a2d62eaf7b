//! The agent core of the Bit Select shopping assistant: a model client, an
//! MCP hub, the confirmation policy, and durable pause and resume of tool
//! calls. No Tauri here: the desktop shell drives [`protocol`] types.

pub mod mcp;
pub mod policy;
pub mod protocol;
pub mod settings;
pub mod toolcall;
pub mod typescript;
