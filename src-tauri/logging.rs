//! The app's log: to stderr as before, and to a file in the log directory
//! that rolls over daily and keeps the last week, so it stays bounded.
//! Each MCP server's own stderr goes to `mcp-<server>.log` beside it (the
//! core writes those).

use std::io::IsTerminal;
use std::path::Path;

use tracing_appender::rolling::{InitError, RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The app's log files are `<prefix>.<date>.log`.
pub const APP_LOG_PREFIX: &str = "bitselect-assistant";
const APP_LOG_SUFFIX: &str = "log";
/// Daily files kept; older ones are deleted as new days begin.
const KEPT_DAYS: usize = 7;
/// What is logged unless `RUST_LOG` says otherwise.
pub const DEFAULT_FILTER: &str = "info";

#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("cannot write logs to {dir}: {source}")]
    Dir {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the log file: {0}")]
    File(#[from] InitError),
    #[error("logging was already set up in this process")]
    AlreadySet(#[from] tracing_subscriber::util::TryInitError),
}

/// `RUST_LOG` if set, else [`DEFAULT_FILTER`].
pub fn filter_from_env() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER))
}

/// Sends this process's logs to stderr and to a rolling file in `log_dir`.
pub fn init(log_dir: &Path, filter: EnvFilter) -> Result<(), LoggingError> {
    std::fs::create_dir_all(log_dir).map_err(|source| LoggingError::Dir {
        dir: log_dir.display().to_string(),
        source,
    })?;
    let file = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(APP_LOG_PREFIX)
        .filename_suffix(APP_LOG_SUFFIX)
        .max_log_files(KEPT_DAYS)
        .build(log_dir)?;
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::stderr().is_terminal())
                .with_writer(std::io::stderr),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(file),
        )
        .try_init()?;
    Ok(())
}

/// Logs to stderr only, when the log directory cannot be written.
pub fn init_stderr_only(filter: EnvFilter) {
    // Nothing to report to if this fails: no logging is set up.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
