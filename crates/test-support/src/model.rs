//! A scripted OpenAI-compatible model on a loopback port, the one every
//! test and benchmark talks to.
//!
//! Each `POST …/chat/completions` takes the next scripted [`Reply`] (or,
//! for a [`ScriptedModel::cycle`] script, the next in a cycle); `GET`
//! requests (the reachability check, `/models`) list one model, or get
//! the reply set by [`ScriptedModel::answer_listing`]. Every
//! request is kept with its headers, and when it was read and how long the
//! reply took to write, so a benchmark can take the model's own time out
//! of a round.
//!
//! A raw HTTP/1.1 loop over tokio's TCP (keep-alive, `Content-Length`
//! bodies): no framework cost in a benchmark's figures. It runs on a
//! thread of its own ([`ScriptedModel::start`], for tests with or without
//! a runtime) or on a runtime the caller gives ([`ScriptedModel::start_on`],
//! so a benchmark keeps the model on its own runtime's thread).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;

/// Stands for a fresh call id in a cycled turn: real models never repeat
/// one within a conversation. Replaced by `call_<n>`, n the request's
/// number.
pub const CALL_ID: &str = "@CALL_ID@";

/// One HTTP answer of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Waited before the answer is written (a slow model).
    pub delay: Duration,
}

impl Reply {
    /// A streamed turn: each chunk as a `data:` event, then `[DONE]`.
    pub fn stream(chunks: &[Value]) -> Reply {
        Reply::status(200, sse(chunks)).header("content-type", "text/event-stream")
    }

    /// A stream cut off: no finish reason, no `[DONE]`.
    pub fn cut(chunks: &[Value]) -> Reply {
        Reply::status(200, sse_cut(chunks)).header("content-type", "text/event-stream")
    }

    /// Any status with a body, such as a provider's error.
    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// A status with an empty body, to be given one with [`Reply::body`].
    pub fn new(status: u16) -> Reply {
        Reply::status(status, "")
    }

    pub fn body(mut self, body: impl Into<String>) -> Reply {
        self.body = body.into();
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// A chat request as the model received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The body as sent; empty for a cycled script, whose requests a
    /// benchmark never reads (a long session's bodies run to megabytes).
    pub body: Vec<u8>,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// When the request was fully read.
    pub read_at: Instant,
    /// From the request fully read to the reply fully written; `None`
    /// while it is being answered.
    pub server_time: Option<Duration>,
    /// Its place in the script (for a cycle, which turn it got).
    pub turn: usize,
    pub request_bytes: usize,
}

impl Received {
    /// The body as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

enum Script {
    /// Taken in order; an empty queue answers 599.
    Queue(VecDeque<Reply>),
    /// Answered in a cycle: request n gets turn n mod len.
    Cycle(Vec<Reply>),
}

struct State {
    script: Script,
    served: usize,
    received: Vec<Received>,
    /// The answer to every `GET`; `None` lists the one model `scripted`.
    listing: Option<Reply>,
    /// The headers of each `GET`, oldest first.
    listings: Vec<Vec<(String, String)>>,
    /// A request that finds the queue empty waits this long for the test
    /// to push its turn (one it can only write once it has read the
    /// request); `None` answers 599 at once.
    awaits_turns: Option<Duration>,
}

struct Shared {
    state: Mutex<State>,
    /// Told whenever a request is noted or its reply written.
    changed: Condvar,
    changed_async: tokio::sync::Notify,
    /// Told when the test pushes a reply.
    pushed: tokio::sync::Notify,
}

/// The running model; it stops serving when dropped.
pub struct ScriptedModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
    /// The runtime of [`ScriptedModel::start`]; ends with the model.
    own_runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
        // Dropped inside an async test: a runtime may only be let go of
        // there without waiting for its tasks.
        if let Some(runtime) = self.own_runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// What went wrong starting a model.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the scripted model cannot listen: {0}")]
    Listen(#[source] std::io::Error),
    #[error("the scripted model's runtime cannot start: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("the model received {got} requests, not {wanted}, within {limit:?}")]
    NotEnoughRequests {
        wanted: usize,
        got: usize,
        limit: Duration,
    },
}

impl ScriptedModel {
    /// Starts an empty script on a runtime thread of its own.
    pub fn start() -> Result<ScriptedModel, ModelError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("scripted-model")
            .enable_all()
            .build()
            .map_err(ModelError::Runtime)?;
        let mut model = ScriptedModel::start_on(runtime.handle(), Script::Queue(VecDeque::new()))?;
        model.own_runtime = Some(runtime);
        Ok(model)
    }

    /// Starts on the caller's runtime, answering `turns` (each a list of
    /// chunks) in a cycle, [`CALL_ID`] made fresh in each.
    pub fn cycle(handle: &Handle, turns: &[Vec<Value>]) -> Result<ScriptedModel, ModelError> {
        let replies = turns.iter().map(|t| Reply::stream(t)).collect();
        ScriptedModel::start_on(handle, Script::Cycle(replies))
    }

    fn start_on(handle: &Handle, script: Script) -> Result<ScriptedModel, ModelError> {
        let listener = {
            let _entered = handle.enter();
            let std_listener =
                std::net::TcpListener::bind("127.0.0.1:0").map_err(ModelError::Listen)?;
            std_listener
                .set_nonblocking(true)
                .map_err(ModelError::Listen)?;
            TcpListener::from_std(std_listener).map_err(ModelError::Listen)?
        };
        let addr = listener.local_addr().map_err(ModelError::Listen)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script,
                served: 0,
                received: Vec::new(),
                listing: None,
                listings: Vec::new(),
                awaits_turns: None,
            }),
            changed: Condvar::new(),
            changed_async: tokio::sync::Notify::new(),
            pushed: tokio::sync::Notify::new(),
        });
        let task = handle.spawn({
            let shared = shared.clone();
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve_connection(stream, shared.clone()));
                }
            }
        });
        Ok(ScriptedModel {
            addr,
            shared,
            task,
            own_runtime: None,
        })
    }

    /// The base URL to put in the model settings (`http://127.0.0.1:N/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The next reply, whatever it is.
    pub fn push(&self, reply: Reply) {
        if let Script::Queue(queue) = &mut self.state().script {
            queue.push_back(reply);
        }
        // A permit is kept if no request waits yet: none is lost.
        self.shared.pushed.notify_one();
    }

    /// From now on a request that finds no turn queued waits up to `limit`
    /// for one to be pushed, instead of failing: for a turn the test can
    /// write only from what the request carries (an id a tool answered).
    pub fn await_turns(&self, limit: Duration) {
        self.state().awaits_turns = Some(limit);
    }

    /// The next model turn, as chunks.
    pub fn push_turn(&self, chunks: Vec<Value>) {
        self.push(Reply::stream(&chunks));
    }

    /// Replies scripted but not yet asked for.
    pub fn unused_turns(&self) -> usize {
        match &self.state().script {
            Script::Queue(queue) => queue.len(),
            Script::Cycle(_) => 0,
        }
    }

    /// Every chat request so far, oldest first.
    pub fn received(&self) -> Vec<Received> {
        self.state().received.clone()
    }

    /// Answers every `GET` (the model list) with `reply` from now on.
    pub fn answer_listing(&self, reply: Reply) {
        self.state().listing = Some(reply);
    }

    /// The headers (names in lower case) of every `GET` so far, oldest first.
    pub fn listing_headers(&self) -> Vec<Vec<(String, String)>> {
        self.state().listings.clone()
    }

    /// The bodies of every chat request so far, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        self.state().received.iter().map(Received::json).collect()
    }

    /// Waits until `count` chat requests have come in (answered or not:
    /// one may wait for its turn, [`ScriptedModel::await_turns`]) and
    /// returns their bodies.
    pub fn wait_for_requests(
        &self,
        count: usize,
        limit: Duration,
    ) -> Result<Vec<Value>, ModelError> {
        let deadline = Instant::now() + limit;
        let mut state = self.state();
        loop {
            if state.received.len() >= count {
                return Ok(state.received.iter().map(Received::json).collect());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ModelError::NotEnoughRequests {
                    wanted: count,
                    got: state.received.len(),
                    limit,
                });
            }
            state = match self.shared.changed.wait_timeout(state, left) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// A header of the most recent chat request.
    pub fn last_header(&self, name: &str) -> Option<String> {
        self.state()
            .received
            .last()
            .and_then(|r| r.header(name))
            .map(str::to_owned)
    }

    /// Waits until `count` requests were answered since the last take,
    /// then takes them all (a benchmark's rounds).
    pub async fn take_answered(
        &self,
        count: usize,
        limit: Duration,
    ) -> Result<Vec<Received>, ModelError> {
        let answered = async {
            loop {
                let notified = self.shared.changed_async.notified();
                {
                    let mut state = self.state();
                    let done = state
                        .received
                        .iter()
                        .filter(|r| r.server_time.is_some())
                        .count();
                    if done >= count {
                        return std::mem::take(&mut state.received);
                    }
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, answered)
            .await
            .map_err(|_| ModelError::NotEnoughRequests {
                wanted: count,
                got: self.state().received.len(),
                limit,
            })
    }

    /// Forgets the requests so far.
    pub fn take_received(&self) -> Vec<Received> {
        std::mem::take(&mut self.state().received)
    }

    /// Starts a cycle from its first turn again.
    pub fn rewind(&self) {
        self.state().served = 0;
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared)
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The turn the test pushes for a request that found none, if the model
/// awaits turns; else, or when none comes in time, a 599.
async fn pushed_turn(shared: &Shared) -> Reply {
    let none = || Reply::status(599, "the test script has no more turns");
    let Some(limit) = lock(shared).awaits_turns else {
        return none();
    };
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Script::Queue(queue) = &mut lock(shared).script
            && let Some(reply) = queue.pop_front()
        {
            return reply;
        }
        if tokio::time::timeout_at(deadline, shared.pushed.notified())
            .await
            .is_err()
        {
            return none();
        }
    }
}

fn told(shared: &Shared) {
    shared.changed.notify_all();
    // A permit is kept if nobody waits yet: no wake-up is lost.
    shared.changed_async.notify_one();
}

async fn serve_connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut buffer = Vec::with_capacity(64 * 1024);
    let keep_bodies = matches!(lock(&shared).script, Script::Queue(_));
    loop {
        let Some(request) = read_request(&mut stream, &mut buffer, keep_bodies).await else {
            return;
        };
        let read_at = Instant::now();
        if request.method != "POST" {
            let reply = {
                let mut state = lock(&shared);
                state.listings.push(request.headers);
                state.listing.clone()
            }
            .unwrap_or_else(|| {
                let models =
                    json!({"object": "list", "data": [{"id": "scripted", "object": "model"}]});
                Reply::status(200, models.to_string()).header("content-type", "application/json")
            });
            if !reply.delay.is_zero() {
                tokio::time::sleep(reply.delay).await;
            }
            if write_reply(&mut stream, &reply).await.is_err() {
                return;
            }
            continue;
        }
        let (reply, index) = {
            let mut state = lock(&shared);
            let n = state.served;
            state.served += 1;
            let (reply, turn) = match &mut state.script {
                Script::Queue(queue) => (queue.pop_front(), n),
                Script::Cycle(replies) => {
                    let turn = n % replies.len().max(1);
                    let mut reply = replies
                        .get(turn)
                        .cloned()
                        .unwrap_or_else(|| Reply::status(599, "an empty cycle"));
                    reply.body = reply.body.replace(CALL_ID, &format!("call_{n}"));
                    (Some(reply), turn)
                }
            };
            state.received.push(Received {
                body: request.body,
                headers: request.headers,
                read_at,
                server_time: None,
                turn,
                request_bytes: request.size,
            });
            (reply, state.received.len() - 1)
        };
        told(&shared);
        let reply = match reply {
            Some(reply) => reply,
            None => pushed_turn(&shared).await,
        };
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        let written = write_reply(&mut stream, &reply).await;
        let server_time = read_at.elapsed();
        if let Some(received) = lock(&shared).received.get_mut(index) {
            received.server_time = Some(server_time);
        }
        told(&shared);
        if written.is_err() || reply.status != 200 {
            return;
        }
    }
}

struct Request {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    size: usize,
}

/// Reads one request (head and a `Content-Length` body, kept if asked)
/// and drops it from the buffer; `None` when the peer closed or sent
/// garbage.
async fn read_request(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    keep_body: bool,
) -> Option<Request> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            let head = std::str::from_utf8(&buffer[..end]).ok()?.to_owned();
            let mut lines = head.lines();
            let method = lines.next()?.split(' ').next()?.to_owned();
            let headers: Vec<(String, String)> = lines
                .filter_map(|line| line.split_once(':'))
                .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
                .collect();
            let length = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let total = end + 4 + length;
            while buffer.len() < total {
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buffer.extend_from_slice(&chunk[..n]);
            }
            let body = if keep_body {
                buffer[end + 4..total].to_vec()
            } else {
                Vec::new()
            };
            buffer.drain(..total);
            return Some(Request {
                method,
                headers,
                body,
                size: total,
            });
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

async fn write_reply(stream: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-length: {}\r\n",
        reply.status,
        reason(reply.status),
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.status != 200 {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(reply.body.as_bytes());
    stream.write_all(&bytes).await?;
    stream.flush().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// An SSE body: each chunk as a `data:` event, then `[DONE]`.
pub fn sse(chunks: &[Value]) -> String {
    let mut body = sse_cut(chunks);
    body.push_str("data: [DONE]\n\n");
    body
}

/// An SSE body cut off: no `[DONE]`.
pub fn sse_cut(chunks: &[Value]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}
