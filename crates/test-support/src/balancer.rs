//! HAProxy from the distribution's package in front of shop instances:
//! round robin, each instance checked on /healthz every 100 ms and taken
//! out at its first failure; a request that cannot connect to one is sent
//! to another. Runs in the foreground with a configuration written here,
//! killed when dropped.
//!
//! Its port is held from the moment it is chosen: the test binds it
//! ([`HeldPort`]) and HAProxy inherits the listening socket (`bind fd@3`),
//! so no other process can take it between choosing and listening, and a
//! balancer started again later listens on the same socket.

use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

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

/// The descriptor HAProxy finds the listening socket on.
const INHERITED_FD: i32 = 3;

/// A loopback port bound from the moment it is chosen until dropped.
#[derive(Debug)]
pub struct HeldPort {
    listener: TcpListener,
}

impl HeldPort {
    pub fn bind() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        Self { listener }
    }

    pub fn port(&self) -> u16 {
        self.listener.local_addr().expect("local address").port()
    }

    pub fn addr(&self) -> SocketAddr {
        ([127, 0, 0, 1], self.port()).into()
    }
}

/// The configuration: a frontend on the socket inherited as fd 3,
/// `backends` behind it.
pub fn haproxy_config(backends: &[SocketAddr]) -> String {
    let servers: String = backends
        .iter()
        .enumerate()
        .map(|(n, addr)| format!("    server shop{} {addr} check\n", n + 1))
        .collect();
    format!(
        "global\n    maxconn 2000\n\
         defaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    \
         timeout server 30s\n    retries 3\n    option redispatch\n\
         frontend shop\n    bind fd@{INHERITED_FD}\n    default_backend instances\n\
         backend instances\n    balance roundrobin\n    option httpchk GET {HEALTH_PATH}\n    \
         default-server inter 100ms fall 1 rise 2\n{servers}",
    )
}

/// HAProxy, running until stopped or dropped.
pub struct Balancer {
    child: Child,
}

impl Balancer {
    /// Starts it on `port`'s socket with its configuration in `dir`, and
    /// returns once it answers the health check through to an instance.
    pub async fn start(dir: &Path, port: &HeldPort, backends: &[SocketAddr]) -> Self {
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, haproxy_config(backends)).expect("write haproxy.cfg");
        let mut command = Command::new(haproxy_binary());
        command
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let listening = port.listener.as_raw_fd();
        // SAFETY: between fork and exec only async-signal-safe calls run:
        // dup2 (whose copy is not close-on-exec) and, when the socket is
        // already fd 3, fcntl to keep it open across exec.
        unsafe {
            command.pre_exec(move || {
                let kept = if listening == INHERITED_FD {
                    libc::fcntl(INHERITED_FD, libc::F_SETFD, 0)
                } else {
                    libc::dup2(listening, INHERITED_FD)
                };
                if kept < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(())
                }
            });
        }
        let child = command.spawn().expect("start haproxy");
        let health = format!("http://{}{HEALTH_PATH}", port.addr());
        let http = reqwest::Client::new();
        // HAProxy says nothing when it is ready: ask until it answers.
        for _ in 0..400 {
            if let Ok(response) = http.get(&health).send().await
                && response.status().is_success()
            {
                return Self { child };
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("HAProxy did not answer {health} within 10 s");
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
