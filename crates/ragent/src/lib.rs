//! The agent core.
