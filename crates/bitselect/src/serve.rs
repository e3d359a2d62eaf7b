//! Serving [`ShopServer`] over a byte stream (stdio, an in-process duplex)
//! or, with the `service` feature, streamable HTTP ([`http`]).

use std::net::SocketAddr;

use rmcp::ServiceExt;
use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::io::{AsyncRead, AsyncWrite};
#[cfg(unix)]
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use crate::origins::AllowedOrigins;
use crate::server::ShopServer;
use crate::shop::Shop;

#[cfg(feature = "service")]
mod http;
#[cfg(feature = "service")]
pub use http::{Bind, HEALTH_PATH, http_service, serve_http, serve_http_authenticated};

/// The path the streamable HTTP endpoint is mounted at.
pub const MCP_PATH: &str = "/mcp";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("MCP initialization failed: {0}")]
    Initialize(#[from] Box<ServerInitializeError>),
    #[error("the MCP service task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error(
        "refusing to listen on the non-loopback address {0}: pass --allow-remote to expose the shop to the network"
    )]
    RemoteNotAllowed(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the HTTP server failed: {0}")]
    Http(#[source] std::io::Error),
    #[error("--http fd:{fd} is not a listening TCP socket this process inherited: {source}")]
    Inherited { fd: i32, source: std::io::Error },
}

/// Serves one MCP session over any byte stream until the peer closes it or
/// `shutdown` fires. Use a `tokio::io::duplex` half for an in-process server.
pub async fn serve_io<T>(
    shop: Shop,
    io: T,
    shutdown: CancellationToken,
) -> Result<QuitReason, ServeError>
where
    T: AsyncRead + AsyncWrite + Send + 'static,
{
    let running = ShopServer::new(shop)
        .serve_with_ct(io, shutdown)
        .await
        .map_err(Box::new)?;
    Ok(running.waiting().await?)
}

/// Serves one MCP session over this process's stdin and stdout.
pub async fn serve_stdio(
    shop: Shop,
    shutdown: CancellationToken,
) -> Result<QuitReason, ServeError> {
    let server = ShopServer::new(shop);
    let running = match stdio_pipes() {
        Some(pipes) => server.serve_with_ct(pipes, shutdown).await,
        None => {
            server
                .serve_with_ct(rmcp::transport::stdio(), shutdown)
                .await
        }
    }
    .map_err(Box::new)?;
    Ok(running.waiting().await?)
}

/// Stdin and stdout as pipes the runtime polls itself, when both are pipes
/// (as when an MCP client spawns the shop). Tokio's own stdio reads and
/// writes on a blocking thread: two hand-offs between threads per call.
/// `None` for anything else (a terminal, a file): tokio's stdio serves it.
#[cfg(unix)]
fn stdio_pipes() -> Option<(pipe::Receiver, pipe::Sender)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;

    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let is_pipe = |fd: &std::os::fd::OwnedFd| {
        fd.try_clone()
            .map(std::fs::File::from)
            .and_then(|file| file.metadata())
            .is_ok_and(|meta| meta.file_type().is_fifo())
    };
    // Both are checked before either is made non-blocking: a half-switched
    // pair would break tokio's stdio for the other.
    if !is_pipe(&stdin) || !is_pipe(&stdout) {
        return None;
    }
    let receiver = pipe::Receiver::from_owned_fd(stdin).ok()?;
    let sender = pipe::Sender::from_owned_fd(stdout).ok()?;
    tracing::debug!("serving on stdin and stdout as pipes");
    Some((receiver, sender))
}

#[cfg(not(unix))]
fn stdio_pipes() -> Option<(tokio::io::Empty, tokio::io::Sink)> {
    None
}

/// Who may reach the shop over HTTP: other machines (`allow_remote`, else
/// only this one), and the web pages of `allowed_origins` (none by default;
/// requests without an `Origin`, from native clients, are always served).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpAccess {
    pub allow_remote: bool,
    pub allowed_origins: AllowedOrigins,
}
