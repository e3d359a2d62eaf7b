//! The real shop, `bitselect-mcp`, as the app runs it (the workspace's one
//! way, `test_support::shop`): a trusted built-in server named `bitselect`
//! over stdio, its data in a directory of its own.

use std::path::{Path, PathBuf};

use ragent::mcp::ServerEntry;
pub use test_support::shop::IPHONE;
use test_support::shop::{ShopError, path_text, shop_binary_beside_me, shop_entry_via};

use crate::BenchError;

/// The server name the app gives the shop (`bitselect__search_product`).
pub const SHOP_SERVER: &str = "bitselect";

fn setup(error: ShopError) -> BenchError {
    BenchError::Setup(error.to_string())
}

/// The shop binary cargo built beside this one (`target/<profile>/`).
pub fn shop_binary() -> Result<PathBuf, BenchError> {
    shop_binary_beside_me().map_err(setup)
}

/// The shop as the app configures it, logging only warnings.
pub fn shop_entry(data_dir: &Path) -> Result<ServerEntry, BenchError> {
    shop_entry_via(SHOP_SERVER, &shop_binary()?, Vec::new(), data_dir).map_err(setup)
}

/// The shop behind this binary's `stdio-proxy`, which notes the moment
/// each `tools/call` line arrives at the server's stdin in `arrivals`.
pub fn proxied_shop_entry(data_dir: &Path, arrivals: &Path) -> Result<ServerEntry, BenchError> {
    let me = std::env::current_exe().map_err(|e| BenchError::io(Path::new("current exe"), e))?;
    let args = vec![
        "stdio-proxy".to_string(),
        "--arrivals".to_string(),
        path_text(arrivals).map_err(setup)?,
        "--".to_string(),
        path_text(&shop_binary()?).map_err(setup)?,
    ];
    shop_entry_via(SHOP_SERVER, &me, args, data_dir).map_err(setup)
}
