//! Model turns as OpenAI streams them (chunk builders), and what a test
//! reads back from a chat request the model received.

use serde_json::{Value, json};

pub fn ev_text(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]})
}

pub fn ev_finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// The last chunk of a stream that was asked for its usage.
pub fn ev_usage(prompt_tokens: u64, completion_tokens: u64) -> Value {
    json!({"choices": [], "usage": {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens
    }})
}

/// A tool call as a real server streams it: id and name first, then the
/// arguments text in two fragments.
pub fn ev_tool_call(index: usize, id: &str, name: &str, arguments: &str) -> Vec<Value> {
    let chars: Vec<char> = arguments.chars().collect();
    let (head, tail) = chars.split_at(chars.len() / 2);
    let head: String = head.iter().collect();
    let tail: String = tail.iter().collect();
    vec![
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}
        ]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": head}}
        ]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": tail}}
        ]}}]}),
    ]
}

/// A turn that answers in text (streamed in two pieces).
pub fn text_turn(text: &str) -> Vec<Value> {
    let chars: Vec<char> = text.chars().collect();
    let (a, b) = chars.split_at(chars.len() / 2);
    vec![
        ev_text(&a.iter().collect::<String>()),
        ev_text(&b.iter().collect::<String>()),
        ev_finish("stop"),
    ]
}

/// A turn that proposes calls: (model call id, `server__tool`, arguments).
pub fn calls_turn(say: &str, calls: &[(&str, &str, Value)]) -> Vec<Value> {
    let mut chunks = Vec::new();
    if !say.is_empty() {
        chunks.push(ev_text(say));
    }
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        chunks.extend(ev_tool_call(index, id, name, &arguments.to_string()));
    }
    chunks.push(ev_finish("tool_calls"));
    chunks
}

/// The tool results in a request: (tool_call_id, content), in order.
pub fn tool_results(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The content of the request's tool result for one call.
pub fn tool_result(request: &Value, tool_call_id: &str) -> String {
    tool_results(request)
        .into_iter()
        .find(|(id, _)| id == tool_call_id)
        .map(|(_, content)| content)
        .unwrap_or_else(|| panic!("no tool result for {tool_call_id} in {request:#}"))
}

/// The roles of the request's messages, in order.
pub fn roles(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect()
}

/// The texts of the request's user messages.
pub fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// The names of the tools offered in a request.
pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}
