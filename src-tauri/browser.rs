//! Opens a page a server asked the user to visit (an MCP URL-mode request)
//! in the user's browser. The address comes from the core, which gives
//! only one a waiting request holds: the page never names what is opened.

use ragent::AgentError;
use ragent::protocol::{ErrorCode, ErrorInfo};
use serde::{Serialize, Serializer};

use crate::logs_folder::OPENER;

#[derive(Debug, thiserror::Error)]
pub enum OpenUrlError {
    #[error(transparent)]
    Core(#[from] AgentError),
    #[error("cannot start {opener} to open the page: {source}")]
    Spawn {
        opener: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// Reaches the page as `{ code, message }`, like the core's errors.
impl Serialize for OpenUrlError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            OpenUrlError::Core(error) => error.serialize(serializer),
            other => ErrorInfo::new(ErrorCode::Internal, other.to_string()).serialize(serializer),
        }
    }
}

/// Hands `url` to the desktop's opener; it returns once the browser has it.
pub async fn open(url: &str) -> Result<(), OpenUrlError> {
    tokio::process::Command::new(OPENER)
        .arg(url)
        .spawn()
        .map_err(|source| OpenUrlError::Spawn {
            opener: OPENER,
            source,
        })?;
    Ok(())
}
