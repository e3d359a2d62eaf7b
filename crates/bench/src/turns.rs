//! The turns the benchmarks' model streams: the shapes of a real model's
//! answers, smallest first (one chunk of call or text, then the finish),
//! so that every figure measures the same work. The model itself is the
//! workspace's one scripted model (`test_support::ScriptedModel`), run in a
//! cycle on the bench's runtime.

use serde_json::{Value, json};
use test_support::model::CALL_ID;

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
