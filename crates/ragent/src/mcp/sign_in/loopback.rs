//! The redirect end of a sign-in: a listener on 127.0.0.1 on a port the OS
//! picks (RFC 8252 §7.3), where the browser lands after the authorization
//! server's pages. Any program on this computer can connect to it too, so
//! no connection can hold it up or end the wait: each is read on its own
//! with a time limit, other paths (a browser's favicon) get a 404, a
//! redirect without this sign-in's `state` gets a 400, and the wait goes on
//! until the sign-in's own redirect arrives.

use std::collections::HashMap;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The path the redirect URI names.
pub const CALLBACK_PATH: &str = "/callback";

/// Longest request head read before the connection is dropped.
const MAX_HEAD: usize = 16 * 1024;

/// How long one connection may take to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

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

    /// Waits for the browser to arrive at the callback path with `state`,
    /// this sign-in's; every other request is answered and forgotten.
    pub async fn next_redirect(&self, state: &str) -> std::io::Result<Redirect> {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let (stream, _) = accepted?;
                    connections.spawn(answer(stream, state.to_string()));
                }
                Some(answered) = connections.join_next() => {
                    if let Ok(Some(redirect)) = answered {
                        // The connections still open are dropped with the set.
                        return Ok(redirect);
                    }
                }
            }
        }
    }
}

/// Reads one connection's request and answers it: the sign-in's redirect
/// when it is one (path and `state`), else `None`.
async fn answer(mut stream: TcpStream, state: String) -> Option<Redirect> {
    let target = tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream))
        .await
        .ok()
        .flatten()?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if path != CALLBACK_PATH {
        let _ = stream
            .write_all(&response("404 Not Found", "Not found."))
            .await;
        return None;
    }
    let params: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    // The state is checked before anything else the redirect says: a
    // redirect that is not this sign-in's is not believed at all.
    if params.get("state") != Some(&state) {
        tracing::info!("a request to the sign-in's redirect without its state was turned away");
        let _ = stream
            .write_all(&response(
                "400 Bad Request",
                "This is not the sign-in the app is waiting for. Start the sign-in again in the app.",
            ))
            .await;
        return None;
    }
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
    Some(redirect)
}

/// The request target of a `GET`, once the head has arrived.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The listener's `host:port`.
    fn address(redirect_uri: &str) -> &str {
        redirect_uri
            .trim_start_matches("http://")
            .trim_end_matches(CALLBACK_PATH)
    }

    /// Sends `request` on a new connection and reads the whole answer.
    async fn send(redirect_uri: &str, request: &str) -> String {
        let mut stream = TcpStream::connect(address(redirect_uri)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer).await;
        answer
    }

    #[tokio::test]
    async fn stray_requests_are_turned_away_and_the_wait_goes_on_until_the_sign_ins_own_redirect() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let strays = async {
            // A connection that never sends anything holds nothing up.
            let _silent = TcpStream::connect(address(&uri)).await.unwrap();
            for (request, status) in [
                ("GET /callback?code=c-0&state=other HTTP/1.1\r\n\r\n", "400"),
                ("GET /callback?code=c-0 HTTP/1.1\r\n\r\n", "400"),
                ("GET /callback?error=access_denied HTTP/1.1\r\n\r\n", "400"),
                ("GET /favicon.ico HTTP/1.1\r\n\r\n", "404"),
            ] {
                let answer = send(&uri, request).await;
                assert!(
                    answer.starts_with(&format!("HTTP/1.1 {status} ")),
                    "{request}: {answer}"
                );
            }
            // Not a GET, or not HTTP: the connection is closed unanswered.
            assert_eq!(
                send(&uri, "POST /callback?state=s-1 HTTP/1.1\r\n\r\n").await,
                ""
            );
            assert_eq!(send(&uri, "\u{16}\u{3}\u{1}\r\n\r\n").await, "");
            let answer = send(&uri, "GET /callback?code=c-1&state=s-1 HTTP/1.1\r\n\r\n").await;
            assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
        };
        let (redirect, ()) = tokio::join!(loopback.next_redirect("s-1"), strays);
        assert_eq!(
            redirect.unwrap(),
            Redirect {
                code: Some("c-1".into()),
                state: Some("s-1".into()),
                ..Redirect::default()
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_sends_nothing_is_closed_after_the_read_timeout() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let silent = async {
            let mut stream = TcpStream::connect(address(&uri)).await.unwrap();
            let connected = tokio::time::Instant::now();
            let mut buf = [0u8; 16];
            assert_eq!(stream.read(&mut buf).await.unwrap(), 0, "closed by the app");
            assert!(connected.elapsed() >= READ_TIMEOUT);
        };
        tokio::select! {
            redirect = loopback.next_redirect("s-1") => panic!("the wait ended: {redirect:?}"),
            () = silent => {}
        }
    }
}
