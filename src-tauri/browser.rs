//! Opens a page in the user's system browser, through Tauri's opener: a
//! page a server asked the user to visit (an MCP URL-mode request) or an
//! authorization server's sign-in page. The address always comes from the
//! core (a waiting request's, or the sign-in it began): the page never
//! names what is opened. Whatever the core gives is judged once more by
//! [`ragent::web_page`]: only a web page reaches the opener.

use ragent::AgentError;
use ragent::protocol::{ErrorCode, ErrorInfo};
use ragent::web_page::web_page;
use serde::{Serialize, Serializer};

use tauri::{AppHandle, Runtime};
use tauri_plugin_opener::OpenerExt;

#[derive(Debug, thiserror::Error)]
pub enum OpenUrlError {
    #[error(transparent)]
    Core(#[from] AgentError),
    #[error("cannot open the page in the browser: {0}")]
    Opener(#[from] tauri_plugin_opener::Error),
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

/// Hands `url` to the desktop's browser, if it is a web page; it returns
/// once the browser has it.
pub fn open<R: Runtime>(app: &AppHandle<R>, url: &str) -> Result<(), OpenUrlError> {
    let page = web_page(url).map_err(AgentError::from)?;
    app.opener().open_url(page.as_str(), None::<&str>)?;
    Ok(())
}
