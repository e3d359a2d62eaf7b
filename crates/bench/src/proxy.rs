//! `bitselect-bench stdio-proxy --arrivals FILE -- PROGRAM ARGS...`: sits
//! between the agent and an MCP server on stdio, passes every byte on, and
//! notes when each `tools/call` line arrives at the server's side of the
//! pipe. That moment is "the call reached the server": the agent's work is
//! done and only the server's own reading is left.
//!
//! Each arrival is one JSON line `{"at_unix_ns", "tool", "key"}` in FILE,
//! written after the line was passed on so that noting it delays nothing.
//! The server's stdout and stderr are the proxy's own (inherited).

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::BenchError;

/// A `tools/call` as it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrival {
    pub at_unix_ns: u128,
    pub tool: String,
    /// `_meta["ragent/idempotency_key"]`: the agent's call id.
    pub key: Option<String>,
}

pub fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Parses `--arrivals FILE -- PROGRAM ARGS...`.
fn parse(args: &[String]) -> Result<(PathBuf, String, Vec<String>), BenchError> {
    let usage = || BenchError::Usage("stdio-proxy --arrivals FILE -- PROGRAM [ARGS...]".into());
    let [flag, file, dashes, program, rest @ ..] = args else {
        return Err(usage());
    };
    if flag != "--arrivals" || dashes != "--" {
        return Err(usage());
    }
    Ok((PathBuf::from(file), program.clone(), rest.to_vec()))
}

fn arrival(line: &str, at_unix_ns: u128) -> Option<Arrival> {
    // Only parse lines that can be a call: the rest pass untouched.
    if !line.contains("tools/call") {
        return None;
    }
    let message: Value = serde_json::from_str(line).ok()?;
    if message["method"] != "tools/call" {
        return None;
    }
    let params = &message["params"];
    Some(Arrival {
        at_unix_ns,
        tool: params["name"].as_str().unwrap_or_default().to_string(),
        key: params["_meta"][ragent::mcp::IDEMPOTENCY_KEY]
            .as_str()
            .map(str::to_string),
    })
}

pub fn run(args: &[String]) -> Result<i32, BenchError> {
    let (arrivals_path, program, program_args) = parse(args)?;
    let mut arrivals = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&arrivals_path)
        .map_err(|e| BenchError::io(&arrivals_path, e))?;
    let mut child = Command::new(&program)
        .args(&program_args)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| BenchError::io(Path::new(&program), e))?;
    let mut to_server = child
        .stdin
        .take()
        .ok_or_else(|| BenchError::Setup("the server's stdin is not piped".into()))?;
    let stdin = std::io::stdin();
    let mut from_agent = BufReader::new(stdin.lock());
    let mut line = String::new();
    loop {
        line.clear();
        let read = from_agent
            .read_line(&mut line)
            .map_err(|e| BenchError::io(Path::new("stdin"), e))?;
        if read == 0 {
            break;
        }
        let at = unix_ns();
        if to_server
            .write_all(line.as_bytes())
            .and_then(|()| to_server.flush())
            .is_err()
        {
            break;
        }
        if let Some(found) = arrival(line.trim_end(), at) {
            let mut text = serde_json::to_string(&found)?;
            text.push('\n');
            arrivals
                .write_all(text.as_bytes())
                .map_err(|e| BenchError::io(&arrivals_path, e))?;
        }
    }
    // The agent closed our stdin: close the server's and wait for it.
    drop(to_server);
    let status = child
        .wait()
        .map_err(|e| BenchError::io(Path::new(&program), e))?;
    Ok(status.code().unwrap_or(1))
}

/// Every arrival noted in `path` so far.
pub fn read_arrivals(path: &Path) -> Result<Vec<Arrival>, BenchError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(BenchError::io(path, e)),
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(BenchError::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_line_is_noted_with_its_key_and_other_lines_are_not() {
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"update_cart_item","arguments":{},"_meta":{"ragent/idempotency_key":"k1"}}}"#;
        let found = arrival(call, 7).unwrap();
        assert_eq!(found.tool, "update_cart_item");
        assert_eq!(found.key.as_deref(), Some("k1"));
        assert_eq!(found.at_unix_ns, 7);
        assert!(arrival(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, 1).is_none());
    }
}
