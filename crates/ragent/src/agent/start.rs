//! How a run begins: what the entry points (a message, a reply to a card,
//! an answer to a server's request, a retry) hand to the run loop.

use crate::agent::tools::ToolIndex;

pub(crate) enum Start {
    /// Answer the latest user message.
    Fresh,
    /// Run a batch whose card was fully decided, then continue; `tools`:
    /// the listing the reply was checked against, when it was listed, so
    /// the run does not list the servers' tools again.
    ResumeBatch {
        reply_id: String,
        tools: Option<ToolIndex>,
    },
    /// Send a call again with the user's answer to its server's request
    /// for input, run the rest of its batch, then continue.
    ResumeInput { call_id: String },
}
