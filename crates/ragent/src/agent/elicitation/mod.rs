//! A server's requests for the user's input in the middle of a call (MCP
//! elicitation): judged and named (`judge`), stored with their call
//! (`stored`), put before the user while their call waits on its server's connection (`live`), and answered
//! where they wait (`route`).

pub(crate) mod judge;
pub(crate) mod live;
pub(crate) mod route;
pub(crate) mod stored;
