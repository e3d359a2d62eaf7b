//! `bitselect-mcp --http` as a child process on a loopback port, as a
//! merchant runs it (`test_support::shop_process`), this package's build
//! of it.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::Path;

use test_support::ports::HeldPort;
pub use test_support::shop_process::{Instance, StderrLines};
use tokio::process::Child;

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_bitselect-mcp"))
}

/// `bitselect-mcp --http 127.0.0.1:0` with `args`, once it listens: the
/// process, its address and the rest of its stderr.
pub async fn spawn_shop(args: &[&OsStr]) -> (Child, SocketAddr, StderrLines) {
    test_support::shop_process::spawn_shop(binary(), args).await
}

/// [`spawn_shop`] listening on `listen`.
pub async fn spawn_shop_on(listen: &str, args: &[&OsStr]) -> (Child, SocketAddr, StderrLines) {
    test_support::shop_process::spawn_shop_on(binary(), listen, args).await
}

/// An instance on the PostgreSQL database at `database_url` that accepts
/// the tokens `issuer` signs for `resource`; its stderr is drained.
pub async fn start_instance(database_url: &str, issuer: &str, resource: &str) -> Instance {
    test_support::shop_process::start_instance(binary(), database_url, issuer, resource).await
}

/// [`start_instance`] listening on `port`'s socket, which it inherits.
pub async fn start_instance_holding(
    port: &HeldPort,
    database_url: &str,
    issuer: &str,
    resource: &str,
) -> Instance {
    test_support::shop_process::start_instance_holding(
        binary(),
        port,
        database_url,
        issuer,
        resource,
    )
    .await
}
