//! The real shop, `bitselect-mcp`, run over stdio as the app runs it, and
//! its database read directly to check what a test did to it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use ragent::mcp::ServerEntry;
use ragent::mcp::connect::StdioConnector;
use rusqlite::{Connection, OptionalExtension, params};

pub const IPHONE: &str = "MG6W4CH/A";

/// Builds the shop binary once per test process, in the target directory
/// these tests were built in, and returns its path. Cargo only offers
/// `CARGO_BIN_EXE_*` for the package under test, so ask cargo directly.
/// It asks for the very build scripts/test makes first (the whole
/// workspace, all targets): one feature resolution, so that this finds
/// everything fresh instead of building the shop's dependencies again.
pub fn shop_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            // target/<profile>/deps/<test binary>
            let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
            let target_dir = profile_dir.parent().unwrap().to_path_buf();
            let mut cargo = Command::new(env!("CARGO"));
            cargo
                .args(["build", "--quiet", "--workspace", "--all-targets"])
                .env("CARGO_TARGET_DIR", &target_dir)
                .current_dir(env!("CARGO_MANIFEST_DIR"));
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                cargo.arg("--release");
            }
            let status = cargo.status().expect("cargo runs");
            assert!(status.success(), "building bitselect-mcp failed");
            let binary = profile_dir.join(format!("bitselect-mcp{}", std::env::consts::EXE_SUFFIX));
            assert!(binary.exists(), "{} was not built", binary.display());
            binary
        })
        .clone()
}

/// The shop as the app's built-in server, its data in `data_dir`.
pub fn shop_entry(data_dir: &Path) -> ServerEntry {
    let connector = StdioConnector::new(
        "shop",
        shop_binary().to_str().unwrap(),
        vec!["--data-dir".into(), data_dir.to_str().unwrap().into()],
        vec![("RUST_LOG".into(), "warn".into())],
    );
    ServerEntry {
        name: "shop".into(),
        trusted: true,
        connector: Arc::new(connector),
    }
}

/// Read access to the shop's database.
pub struct ShopDb {
    conn: Connection,
}

impl ShopDb {
    pub fn open(data_dir: &Path) -> ShopDb {
        ShopDb {
            conn: Connection::open(data_dir.join("shop.db")).unwrap(),
        }
    }

    pub fn stock(&self, sku: &str) -> i64 {
        self.conn
            .query_row(
                "SELECT stock FROM sku WHERE sku_code = ?1",
                params![sku],
                |r| r.get(0),
            )
            .unwrap()
    }

    /// The cart quantity of a SKU (0 when it is not in the cart).
    pub fn cart_quantity(&self, sku: &str) -> i64 {
        self.conn
            .query_row(
                "SELECT quantity FROM cart_item WHERE sku_code = ?1",
                params![sku],
                |r| r.get(0),
            )
            .optional()
            .unwrap()
            .unwrap_or(0)
    }

    pub fn order_count(&self) -> i64 {
        self.conn
            .query_row("SELECT count(*) FROM orders", [], |r| r.get(0))
            .unwrap()
    }

    /// Orders holding this SKU: (order number, status, quantity).
    pub fn orders_of(&self, sku: &str) -> Vec<(String, String, i64)> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT o.order_no, o.status, i.quantity FROM orders o
                 JOIN order_item i ON i.order_no = o.order_no
                 WHERE i.sku_code = ?1 ORDER BY o.order_no",
            )
            .unwrap();
        stmt.query_map(params![sku], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}
