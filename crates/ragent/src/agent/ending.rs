//! How a call ended, as it is stored: its status, what the model reads,
//! and the server's structured result.

use serde_json::Value;

use crate::toolcall::CallStatus;

/// How a call ended.
pub(crate) struct Ending {
    pub status: CallStatus,
    pub output: String,
    pub is_error: bool,
    pub structured: Option<Value>,
}

impl Ending {
    /// An ending with no result from the server: `output` says why.
    pub(crate) fn error(status: CallStatus, output: String) -> Ending {
        Ending {
            status,
            output,
            is_error: true,
            structured: None,
        }
    }

    /// A failure with no result from the server: `output` says why.
    pub(crate) fn failed(output: String) -> Ending {
        Ending::error(CallStatus::Failed, output)
    }
}
