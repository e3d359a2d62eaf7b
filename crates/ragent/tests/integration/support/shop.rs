//! The real shop, `bitselect-mcp`, run over stdio as the app runs it (the
//! workspace's one way, from `test-support`), under the name `shop`.

use std::path::{Path, PathBuf};

use ragent::mcp::ServerEntry;
pub use test_support::shop::{IPHONE, ShopDb};

/// The shop binary, built once per test process.
pub fn shop_binary() -> PathBuf {
    test_support::shop::built_shop_binary().expect("the shop binary")
}

/// The shop as the app's built-in server, its data in `data_dir`.
pub fn shop_entry(data_dir: &Path) -> ServerEntry {
    test_support::shop::shop_entry("shop", &shop_binary(), data_dir).expect("the shop's entry")
}
