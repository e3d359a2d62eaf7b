//! A scripted OpenAI-compatible model on a loopback port: each chat request
//! is answered with the next scripted turn as a server-sent event stream, and
//! every request is kept so a test can read what the model was sent.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// One answer of the model.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Plain assistant text.
    Text(String),
    /// Tool calls in one turn: (call id, `server__tool`, arguments).
    ToolCalls(Vec<(String, String, Value)>),
}

pub fn text(content: &str) -> Turn {
    Turn::Text(content.to_owned())
}

pub fn tool_call(id: &str, name: &str, arguments: Value) -> Turn {
    Turn::ToolCalls(vec![(id.to_owned(), name.to_owned(), arguments)])
}

#[derive(Default)]
struct Script {
    turns: VecDeque<Turn>,
    requests: Vec<Value>,
}

/// The running fake model; it stops with the test process.
pub struct ScriptedModel {
    url: String,
    state: Arc<(Mutex<Script>, Condvar)>,
}

impl ScriptedModel {
    pub fn start(turns: Vec<Turn>) -> std::io::Result<ScriptedModel> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/v1", listener.local_addr()?);
        let state = Arc::new((
            Mutex::new(Script {
                turns: turns.into(),
                requests: Vec::new(),
            }),
            Condvar::new(),
        ));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || {
                    if let Err(error) = answer(stream, &shared) {
                        eprintln!("scripted model: {error}");
                    }
                });
            }
        });
        Ok(ScriptedModel { url, state })
    }

    /// The base URL to put in the app's model settings.
    pub fn base_url(&self) -> &str {
        &self.url
    }

    /// The chat requests received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.state.0).requests.clone()
    }

    /// Waits until `count` chat requests have arrived.
    pub fn wait_for_requests(&self, count: usize, limit: Duration) -> Vec<Value> {
        let (script, arrived) = &*self.state;
        let guard = lock(script);
        let (guard, _) = arrived
            .wait_timeout_while(guard, limit, |s| s.requests.len() < count)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        guard.requests.clone()
    }
}

fn lock(script: &Mutex<Script>) -> std::sync::MutexGuard<'_, Script> {
    script
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn answer(stream: TcpStream, state: &(Mutex<Script>, Condvar)) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut stream = stream;

    if request_line.starts_with("GET") {
        // A reachability check: list one model.
        let models = json!({"object": "list", "data": [{"id": "scripted", "object": "model"}]});
        return respond(
            &mut stream,
            "200 OK",
            "application/json",
            &models.to_string(),
        );
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (script, arrived) = state;
    let turn = {
        let mut script = lock(script);
        script.requests.push(request);
        arrived.notify_all();
        script.turns.pop_front()
    };
    match turn {
        Some(turn) => respond(&mut stream, "200 OK", "text/event-stream", &sse(&turn)),
        None => respond(
            &mut stream,
            "500 Internal Server Error",
            "application/json",
            r#"{"error":{"message":"the scripted model has no more turns"}}"#,
        ),
    }
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &str) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// The turn as OpenAI streams it: deltas, a finish reason, then `[DONE]`.
fn sse(turn: &Turn) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
    };
    let mut chunks = vec![chunk(json!({"role": "assistant"}), Value::Null)];
    let finish = match turn {
        Turn::Text(content) => {
            // Two pieces, so the page really streams.
            let split = content
                .char_indices()
                .nth(content.chars().count() / 2)
                .map_or(content.len(), |(i, _)| i);
            chunks.push(chunk(json!({"content": &content[..split]}), Value::Null));
            chunks.push(chunk(json!({"content": &content[split..]}), Value::Null));
            "stop"
        }
        Turn::ToolCalls(calls) => {
            for (index, (id, name, arguments)) in calls.iter().enumerate() {
                let call = json!({
                    "index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}
                });
                chunks.push(chunk(json!({"tool_calls": [call]}), Value::Null));
            }
            "tool_calls"
        }
    };
    chunks.push(chunk(json!({}), json!(finish)));
    let mut body: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    body
}
