//! HAProxy from the distribution's package in front of shop instances:
//! round robin, each instance checked on /healthz every 100 ms and taken
//! out at its first failure; a request that cannot connect to one is sent
//! to another. Runs in the foreground with a configuration written here,
//! killed when dropped.
//!
//! Its port is held from the moment it is chosen ([`HeldPort`]): HAProxy
//! inherits the listening socket (`bind fd@3`), and a balancer started
//! again later listens on the same socket.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::ports::{HeldPort, INHERITED_FD};

/// The shop's health endpoint (`bitselect::HEALTH_PATH`).
const HEALTH_PATH: &str = "/healthz";

fn haproxy_binary() -> PathBuf {
    [
        "/usr/sbin/haproxy",
        "/usr/bin/haproxy",
        "/usr/local/sbin/haproxy",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|path| path.exists())
    .unwrap_or_else(|| {
        panic!("HAProxy is not installed; run scripts/setup, which installs Debian's `haproxy`")
    })
}

/// The configuration: a frontend on the socket inherited as fd 3,
/// `backends` behind it (named `shop1`, `shop2`, ... in order), and the
/// runtime API on `stats`.
fn haproxy_config(backends: &[SocketAddr], stats: &Path) -> String {
    let servers: String = backends
        .iter()
        .enumerate()
        .map(|(n, addr)| format!("    server shop{} {addr} check\n", n + 1))
        .collect();
    format!(
        "global\n    maxconn 2000\n    stats socket {} mode 600 level admin\n\
         defaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    \
         timeout server 30s\n    retries 3\n    option redispatch\n\
         frontend shop\n    bind fd@{INHERITED_FD}\n    default_backend instances\n\
         backend instances\n    balance roundrobin\n    option httpchk GET {HEALTH_PATH}\n    \
         default-server inter 100ms fall 1 rise 2\n{servers}",
        stats.display()
    )
}

/// HAProxy, running until stopped or dropped.
pub struct Balancer {
    child: Child,
    stats: PathBuf,
}

impl Balancer {
    /// Starts it on `port`'s socket with its configuration in `dir`, and
    /// returns once it answers the health check through to an instance.
    pub async fn start(dir: &Path, port: &HeldPort, backends: &[SocketAddr]) -> Self {
        let config = dir.join("haproxy.cfg");
        let stats = dir.join("haproxy.sock");
        std::fs::write(&config, haproxy_config(backends, &stats)).expect("write haproxy.cfg");
        let mut command = Command::new(haproxy_binary());
        command
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        port.inherit(&mut command);
        let child = command.spawn().expect("start haproxy");
        let health = format!("http://{}{HEALTH_PATH}", port.addr());
        let http = reqwest::Client::new();
        // HAProxy says nothing when it is ready: ask until it answers.
        for _ in 0..400 {
            if let Ok(response) = http.get(&health).send().await
                && response.status().is_success()
            {
                return Self { child, stats };
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("HAProxy did not answer {health} within 10 s");
    }

    /// Whether HAProxy's health checks have the `n`th backend (from 1) up
    /// now, as its runtime API says.
    pub async fn is_up(&self, n: usize) -> bool {
        let mut socket = tokio::net::UnixStream::connect(&self.stats)
            .await
            .expect("HAProxy's runtime API");
        socket.write_all(b"show stat\n").await.expect("ask HAProxy");
        let mut csv = String::new();
        socket
            .read_to_string(&mut csv)
            .await
            .expect("HAProxy's answer");
        // `# pxname,svname,...,status,...`: the status column by its name.
        let header: Vec<&str> = csv
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let status = header
            .iter()
            .position(|name| *name == "status")
            .expect("a status column");
        let name = format!("shop{n}");
        csv.lines()
            .map(|line| line.split(',').collect::<Vec<_>>())
            .find(|fields| fields.get(1) == Some(&name.as_str()))
            .and_then(|fields| fields.get(status).map(|s| s.starts_with("UP")))
            .unwrap_or_else(|| panic!("HAProxy has no server {name}: {csv}"))
    }

    /// Waits until the `n`th backend is `up` (or down) in HAProxy's view;
    /// panics after `within`.
    pub async fn until(&self, n: usize, up: bool, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        while self.is_up(n).await != up {
            assert!(
                tokio::time::Instant::now() < deadline,
                "HAProxy did not see backend {n} {} within {within:?}",
                if up { "up" } else { "down" }
            );
            // Its checks run every 100 ms: look a little more often.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Its process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kills it and waits until it has exited, so its port is free again.
    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}
