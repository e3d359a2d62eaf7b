//! Server-sent events framing and the assembly of a chat-completions
//! stream into one [`AssistantTurn`]. Pure: bytes in, values out, so the
//! tricky parts (split UTF-8, tool-call argument fragments) are unit-tested.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{AssistantTurn, LlmError, TokenUsage, ToolCallRequest};

/// Splits a byte stream into SSE `data` payloads. Bytes may arrive cut
/// anywhere, even inside a UTF-8 character, so lines are decoded only once
/// complete. A line ends with `\r\n`, `\n` or a bare `\r`, as the SSE
/// format allows; a `\r\n` cut between two reads is still one line end.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    data: Vec<String>,
    /// The last line ended with `\r`: a `\n` right after it belongs to
    /// that line end.
    after_cr: bool,
}

impl SseParser {
    /// Feeds bytes; returns the data of every event they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        for i in 0..self.pending.len() {
            let byte = self.pending[i];
            if byte == b'\n' && self.after_cr && i == start {
                start = i + 1;
            } else if byte == b'\n' || byte == b'\r' {
                let line = String::from_utf8_lossy(&self.pending[start..i]).into_owned();
                start = i + 1;
                self.line(&line, &mut events);
                self.after_cr = byte == b'\r';
                continue;
            }
            self.after_cr = false;
        }
        self.pending.drain(..start);
        events
    }

    /// The stream ended: an event not closed by a blank line still counts.
    pub fn finish(&mut self) -> Vec<String> {
        let mut events = Vec::new();
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.line(&String::from_utf8_lossy(&rest), &mut events);
        }
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                events.push(self.data.join("\n"));
                self.data.clear();
            }
            return;
        }
        if line.starts_with(':') {
            return; // a comment, used as keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            self.data.push(value.to_string());
        }
    }
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    error: Option<Value>,
    /// Sent in a last chunk without choices when the request asked for it
    /// (`stream_options.include_usage`); some servers send `null` before.
    #[serde(default)]
    usage: Option<TokenUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// What one SSE payload meant.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Text to show now (may be empty when the chunk carried none).
    Text(String),
    /// `[DONE]`: the turn is complete.
    Done,
}

/// Builds one assistant turn from its chunks. Tool calls arrive as
/// fragments keyed by `index`: the first carries the id and name, later
/// ones append to the arguments text.
#[derive(Debug, Default)]
pub struct TurnAssembler {
    text: String,
    calls: BTreeMap<usize, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
    done: bool,
}

impl TurnAssembler {
    pub fn apply(&mut self, data: &str) -> Result<Step, LlmError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(Step::Done);
        }
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|e| LlmError::Protocol(format!("{e}: {}", preview(data))))?;
        if let Some(error) = chunk.error {
            return Err(LlmError::Api(error_message(&error)));
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        let mut text = String::new();
        // Only the first choice is used: the client never asks for n > 1.
        if let Some(choice) = chunk.choices.into_iter().next() {
            if let Some(delta) = choice.delta {
                if let Some(content) = delta.content {
                    text.push_str(&content);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.merge_call(call);
                }
            }
            // Some servers send `""` in every chunk before the real reason:
            // that says nothing, and taking it would call a cut-off
            // stream complete.
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        self.text.push_str(&text);
        Ok(Step::Text(text))
    }

    fn merge_call(&mut self, delta: ToolCallDelta) {
        // A server that omits `index` sends each call whole or starts a
        // new call with a new id; otherwise fragments continue the last.
        let index = delta.index.unwrap_or_else(|| {
            let last = self.calls.iter().next_back();
            match (last, &delta.id) {
                (Some((&i, call)), Some(id)) if !call.id.is_empty() && &call.id != id => i + 1,
                (Some((&i, _)), _) => i,
                (None, _) => 0,
            }
        });
        let slot = self.calls.entry(index).or_default();
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            slot.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                // A name comes whole in one delta, in pieces over several
                // (`pay_` + `order`), or, from some servers, whole again in
                // every delta. A piece equal to the whole name so far is
                // taken as that repeat and not joined: `pay_order` twice is
                // `pay_order`. Only a name that is one piece written twice
                // (`ab` sent as `ab` + `ab`) would read otherwise, and tool
                // names (`server__tool`) are not made so.
                if name != slot.name {
                    slot.name.push_str(&name);
                }
            }
            if let Some(arguments) = function.arguments {
                slot.arguments.push_str(&arguments);
            }
        }
    }

    /// Whether the stream said it was complete (`[DONE]` or a finish reason).
    pub fn is_complete(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    pub fn finish(self) -> AssistantTurn {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, call)| ToolCallRequest {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        AssistantTurn {
            text: self.text,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

/// What a successful answer that held no event at all meant: a provider
/// that reports a failure with status 200 and a JSON body
/// (`{"error":{"message":...}}`) is heard, with its own words; anything
/// else is named as not a stream.
pub fn not_a_stream(body: &[u8]) -> LlmError {
    let text = String::from_utf8_lossy(body);
    let reported = serde_json::from_str::<Value>(&text).ok().and_then(|json| {
        json.get("error")
            .filter(|e| !e.is_null())
            .map(error_message)
            .or_else(|| {
                json.get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
    });
    match reported {
        Some(message) => LlmError::Api(message),
        None => LlmError::Protocol(format!(
            "the endpoint answered without an event stream: {}",
            preview(text.trim())
        )),
    }
}

/// An error object's `message`, or the error as it came.
fn error_message(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| error.to_string())
}

fn preview(data: &str) -> String {
    data.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn events_split_across_chunks_and_inside_a_character_are_rejoined() {
        let stream = "data: {\"a\":\"比特\"}\n\n: keep-alive\n\ndata: [DONE]\n\n".as_bytes();
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        // Feed byte by byte: every split point, including inside 比.
        for byte in stream {
            events.extend(parser.push(std::slice::from_ref(byte)));
        }
        events.extend(parser.finish());
        assert_eq!(
            events,
            vec!["{\"a\":\"比特\"}".to_string(), "[DONE]".into()]
        );
    }

    #[test]
    fn crlf_lines_multi_line_data_and_an_unterminated_last_event() {
        let mut parser = SseParser::default();
        let mut events = parser.push(b"event: x\r\ndata: one\r\ndata: two\r\n\r\ndata:three");
        events.extend(parser.finish());
        assert_eq!(events, vec!["one\ntwo".to_string(), "three".into()]);
    }

    fn chunk_tool(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> String {
        let mut call = serde_json::json!({"index": index, "function": {"arguments": args}});
        if let Some(id) = id {
            call["id"] = id.into();
            call["type"] = "function".into();
        }
        if let Some(name) = name {
            call["function"]["name"] = name.into();
        }
        serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}).to_string()
    }

    #[test]
    fn tool_call_fragments_are_merged_by_index() {
        let mut turn = TurnAssembler::default();
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"好的，"}}]}"#
                .to_string(),
            r#"{"choices":[{"index":0,"delta":{"content":"我来查。"}}]}"#.to_string(),
            chunk_tool(0, Some("call_a"), Some("shop__search_product"), ""),
            chunk_tool(1, Some("call_b"), Some("shop__query_cart"), "{}"),
            chunk_tool(0, None, None, "{\"keyword\":"),
            chunk_tool(0, None, None, "\"iPhone 17\"}"),
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.to_string(),
        ];
        let mut shown = String::new();
        for chunk in &chunks {
            match turn.apply(chunk).unwrap() {
                Step::Text(text) => shown.push_str(&text),
                Step::Done => unreachable!(),
            }
        }
        assert!(turn.is_complete());
        assert_eq!(turn.apply("[DONE]").unwrap(), Step::Done);
        assert_eq!(shown, "好的，我来查。");
        assert_eq!(
            turn.finish(),
            AssistantTurn {
                text: "好的，我来查。".into(),
                tool_calls: vec![
                    ToolCallRequest {
                        id: "call_a".into(),
                        name: "shop__search_product".into(),
                        arguments: "{\"keyword\":\"iPhone 17\"}".into(),
                    },
                    ToolCallRequest {
                        id: "call_b".into(),
                        name: "shop__query_cart".into(),
                        arguments: "{}".into(),
                    },
                ],
                finish_reason: Some("tool_calls".into()),
                usage: None,
            }
        );
    }

    #[test]
    fn calls_without_index_or_id_still_assemble() {
        let mut turn = TurnAssembler::default();
        let whole = |id: &str, name: &str| {
            serde_json::json!({"choices": [{"delta": {"tool_calls": [
                {"id": id, "function": {"name": name, "arguments": "{}"}}
            ]}}]})
            .to_string()
        };
        turn.apply(&whole("x1", "a__b")).unwrap();
        turn.apply(&whole("x2", "a__c")).unwrap();
        turn.apply(&chunk_tool(2, None, Some("a__d"), "{}"))
            .unwrap();
        let calls = turn.finish().tool_calls;
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, vec!["x1", "x2", "call_2"]);
    }

    #[test]
    fn a_bare_cr_ends_a_line_and_a_crlf_cut_between_reads_is_one_line_end() {
        let mut parser = SseParser::default();
        let mut events = parser.push(b"data: x\r\rdata: y\r\r: ping\r\rdata: a\r");
        events.extend(parser.push(b"\ndata: b\r"));
        events.extend(parser.push(b"\n\r\n"));
        events.extend(parser.finish());
        assert_eq!(events, vec!["x".to_string(), "y".into(), "a\nb".into()]);
    }

    #[test]
    fn an_empty_finish_reason_is_no_finish_reason() {
        let mut turn = TurnAssembler::default();
        turn.apply(r#"{"choices":[{"index":0,"delta":{"content":"半"},"finish_reason":""}]}"#)
            .unwrap();
        assert!(!turn.is_complete(), "a stream cut here is not complete");
        turn.apply(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#)
            .unwrap();
        turn.apply(r#"{"choices":[{"index":0,"delta":{},"finish_reason":""}]}"#)
            .unwrap();
        assert!(turn.is_complete());
        assert_eq!(turn.finish().finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn a_name_repeated_whole_in_every_delta_is_not_doubled_and_pieces_are_joined() {
        let mut turn = TurnAssembler::default();
        // Whole in every delta, beside the argument fragments.
        turn.apply(&chunk_tool(0, Some("c1"), Some("shop__pay_order"), ""))
            .unwrap();
        turn.apply(&chunk_tool(
            0,
            Some("c1"),
            Some("shop__pay_order"),
            "{\"orderNo\":",
        ))
        .unwrap();
        turn.apply(&chunk_tool(0, None, Some("shop__pay_order"), "\"A1\"}"))
            .unwrap();
        // In pieces.
        turn.apply(&chunk_tool(1, Some("c2"), Some("shop__pay_"), ""))
            .unwrap();
        turn.apply(&chunk_tool(1, None, Some("order"), "{}"))
            .unwrap();
        let names: Vec<(String, String)> = turn
            .finish()
            .tool_calls
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect();
        assert_eq!(
            names,
            vec![
                (
                    "shop__pay_order".to_string(),
                    "{\"orderNo\":\"A1\"}".to_string()
                ),
                ("shop__pay_order".to_string(), "{}".to_string()),
            ]
        );
    }

    #[test]
    fn the_usage_of_the_last_chunk_is_read() {
        let mut turn = TurnAssembler::default();
        turn.apply(r#"{"choices":[{"index":0,"delta":{"content":"好"}}],"usage":null}"#)
            .unwrap();
        turn.apply(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#)
            .unwrap();
        turn.apply(r#"{"choices":[],"usage":{"prompt_tokens":1234,"completion_tokens":5,"total_tokens":1239}}"#)
            .unwrap();
        assert_eq!(
            turn.finish().usage,
            Some(TokenUsage {
                prompt_tokens: 1234,
                completion_tokens: 5
            })
        );
    }

    #[test]
    fn a_json_body_instead_of_a_stream_reports_the_providers_message() {
        assert_eq!(
            not_a_stream(br#"{"error":{"message":"Insufficient balance","type":"billing"}}"#),
            LlmError::Api("Insufficient balance".into())
        );
        assert_eq!(
            not_a_stream(b"{\n  \"error\": \"model not found\"\n}\n"),
            LlmError::Api("model not found".into())
        );
        assert!(matches!(
            not_a_stream(b"<html>bad gateway</html>"),
            LlmError::Protocol(_)
        ));
    }

    #[test]
    fn an_error_chunk_and_garbage_are_reported() {
        let mut turn = TurnAssembler::default();
        assert_eq!(
            turn.apply(r#"{"error":{"message":"rate limited"}}"#),
            Err(LlmError::Api("rate limited".into()))
        );
        assert!(matches!(turn.apply("not json"), Err(LlmError::Protocol(_))));
        assert!(!turn.is_complete());
    }
}
