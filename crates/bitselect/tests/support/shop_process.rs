//! `bitselect-mcp --http` as a child process on a loopback port, as a
//! merchant runs it.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A `bitselect-mcp --http` process, killed when dropped.
pub struct Instance {
    pub child: Child,
    pub addr: SocketAddr,
}

pub type StderrLines = tokio::io::Lines<BufReader<tokio::process::ChildStderr>>;

/// `bitselect-mcp --http 127.0.0.1:0` with `args`, once it listens: the
/// process, its address and the rest of its stderr.
pub async fn spawn_shop(args: &[&OsStr]) -> (Child, SocketAddr, StderrLines) {
    spawn_shop_on("127.0.0.1:0", args).await
}

/// [`spawn_shop`] listening on `listen`.
pub async fn spawn_shop_on(listen: &str, args: &[&OsStr]) -> (Child, SocketAddr, StderrLines) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bitselect-mcp"))
        .args(["--http", listen])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start bitselect-mcp");
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("read the shop's stderr") {
            if let Some(url) = line.strip_prefix("bitselect-mcp listening on http://") {
                let addr = url.trim().trim_end_matches(bitselect::MCP_PATH);
                return addr.parse::<SocketAddr>().expect("an address");
            }
        }
        panic!("bitselect-mcp exited before it listened");
    })
    .await
    .expect("the shop listens within 30 s");
    (child, addr, lines)
}

/// An instance on the PostgreSQL database at `database_url` that accepts
/// the tokens `issuer` signs for `resource`; its stderr is drained.
pub async fn start_instance(database_url: &str, issuer: &str, resource: &str) -> Instance {
    start_instance_on("127.0.0.1:0", database_url, issuer, resource).await
}

/// [`start_instance`] listening on `listen`.
pub async fn start_instance_on(
    listen: &str,
    database_url: &str,
    issuer: &str,
    resource: &str,
) -> Instance {
    let flags = [
        "--database-url",
        database_url,
        "--auth-issuer",
        issuer,
        "--resource-url",
        resource,
    ];
    let args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    let (child, addr, mut lines) = spawn_shop_on(listen, &args).await;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Instance { child, addr }
}
