//! A server run as a child process, spoken to over its stdin and stdout:
//! MCP's stdio transport, one JSON-RPC message a line.
//!
//! rmcp's own child-process transport decodes every message through its
//! generic message type, which buffers the message twice (an untagged enum
//! around flattened fields) and tries fifteen result types before a tool's.
//! A tool's result is the one large message a server sends: a search page
//! of 12 KB took 130 µs to decode that way and takes 58 µs decoded as what
//! it is. So a tool's result is decoded straight, and every other message
//! through rmcp's own decoding.

use std::io;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde::{Deserialize, Deserializer};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

/// The longest line read, as rmcp's: a server that never ends a line
/// cannot fill the memory; its line is dropped and the session goes on.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long a server has to exit once its input is closed, and again once
/// asked to stop, before it is killed (the MCP stdio shutdown).
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A running server process and its two pipes.
pub struct ChildProcess {
    /// Killed when dropped; `None` once it has exited.
    child: Option<Child>,
    lines: Lines<ChildStdout>,
    /// `None` once closed: the server reads the end of its input.
    stdin: Arc<Mutex<Option<ChildStdin>>>,
}

impl ChildProcess {
    /// Starts `command` with its stdin and stdout piped and its stderr to
    /// `stderr`; the stderr pipe comes back when `stderr` is a pipe.
    pub fn spawn(
        mut command: Command,
        stderr: Stdio,
    ) -> io::Result<(ChildProcess, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let taken = |what: &str| io::Error::other(format!("the child's {what} was not piped"));
        let stdin = child.stdin.take().ok_or_else(|| taken("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| taken("stdout"))?;
        let stderr = child.stderr.take();
        Ok((
            ChildProcess {
                child: Some(child),
                lines: Lines::new(stdout),
                stdin: Arc::new(Mutex::new(Some(stdin))),
            },
            stderr,
        ))
    }

    /// The server's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Closes the server's input, then asks it to stop, then kills it,
    /// each after [`EXIT_GRACE`] without its exit.
    async fn shut_down(&mut self) -> io::Result<()> {
        drop(self.stdin.lock().await.take());
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        let stopped =
            exits_within(child).await? || (ask_to_stop(child) && exits_within(child).await?);
        if !stopped {
            child.kill().await?;
        }
        self.child = None;
        Ok(())
    }
}

/// Sends `child` SIGTERM; false where that cannot be done.
fn ask_to_stop(child: &Child) -> bool {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|pid| libc::pid_t::try_from(pid).ok()) {
        // SAFETY: `kill` takes no pointers; the pid is our own child's,
        // not yet reaped (`wait` has not returned), so not reused.
        return unsafe { libc::kill(pid, libc::SIGTERM) } == 0;
    }
    #[cfg(not(unix))]
    let _ = child;
    false
}

/// Whether `child` exited within [`EXIT_GRACE`].
async fn exits_within(child: &mut Child) -> io::Result<bool> {
    match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(status) => status.map(|_| true),
        Err(_) => Ok(false),
    }
}

impl Transport<RoleClient> for ChildProcess {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = Arc::clone(&self.stdin);
        async move {
            let mut line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let pipe = stdin.as_mut().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotConnected, "the server's input is closed")
            })?;
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            match self.lines.next().await {
                Ok(Line::Whole) => {}
                Ok(Line::TooLong) => {
                    tracing::warn!(
                        max_bytes = MAX_LINE_BYTES,
                        "the server sent a message longer than the limit; it was dropped"
                    );
                    continue;
                }
                Ok(Line::End) => return None,
                Err(e) => {
                    tracing::warn!("reading from the server: {e}");
                    return None;
                }
            }
            let decoded = decode(&self.lines.line);
            self.lines.line.clear();
            match decoded {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                // Nothing to answer it with: it has no id this side can trust.
                Err(e) => tracing::warn!("the server sent a line that is no MCP message: {e}"),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}

/// What one read of a line gave.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A whole line, newline included, is in [`Lines::line`].
    Whole,
    /// A line longer than [`MAX_LINE_BYTES`] was dropped.
    TooLong,
    /// The server closed its output.
    End,
}

/// Lines of at most [`MAX_LINE_BYTES`]. A read cancelled midway (the
/// session polls it beside its other work) keeps what it read in `line`,
/// and the next read goes on from there.
struct Lines<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of a line found too long.
    skipping: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(read: R) -> Self {
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            skipping: false,
        }
    }

    async fn next(&mut self) -> io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::End);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let ended = newline.is_some();
            let read = if self.skipping {
                self.skipping = !ended;
                None
            } else if self.line.len().saturating_add(take) > MAX_LINE_BYTES {
                self.line.clear();
                self.skipping = !ended;
                Some(Line::TooLong)
            } else {
                self.line.extend_from_slice(&available[..take]);
                ended.then_some(Line::Whole)
            };
            self.read.consume(take);
            if let Some(read) = read {
                return Ok(read);
            }
        }
    }
}

/// A response carrying a tool's result, as the wire has it.
#[derive(Deserialize)]
struct ToolAnswer {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
    /// A message with a method or an error beside its result is not a
    /// response; rmcp's decoding refuses it, and so does this.
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// A line as a message; `None` for a blank line.
fn decode(line: &[u8]) -> Result<Option<ServerJsonRpcMessage>, serde_json::Error> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // JSON text may begin with a byte order mark (RFC 8259, 8.1).
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    // rmcp tries every result type before a tool's and finds no other that
    // a tool's result satisfies (each needs a field a tool's result lacks),
    // so decoding it straight gives the same message.
    if let Ok(answer) = serde_json::from_slice::<ToolAnswer>(line)
        && !answer.method
        && !answer.error
    {
        return Ok(Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: answer.jsonrpc,
            id: answer.id,
            result: ServerResult::CallToolResult(answer.result),
        })));
    }
    serde_json::from_slice(line).map(Some)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// rmcp's own decoding of the same line.
    fn decoded_by_rmcp(line: &str) -> Value {
        let message: ServerJsonRpcMessage = serde_json::from_str(line).unwrap();
        serde_json::to_value(message).unwrap()
    }

    fn decoded(line: &str) -> Value {
        serde_json::to_value(decode(line.as_bytes()).unwrap().unwrap()).unwrap()
    }

    fn is_tool_result(line: &str) -> bool {
        matches!(
            decode(line.as_bytes()).unwrap(),
            Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CallToolResult(_),
                ..
            }))
        )
    }

    #[test]
    fn a_tool_result_decodes_as_rmcp_decodes_it() {
        let lines = [
            json!({"jsonrpc": "2.0", "id": 7, "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": "找到 2 个型号"}],
                "structuredContent": {"items": [{"spuCode": "IPHONE-17", "minPriceFen": 679900}], "matched": 2},
                "isError": false,
                "_meta": {"shop/version": "3"}}}),
            json!({"jsonrpc": "2.0", "id": "call-1", "result": {
                "content": [{"type": "text", "text": "库存不足"}], "isError": true}}),
            json!({"jsonrpc": "2.0", "id": 8, "result": {"structuredContent": null}}),
            json!({"jsonrpc": "2.0", "id": 9, "result": {"content": []}}),
        ];
        for line in lines.map(|l| l.to_string()) {
            assert!(is_tool_result(&line), "{line}");
            assert_eq!(decoded(&line), decoded_by_rmcp(&line), "{line}");
        }
    }

    #[test]
    fn every_other_message_is_left_to_rmcp() {
        let lines = [
            // Results of other requests, and an empty one.
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}),
            json!({"jsonrpc": "2.0", "id": 3, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "shop", "version": "1"}}}),
            // A tool that asks the user mid-call is no finished result.
            json!({"jsonrpc": "2.0", "id": 4, "result": {
                "resultType": "input_required",
                "inputRequests": {"address": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "Which address?",
                    "requestedSchema": {"type": "object", "properties": {}}}}}}}),
            // Requests, notifications and errors from the server.
            json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32602, "message": "bad"}}),
        ];
        for line in lines.map(|l| l.to_string()) {
            assert!(!is_tool_result(&line), "{line}");
            assert_eq!(decoded(&line), decoded_by_rmcp(&line), "{line}");
        }
    }

    #[test]
    fn a_result_beside_a_method_or_an_error_is_refused_as_rmcp_refuses_it() {
        for line in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "result": {"content": []}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"},
                   "result": {"content": []}}),
        ] {
            let line = line.to_string();
            assert!(decode(line.as_bytes()).is_err(), "{line}");
            assert!(serde_json::from_str::<ServerJsonRpcMessage>(&line).is_err());
        }
    }

    #[test]
    fn blank_lines_are_skipped_and_line_ends_and_a_byte_order_mark_are_allowed() {
        assert!(decode(b"\n").unwrap().is_none());
        assert!(decode(b"  \r\n").unwrap().is_none());
        let line = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}).to_string();
        let framed = format!("\u{feff}{line}\r\n");
        assert!(is_tool_result(&framed));
        assert!(decode(b"{\"jsonrpc\": ").is_err());
    }

    #[tokio::test]
    async fn a_line_too_long_is_dropped_and_the_next_one_read() {
        let mut wire = vec![b'x'; MAX_LINE_BYTES + 10];
        wire.extend_from_slice(b"\n{\"next\":1}\nlast");
        let mut lines = Lines::new(&wire[..]);
        assert_eq!(lines.next().await.unwrap(), Line::TooLong);
        assert_eq!(lines.next().await.unwrap(), Line::Whole);
        assert_eq!(lines.line, b"{\"next\":1}\n");
        lines.line.clear();
        // A last line without its newline is no message.
        assert_eq!(lines.next().await.unwrap(), Line::End);
    }

    #[tokio::test]
    async fn a_server_that_ends_with_its_input_is_closed_at_once() {
        let (mut server, _) = ChildProcess::spawn(Command::new("cat"), Stdio::null()).unwrap();
        assert!(server.id().is_some());
        let started = std::time::Instant::now();
        server.close().await.unwrap();
        assert!(started.elapsed() < EXIT_GRACE, "{:?}", started.elapsed());
        assert_eq!(
            server.id(),
            None,
            "the server has exited and been waited for"
        );
        let sent = server.send(ClientJsonRpcMessage::notification(
            rmcp::model::ClientNotification::InitializedNotification(Default::default()),
        ));
        assert_eq!(sent.await.unwrap_err().kind(), io::ErrorKind::NotConnected);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_server_that_outlives_its_input_is_asked_to_stop() {
        // It never reads its input, and says so when asked to stop.
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "trap 'kill $!; echo asked to stop >&2; exit 0' TERM; sleep 60 >/dev/null 2>&1 & wait",
        ]);
        let (mut server, stderr) = ChildProcess::spawn(command, Stdio::piped()).unwrap();
        let started = std::time::Instant::now();
        server.close().await.unwrap();
        let took = started.elapsed();
        assert!(took >= EXIT_GRACE && took < EXIT_GRACE * 2, "{took:?}");
        assert_eq!(server.id(), None);
        let mut said = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stderr.unwrap(), &mut said)
            .await
            .unwrap();
        assert_eq!(said, "asked to stop\n");
    }
}
