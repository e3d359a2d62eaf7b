//! `bitselect-mcp --http` as a child process on a loopback port, as a
//! merchant runs it. The caller names the binary: a package's own tests
//! have `CARGO_BIN_EXE_bitselect-mcp`, the benchmarks the one beside them.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::ports::{HeldPort, INHERITED_FD};

/// The path of the MCP endpoint (`bitselect::MCP_PATH`).
const MCP_PATH: &str = "/mcp";
/// The line the shop prints to stderr once it listens.
const LISTENING: &str = "bitselect-mcp listening on http://";

/// A `bitselect-mcp --http` process, killed when dropped.
pub struct Instance {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Instance {
    /// Its process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

pub type StderrLines = tokio::io::Lines<BufReader<tokio::process::ChildStderr>>;

/// `BINARY --http 127.0.0.1:0` with `args`, once it listens: the process,
/// its address and the rest of its stderr.
pub async fn spawn_shop(binary: &Path, args: &[&OsStr]) -> (Child, SocketAddr, StderrLines) {
    spawn_shop_on(binary, "127.0.0.1:0", args).await
}

/// [`spawn_shop`] listening on `listen`.
pub async fn spawn_shop_on(
    binary: &Path,
    listen: &str,
    args: &[&OsStr],
) -> (Child, SocketAddr, StderrLines) {
    let mut command = Command::new(binary);
    command.args(["--http", listen]).args(args);
    spawn(binary, command).await
}

/// [`spawn_shop`] listening on `port`'s socket, which it inherits
/// (`--http fd:3`): for a shop whose resource URL names its port before it
/// starts.
async fn spawn_shop_holding(
    binary: &Path,
    port: &HeldPort,
    args: &[&OsStr],
) -> (Child, SocketAddr, StderrLines) {
    let mut command = Command::new(binary);
    command
        .args(["--http", &format!("fd:{INHERITED_FD}")])
        .args(args);
    port.inherit(&mut command);
    spawn(binary, command).await
}

async fn spawn(binary: &Path, mut command: Command) -> (Child, SocketAddr, StderrLines) {
    // Logs as a merchant's instance logs them, whatever the test's own
    // environment asks: tests read its lines.
    command.env_remove("RUST_LOG");
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("start {}: {error}", binary.display()));
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("read the shop's stderr") {
            if let Some(url) = line.strip_prefix(LISTENING) {
                let addr = url.trim().trim_end_matches(MCP_PATH);
                return addr.parse::<SocketAddr>().expect("an address");
            }
        }
        panic!("bitselect-mcp exited before it listened");
    })
    .await
    .expect("the shop listens within 30 s");
    (child, addr, lines)
}

/// An instance of `binary` on the PostgreSQL database at `database_url`
/// that accepts the tokens `issuer` signs for `resource`; its stderr is
/// drained.
pub async fn start_instance(
    binary: &Path,
    database_url: &str,
    issuer: &str,
    resource: &str,
) -> Instance {
    let args = instance_args(database_url, issuer, resource);
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    drained(spawn_shop(binary, &args).await)
}

/// An instance of `binary` on the SQLite shop in `data_dir`, without
/// sign-in (a merchant's demo); its stderr is drained.
pub async fn start_on_data_dir(binary: &Path, data_dir: &Path) -> Instance {
    let args = [OsStr::new("--data-dir"), data_dir.as_os_str()];
    drained(spawn_shop(binary, &args).await)
}

/// [`start_instance`] listening on `port`'s socket, which it inherits: for
/// an instance whose resource URL is its own address.
pub async fn start_instance_holding(
    binary: &Path,
    port: &HeldPort,
    database_url: &str,
    issuer: &str,
    resource: &str,
) -> Instance {
    let args = instance_args(database_url, issuer, resource);
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    drained(spawn_shop_holding(binary, port, &args).await)
}

fn instance_args<'a>(database_url: &'a str, issuer: &'a str, resource: &'a str) -> [&'a str; 6] {
    [
        "--database-url",
        database_url,
        "--auth-issuer",
        issuer,
        "--resource-url",
        resource,
    ]
}

/// The instance, its stderr drained so that it never blocks on a full pipe.
fn drained((child, addr, mut lines): (Child, SocketAddr, StderrLines)) -> Instance {
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Instance { child, addr }
}
