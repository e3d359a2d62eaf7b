//! A slow database, made so on the way to it: a loopback TCP port that
//! passes each connection on to a Unix socket (PostgreSQL's), holding every
//! answer the server sends back for a delay the test sets and changes while
//! it runs. Every statement of a client connected here takes that much
//! longer; other clients of the same server are not slowed.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixStream};
use tokio::task::JoinHandle;

pub struct SlowLink {
    addr: SocketAddr,
    delay_ms: Arc<AtomicU64>,
    accepting: JoinHandle<()>,
}

impl SlowLink {
    /// Starts passing connections to `socket`, with no delay yet.
    pub async fn to_unix_socket(socket: PathBuf) -> SlowLink {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let delay_ms = Arc::new(AtomicU64::new(0));
        let delay = delay_ms.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (socket, delay) = (socket.clone(), delay.clone());
                tokio::spawn(async move {
                    if let Ok(server) = UnixStream::connect(&socket).await {
                        pass_on(client, server, delay).await;
                    }
                });
            }
        });
        SlowLink {
            addr,
            delay_ms,
            accepting,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every answer from now on is held this long.
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }
}

impl Drop for SlowLink {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Copies both ways until either side closes, holding what the server
/// sends for the current delay.
async fn pass_on(client: TcpStream, server: UnixStream, delay_ms: Arc<AtomicU64>) {
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let requests = async {
        let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
        let _ = to_server.shutdown().await;
    };
    let answers = async {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            let read = match from_server.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            let delay = delay_ms.load(Ordering::SeqCst);
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            if to_client.write_all(&buffer[..read]).await.is_err() {
                break;
            }
        }
        let _ = to_client.shutdown().await;
    };
    tokio::join!(requests, answers);
}
