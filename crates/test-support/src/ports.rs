//! Loopback ports held from the moment they are chosen: the test binds the
//! port and the server it starts inherits the listening socket, so no
//! other process can take the port between choosing and listening.

use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, RawFd};

use tokio::process::Command;

/// The descriptor a started server finds the listening socket on.
pub const INHERITED_FD: i32 = 3;

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

    /// Makes `command`'s process find this listening socket on
    /// [`INHERITED_FD`]; this process keeps its own copy.
    pub fn inherit(&self, command: &mut Command) {
        let listening = self.listener.as_raw_fd();
        // SAFETY: `onto_inherited_fd` makes only async-signal-safe calls.
        unsafe {
            command.pre_exec(move || onto_inherited_fd(listening));
        }
    }

    /// [`HeldPort::inherit`] for a `std` command.
    pub fn inherit_std(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let listening = self.listener.as_raw_fd();
        // SAFETY: `onto_inherited_fd` makes only async-signal-safe calls.
        unsafe {
            command.pre_exec(move || onto_inherited_fd(listening));
        }
    }
}

/// Between fork and exec: puts `listening` on [`INHERITED_FD`] open across
/// exec, with dup2 (whose copy is not close-on-exec) or, when it is there
/// already, fcntl.
fn onto_inherited_fd(listening: RawFd) -> std::io::Result<()> {
    // SAFETY: plain system calls on descriptors this process owns.
    let kept = unsafe {
        if listening == INHERITED_FD {
            libc::fcntl(INHERITED_FD, libc::F_SETFD, 0)
        } else {
            libc::dup2(listening, INHERITED_FD)
        }
    };
    if kept < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A loopback port bound but not listening, until dropped: connecting to
/// it is refused, and no other process can listen on it meanwhile (it is
/// bound without SO_REUSEADDR), so "nobody answers there" stays true.
#[derive(Debug)]
pub struct ClosedPort {
    _socket: tokio::net::TcpSocket,
    port: u16,
}

impl ClosedPort {
    pub fn bind() -> Self {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind(([127, 0, 0, 1], 0).into())
            .expect("bind a loopback port");
        let port = socket.local_addr().expect("local address").port();
        Self {
            _socket: socket,
            port,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_closed_port_refuses_connections_and_cannot_be_listened_on() {
        let closed = ClosedPort::bind();
        let refused = tokio::net::TcpStream::connect(("127.0.0.1", closed.port()))
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
        assert!(TcpListener::bind(("127.0.0.1", closed.port())).is_err());
    }
}
