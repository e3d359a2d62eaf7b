//! The real shop, `bitselect-mcp`, as the app runs it: a trusted built-in
//! server named `bitselect` over stdio, its data in a directory of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ragent::mcp::ServerEntry;
use ragent::mcp::connect::StdioConnector;

use crate::BenchError;

/// The server name the app gives the shop (`bitselect__search_product`).
pub const SHOP_SERVER: &str = "bitselect";
const SHOP_BINARY: &str = "bitselect-mcp";

/// A SKU with stock, used by the read and write calls.
pub const IPHONE: &str = "MG6W4CH/A";

/// The shop binary cargo built beside this one (`target/<profile>/`).
pub fn shop_binary() -> Result<PathBuf, BenchError> {
    let exe = std::env::current_exe().map_err(|e| BenchError::io(Path::new("current exe"), e))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidate = dir.join(format!("{SHOP_BINARY}{}", std::env::consts::EXE_SUFFIX));
    if candidate.is_file() {
        Ok(candidate)
    } else {
        Err(BenchError::Setup(format!(
            "{} is missing: build it with `cargo build --release -p bitselect --bin bitselect-mcp`",
            candidate.display()
        )))
    }
}

fn path_text(path: &Path) -> Result<String, BenchError> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| BenchError::Setup(format!("not UTF-8: {}", path.display())))
}

/// The shop as the app configures it, logging only warnings.
pub fn shop_entry(data_dir: &Path) -> Result<ServerEntry, BenchError> {
    let binary = path_text(&shop_binary()?)?;
    let args = vec!["--data-dir".to_string(), path_text(data_dir)?];
    Ok(entry(StdioConnector::new(
        SHOP_SERVER,
        &binary,
        args,
        quiet(),
    )))
}

/// The shop behind this binary's `stdio-proxy`, which notes the moment
/// each `tools/call` line arrives at the server's stdin in `arrivals`.
pub fn proxied_shop_entry(data_dir: &Path, arrivals: &Path) -> Result<ServerEntry, BenchError> {
    let me = std::env::current_exe().map_err(|e| BenchError::io(Path::new("current exe"), e))?;
    let args = vec![
        "stdio-proxy".to_string(),
        "--arrivals".to_string(),
        path_text(arrivals)?,
        "--".to_string(),
        path_text(&shop_binary()?)?,
        "--data-dir".to_string(),
        path_text(data_dir)?,
    ];
    Ok(entry(StdioConnector::new(
        SHOP_SERVER,
        &path_text(&me)?,
        args,
        quiet(),
    )))
}

fn quiet() -> Vec<(String, String)> {
    vec![("RUST_LOG".into(), "warn".into())]
}

fn entry(connector: StdioConnector) -> ServerEntry {
    ServerEntry {
        name: SHOP_SERVER.into(),
        trusted: true,
        connector: Arc::new(connector),
    }
}
