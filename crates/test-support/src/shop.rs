//! The real shop, `bitselect-mcp`, started the one way the app starts it:
//! a trusted built-in server over stdio, its data in a directory of its
//! own, logging only warnings. Its database can be read directly to check
//! what a test did to it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use ragent::mcp::connect::StdioConnector;
use ragent::mcp::{PageOrigins, ServerEntry};
use rusqlite::{Connection, OptionalExtension, params};

/// A SKU with stock, used by read and write calls alike.
pub const IPHONE: &str = "MG6W4CH/A";
const SHOP_BINARY: &str = "bitselect-mcp";

/// What went wrong finding or starting the shop.
#[derive(Debug, thiserror::Error)]
pub enum ShopError {
    #[error("{0} is missing: build it with `cargo build -p bitselect --bin bitselect-mcp`")]
    Missing(PathBuf),
    #[error("building bitselect-mcp failed: {0}")]
    Build(String),
    #[error("not a UTF-8 path: {0}")]
    NotUtf8(PathBuf),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The shop binary cargo built beside the running executable
/// (`target/<profile>/`), as for the benchmark binary.
pub fn shop_binary_beside_me() -> Result<PathBuf, ShopError> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidate = dir.join(format!("{SHOP_BINARY}{}", std::env::consts::EXE_SUFFIX));
    if candidate.is_file() {
        Ok(candidate)
    } else {
        Err(ShopError::Missing(candidate))
    }
}

/// Builds the shop binary once per test process, in the target directory
/// the running test was built in, and returns its path. Cargo offers
/// `CARGO_BIN_EXE_*` only for the package under test, so cargo is asked
/// directly, for the very build scripts/test makes first (the whole
/// workspace, all targets): one feature resolution, so that this finds
/// everything fresh instead of building the shop's dependencies again.
pub fn built_shop_binary() -> Result<PathBuf, ShopError> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| build_shop().map_err(|e| e.to_string()))
        .clone()
        .map_err(ShopError::Build)
}

fn build_shop() -> Result<PathBuf, ShopError> {
    let exe = std::env::current_exe()?;
    // target/<profile>/deps/<test binary>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| ShopError::Missing(exe.clone()))?
        .to_path_buf();
    let target_dir = profile_dir
        .parent()
        .ok_or_else(|| ShopError::Missing(profile_dir.clone()))?
        .to_path_buf();
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .args(["build", "--quiet", "--workspace", "--all-targets"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cargo.arg("--release");
    }
    let status = cargo.status()?;
    if !status.success() {
        return Err(ShopError::Build(format!("cargo exited with {status}")));
    }
    let binary = profile_dir.join(format!("{SHOP_BINARY}{}", std::env::consts::EXE_SUFFIX));
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(ShopError::Missing(binary))
    }
}

fn text(path: &Path) -> Result<String, ShopError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| ShopError::NotUtf8(path.to_path_buf()))
}

/// The shop as the app's built-in, trusted server named `name`: `program`
/// run with `args`, then `--data-dir DIR`. `program` is the shop binary,
/// or something in front of it (a proxy) whose `args` end with the shop
/// binary's path.
pub fn shop_entry_via(
    name: &str,
    program: &Path,
    args: Vec<String>,
    data_dir: &Path,
) -> Result<ServerEntry, ShopError> {
    let mut args = args;
    args.extend(["--data-dir".to_owned(), text(data_dir)?]);
    let connector = StdioConnector::new(
        name,
        &text(program)?,
        args,
        vec![("RUST_LOG".into(), "warn".into())],
    );
    Ok(ServerEntry {
        name: name.into(),
        trusted: true,
        call_timeout: None,
        pages: PageOrigins::none(),
        ucp: None,
        connector: Arc::new(connector),
    })
}

/// The shop binary as the app's built-in, trusted server named `name`.
pub fn shop_entry(name: &str, binary: &Path, data_dir: &Path) -> Result<ServerEntry, ShopError> {
    shop_entry_via(name, binary, Vec::new(), data_dir)
}

/// A path as the text a command line takes.
pub fn path_text(path: &Path) -> Result<String, ShopError> {
    text(path)
}

/// Read access to the shop's database, for a test's checks (panics on a
/// database that cannot be read: the test fails there).
pub struct ShopDb {
    conn: Connection,
}

impl ShopDb {
    pub fn open(data_dir: &Path) -> ShopDb {
        ShopDb {
            conn: Connection::open(data_dir.join("shop.db")).expect("the shop's database opens"),
        }
    }

    pub fn stock(&self, sku: &str) -> i64 {
        self.conn
            .query_row(
                "SELECT stock FROM sku WHERE sku_code = ?1",
                params![sku],
                |r| r.get(0),
            )
            .expect("the SKU's stock")
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
            .expect("the cart")
            .unwrap_or(0)
    }

    /// A SKU's price in fen.
    pub fn price(&self, sku: &str) -> i64 {
        self.conn
            .query_row(
                "SELECT price_fen FROM sku WHERE sku_code = ?1",
                params![sku],
                |r| r.get(0),
            )
            .expect("the SKU's price")
    }

    /// Sets a SKU's price, as the shop's staff would between a card and
    /// its approval.
    pub fn set_price(&self, sku: &str, fen: i64) {
        let changed = self
            .conn
            .execute(
                "UPDATE sku SET price_fen = ?2 WHERE sku_code = ?1",
                params![sku, fen],
            )
            .expect("the price update");
        assert_eq!(changed, 1, "no SKU {sku}");
    }

    /// Sets a SKU's stock, as another shopper's order would.
    pub fn set_stock(&self, sku: &str, units: i64) {
        let changed = self
            .conn
            .execute(
                "UPDATE sku SET stock = ?2 WHERE sku_code = ?1",
                params![sku, units],
            )
            .expect("the stock update");
        assert_eq!(changed, 1, "no SKU {sku}");
    }

    /// An order's amount to pay, in fen.
    pub fn pay_fen(&self, order_no: &str) -> i64 {
        self.conn
            .query_row(
                "SELECT pay_fen FROM orders WHERE order_no = ?1",
                params![order_no],
                |r| r.get(0),
            )
            .expect("the order's amount")
    }

    /// An order's status (待支付, 已支付待发货, …).
    pub fn order_status(&self, order_no: &str) -> String {
        self.conn
            .query_row(
                "SELECT status FROM orders WHERE order_no = ?1",
                params![order_no],
                |r| r.get(0),
            )
            .expect("the order's status")
    }

    pub fn order_count(&self) -> i64 {
        self.conn
            .query_row("SELECT count(*) FROM orders", [], |r| r.get(0))
            .expect("the orders")
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
            .expect("the orders query");
        stmt.query_map(params![sku], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("the orders")
            .map(|row| row.expect("an order row"))
            .collect()
    }
}
