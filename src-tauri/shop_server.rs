//! The built-in shop: the `bitselect-mcp` binary that ships beside the app,
//! started by the core as a child process over stdio.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ragent::mcp::connect::StdioConnector;
use ragent::mcp::{PageOrigins, ServerEntry};

/// The shop's name in `server__tool` names and on cards.
pub const SHOP_SERVER_NAME: &str = "bitselect";
const SHOP_BINARY: &str = "bitselect-mcp";

#[derive(Debug, thiserror::Error)]
pub enum ShopServerError {
    #[error("cannot tell where the app is installed: {0}")]
    NoExecutable(#[source] std::io::Error),
    #[error(
        "the shop server {0} is missing; it ships beside the app (build it with `cargo build -p bitselect --bin bitselect-mcp`)"
    )]
    Missing(PathBuf),
}

/// The shop binary installed beside the app's own executable: in a package
/// both live in the same bin directory, in a build both in target/<profile>.
pub fn locate_beside(app_executable: &Path) -> Result<PathBuf, ShopServerError> {
    let dir = app_executable.parent().unwrap_or(Path::new("."));
    let candidate = dir.join(SHOP_BINARY);
    if candidate.is_file() {
        Ok(candidate)
    } else {
        Err(ShopServerError::Missing(candidate))
    }
}

/// The shop as a trusted server of the core, keeping its data in `data_dir`
/// and its stderr in `mcp-bitselect.log` in `log_dir`, like any server's.
pub fn entry(binary: &Path, data_dir: &Path, log_dir: &Path) -> ServerEntry {
    let args = vec!["--data-dir".to_owned(), data_dir.display().to_string()];
    let connector = StdioConnector::new(
        SHOP_SERVER_NAME,
        &binary.display().to_string(),
        args,
        Vec::new(),
    )
    .with_stderr_log(log_dir);
    ServerEntry {
        name: SHOP_SERVER_NAME.to_owned(),
        trusted: true,
        call_timeout: None,
        pages: PageOrigins::none(),
        ucp: None,
        connector: Arc::new(connector),
    }
}

/// Finds the shop binary for the running app.
pub fn locate() -> Result<PathBuf, ShopServerError> {
    let exe = std::env::current_exe().map_err(ShopServerError::NoExecutable)?;
    locate_beside(&exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shop_is_found_beside_the_app() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SHOP_BINARY), b"").unwrap();
        let found = locate_beside(&dir.path().join("bitselect-assistant")).unwrap();
        assert_eq!(found, dir.path().join(SHOP_BINARY));
    }

    #[test]
    fn a_missing_shop_is_reported_with_its_expected_path() {
        let dir = tempfile::tempdir().unwrap();
        let error = locate_beside(&dir.path().join("bitselect-assistant")).unwrap_err();
        assert!(
            matches!(&error, ShopServerError::Missing(path) if path == &dir.path().join(SHOP_BINARY)),
            "{error}"
        );
    }

    #[test]
    fn the_shop_is_trusted_and_named_for_its_tools() {
        let entry = entry(
            Path::new("/usr/bin/bitselect-mcp"),
            Path::new("/data/shop"),
            Path::new("/data/logs"),
        );
        assert_eq!(entry.name, "bitselect");
        assert!(entry.trusted);
    }
}
