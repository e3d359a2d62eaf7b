//! The redirect end of a sign-in: a listener on 127.0.0.1 on a port the OS
//! picks (RFC 8252 §7.3), where the browser lands after the authorization
//! server's pages. It reads only the request line; other paths (a
//! browser's favicon) get a 404 and the wait goes on.

use std::collections::HashMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The path the redirect URI names.
pub const CALLBACK_PATH: &str = "/callback";

/// Longest request head read before the connection is dropped.
const MAX_HEAD: usize = 16 * 1024;

/// What the authorization server sent the browser back with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redirect {
    pub code: Option<String>,
    pub state: Option<String>,
    /// RFC 9207's `iss`, when the server sends it.
    pub issuer: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

pub struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Loopback {
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the browser to arrive at the callback path.
    pub async fn next_redirect(&self) -> std::io::Result<Redirect> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let Some(target) = read_target(&mut stream).await else {
                continue;
            };
            let (path, query) = target.split_once('?').unwrap_or((&target, ""));
            if path != CALLBACK_PATH {
                let _ = stream
                    .write_all(&response("404 Not Found", "Not found."))
                    .await;
                continue;
            }
            let params: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let redirect = Redirect {
                code: params.get("code").cloned(),
                state: params.get("state").cloned(),
                issuer: params.get("iss").cloned(),
                error: params.get("error").cloned(),
                error_description: params.get("error_description").cloned(),
            };
            let page = if redirect.error.is_some() {
                "The sign-in was not completed. You can close this window and try again in the app."
            } else {
                "The sign-in is in the app's hands now. You can close this window."
            };
            let _ = stream.write_all(&response("200 OK", page)).await;
            let _ = stream.shutdown().await;
            return Ok(redirect);
        }
    }
}

/// The request target of a `GET`, once the head has arrived.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = std::str::from_utf8(&head).ok()?.lines().next()?.to_string();
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) => Some(target.to_string()),
        _ => None,
    }
}

fn response(status: &str, text: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{text}",
        text.len()
    )
    .into_bytes()
}
