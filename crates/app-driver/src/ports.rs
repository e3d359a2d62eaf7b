//! Loopback ports for a server that takes a port number, not a socket
//! (tauri-driver, and the WebKitWebDriver it starts).
//!
//! A port found free by binding port 0 comes from the kernel's ephemeral
//! range, where any other process's `bind(0)` or outgoing connection can
//! take it before the server binds it. So the port is chosen below that
//! range, where the kernel never hands ports out, and reserved among the
//! test processes by binding a Unix socket named after it in the abstract
//! namespace: only one process can hold the name, the kernel frees it when
//! the holder ends however it ends, and nothing is left on disk.

use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

/// Where the range starts when /proc does not say (Linux's default).
const DEFAULT_EPHEMERAL_START: u16 = 32768;
/// The lowest port chosen: above the well-known and most registered ones.
const LOWEST: u16 = 20000;

/// A loopback port no other test process will choose while this is held,
/// and that no process was listening on when it was chosen.
#[derive(Debug)]
pub struct ReservedPort {
    port: u16,
    /// The port's name, held until dropped.
    _name: UnixListener,
}

impl ReservedPort {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Reserves a port below the ephemeral range, starting the search at a
    /// place that differs between processes and calls.
    pub fn reserve() -> std::io::Result<ReservedPort> {
        let end = ephemeral_start();
        let span = u32::from(end.saturating_sub(LOWEST)).max(1);
        let start = seed() % span;
        for step in 0..span {
            let offset = (start + step) % span;
            let Ok(port) = u16::try_from(u32::from(LOWEST) + offset) else {
                continue;
            };
            if let Some(reserved) = try_reserve(port)? {
                return Ok(reserved);
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AddrInUse,
            format!("no free loopback port between {LOWEST} and {end}"),
        ))
    }
}

fn try_reserve(port: u16) -> std::io::Result<Option<ReservedPort>> {
    let name = SocketAddr::from_abstract_name(format!("bitselect-test-port-{port}"))?;
    let held = match UnixListener::bind_addr(&name) {
        Ok(held) => held,
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => return Ok(None),
        Err(error) => return Err(error),
    };
    // Another program (not a test) may listen there: then skip it. The
    // probe never connects, so it leaves no TIME_WAIT behind.
    match TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(Some(ReservedPort { port, _name: held })),
        Err(_) => Ok(None),
    }
}

/// The first port of the kernel's ephemeral range.
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .filter(|start| *start > LOWEST)
        .unwrap_or(DEFAULT_EPHEMERAL_START)
}

fn seed() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    nanos ^ std::process::id().wrapping_mul(2_654_435_761)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserved_port_lies_below_the_ephemeral_range_and_is_not_reserved_twice() {
        let first = ReservedPort::reserve().unwrap();
        let ports: Vec<u16> = (0..50)
            .map(|_| ReservedPort::reserve().unwrap())
            .map(|reserved| {
                assert_ne!(reserved.port(), first.port());
                reserved.port()
            })
            .collect();
        assert!(first.port() >= LOWEST && first.port() < ephemeral_start());
        assert!(ports.iter().all(|port| *port < ephemeral_start()));
    }

    #[test]
    fn a_port_someone_listens_on_is_not_reserved() {
        let first = ReservedPort::reserve().unwrap();
        let port = first.port();
        drop(first);
        let _listening = TcpListener::bind(("127.0.0.1", port)).unwrap();
        assert!(try_reserve(port).unwrap().is_none());
    }
}
