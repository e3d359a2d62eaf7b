//! A fake model: a local HTTP/1.1 server that answers OpenAI-compatible
//! `POST /v1/chat/completions` with a canned SSE stream at once. It keeps,
//! per request, when the request was fully read and how long the server
//! spent on it (request read to response written), so that the time the
//! model takes can be taken out of a round's wall time.
//!
//! A raw loop over tokio's TCP keeps it free of framework cost: it reads
//! headers and a `Content-Length` body, and writes one response with its
//! own `Content-Length`, keeping the connection alive as the client does.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::BenchError;

/// One request the model served.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    /// When the request was fully read.
    pub read_at: Instant,
    /// From the request fully read to the response fully written.
    pub server_time: Duration,
    /// Which response of the script it got.
    pub turn: usize,
    pub request_bytes: usize,
}

/// Stands for a fresh call id in a scripted turn: real models never repeat
/// one within a conversation.
pub const CALL_ID: &str = "@CALL_ID@";

struct State {
    /// SSE bodies, answered in a cycle.
    script: Vec<String>,
    next: AtomicUsize,
    served: Mutex<Vec<Served>>,
    /// Told after each request is noted, which happens just after its
    /// response went out: the agent may be done with it before then.
    noted: tokio::sync::Notify,
}

/// A running fake model. Dropping it stops accepting connections.
pub struct FakeModel {
    addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeModel {
    /// Serves `turns` (each a list of chat-completion chunks) in a cycle:
    /// request n gets turn n mod len.
    pub async fn start(turns: &[Vec<Value>]) -> Result<FakeModel, BenchError> {
        if turns.is_empty() {
            return Err(BenchError::Setup(
                "a fake model needs at least one turn".into(),
            ));
        }
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| BenchError::Setup(format!("fake model cannot bind: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| BenchError::Setup(format!("fake model address: {e}")))?;
        let state = Arc::new(State {
            script: turns.iter().map(|t| sse(t)).collect(),
            next: AtomicUsize::new(0),
            served: Mutex::new(Vec::new()),
            noted: tokio::sync::Notify::new(),
        });
        let task = tokio::spawn({
            let state = state.clone();
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve_connection(stream, state.clone()));
                }
            }
        });
        Ok(FakeModel { addr, state, task })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request served so far, and forgets them.
    pub fn take_served(&self) -> Vec<Served> {
        std::mem::take(&mut *self.lock_served())
    }

    /// Waits until `count` requests have been noted since the last take,
    /// then takes them all.
    pub async fn take_served_when(&self, count: usize) -> Result<Vec<Served>, BenchError> {
        let noted = async {
            loop {
                if self.lock_served().len() >= count {
                    return self.take_served();
                }
                self.state.noted.notified().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), noted)
            .await
            .map_err(|_| BenchError::Run(format!("the model never noted {count} requests")))
    }

    fn lock_served(&self) -> std::sync::MutexGuard<'_, Vec<Served>> {
        self.state
            .served
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts the script from its first turn again.
    pub fn rewind(&self) {
        self.state.next.store(0, Ordering::SeqCst);
    }
}

async fn serve_connection(mut stream: TcpStream, state: Arc<State>) {
    let mut buffer = Vec::with_capacity(64 * 1024);
    loop {
        let Some(request_bytes) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        let read_at = Instant::now();
        let n = state.next.fetch_add(1, Ordering::SeqCst);
        let turn = n % state.script.len();
        let response = http_response(&state.script[turn].replace(CALL_ID, &format!("call_{n}")));
        if stream.write_all(&response).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        let server_time = read_at.elapsed();
        state
            .served
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(Served {
                read_at,
                server_time,
                turn,
                request_bytes,
            });
        // A permit is kept if nobody waits yet: no wake-up is lost.
        state.noted.notify_one();
    }
}

/// Reads one request (headers and a `Content-Length` body) and drops it
/// from the buffer; returns its size, or `None` when the peer closed.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<usize> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            let head = std::str::from_utf8(&buffer[..end]).ok()?;
            let length = content_length(head)?;
            let total = end + 4 + length;
            while buffer.len() < total {
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buffer.extend_from_slice(&chunk[..n]);
            }
            buffer.drain(..total);
            return Some(total);
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn content_length(head: &str) -> Option<usize> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .or(Some(0))
}

fn http_response(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// An SSE body: each chunk as a `data:` event, then `[DONE]`.
fn sse(chunks: &[Value]) -> String {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

/// A turn that proposes one call of `name` with `arguments`, under a
/// fresh call id.
pub fn call_turn(name: &str, arguments: &Value) -> Vec<Value> {
    vec![
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": CALL_ID, "type": "function",
             "function": {"name": name, "arguments": arguments.to_string()}}
        ]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]
}

/// A turn that answers in text.
pub fn text_turn(text: &str) -> Vec<Value> {
    vec![
        json!({"choices": [{"index": 0, "delta": {"content": text}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]
}
