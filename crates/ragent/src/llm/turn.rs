//! A model turn's calls made fit to store and send back. Providers reject
//! a whole request whose history holds a call's arguments that are not a
//! JSON object, and pair results with calls by id; models send both wrong
//! (truncated arguments, a bare array, ids repeated or left empty).

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::ToolCallRequest;

/// Gives every call of one turn an id no other call of the turn has, so
/// each result is paired with its own call. The first call with an id
/// keeps it; a repeat becomes `<id>_2`, `<id>_3`, ... and an empty id
/// `call_<position>`, skipping any id another call of the turn came with.
pub fn unique_call_ids(calls: &mut [ToolCallRequest]) {
    let came_with: HashSet<String> = calls
        .iter()
        .filter(|c| !c.id.is_empty())
        .map(|c| c.id.clone())
        .collect();
    let mut taken: HashSet<String> = HashSet::with_capacity(calls.len());
    for (position, call) in calls.iter_mut().enumerate() {
        if !call.id.is_empty() && !taken.contains(&call.id) {
            taken.insert(call.id.clone());
            continue;
        }
        let (base, first) = if call.id.is_empty() {
            ("call".to_string(), position)
        } else {
            (call.id.clone(), 2)
        };
        let fresh = (first..)
            .map(|n| format!("{base}_{n}"))
            .find(|id| !taken.contains(id) && !came_with.contains(id))
            .unwrap_or_default();
        taken.insert(fresh.clone());
        call.id = fresh;
    }
}

/// Why a call's arguments cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentsProblem {
    /// Not JSON at all (often cut off), with the parser's complaint.
    NotJson(String),
    /// JSON, but not an object: the kind of value it is.
    NotAnObject(&'static str),
}

/// A call's arguments as the object they must be. `""` (how many models
/// say "no arguments") is the empty object.
pub fn parse_object(text: &str) -> Result<Map<String, Value>, ArgumentsProblem> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(ArgumentsProblem::NotAnObject(kind(&other))),
        Err(error) => Err(ArgumentsProblem::NotJson(error.to_string())),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `text` is one JSON object and nothing else.
pub fn is_object_text(text: &str) -> bool {
    text.trim_start().starts_with('{') && serde_json::from_str::<IgnoredAny>(text).is_ok()
}

/// What is sent back to the model for a call's arguments: the text as it
/// came when it is an object, `{}` otherwise. What was wrong is told in
/// the call's result, never by sending the text back.
pub fn sendable_arguments(text: &str) -> &str {
    if is_object_text(text) { text } else { "{}" }
}

/// The turn's calls as they are stored and sent back: arguments that are
/// not an object become `{}`. Borrowed when every call is fine.
pub fn sendable_calls(calls: &[ToolCallRequest]) -> Cow<'_, [ToolCallRequest]> {
    if calls.iter().all(|c| is_object_text(&c.arguments)) {
        return Cow::Borrowed(calls);
    }
    Cow::Owned(
        calls
            .iter()
            .map(|c| ToolCallRequest {
                arguments: sendable_arguments(&c.arguments).to_string(),
                ..c.clone()
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(id: &str, arguments: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.into(),
            name: "shop__query_cart".into(),
            arguments: arguments.into(),
        }
    }

    fn ids(calls: &[ToolCallRequest]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn repeated_and_empty_call_ids_are_made_unique_within_the_turn() {
        let mut calls = vec![
            call("a", "{}"),
            call("a", "{}"),
            call("a_2", "{}"),
            call("", "{}"),
            call("", "{}"),
            call("call_4", "{}"),
        ];
        unique_call_ids(&mut calls);
        assert_eq!(
            ids(&calls),
            vec!["a", "a_3", "a_2", "call_3", "call_5", "call_4"]
        );
        let mut fine = vec![call("x", "{}"), call("y", "{}")];
        unique_call_ids(&mut fine);
        assert_eq!(ids(&fine), vec!["x", "y"]);
    }

    #[test]
    fn arguments_that_are_not_an_object_are_named_and_never_sent_back() {
        assert_eq!(parse_object(""), Ok(Map::new()));
        assert_eq!(
            parse_object(" {\"a\":1} ").map(Value::Object),
            Ok(json!({"a": 1}))
        );
        assert_eq!(
            parse_object("[1,2]"),
            Err(ArgumentsProblem::NotAnObject("array"))
        );
        assert_eq!(
            parse_object("\"x\""),
            Err(ArgumentsProblem::NotAnObject("string"))
        );
        assert!(matches!(
            parse_object("{\"a\":"),
            Err(ArgumentsProblem::NotJson(_))
        ));
        let calls = vec![
            call("a", "{\"keyword\":\"耳机\"}"),
            call("b", "{\"keyword\":"),
            call("c", "[1]"),
            call("d", ""),
            call("e", "{} {}"),
        ];
        let sendable = sendable_calls(&calls);
        let sent: Vec<&str> = sendable.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(sent, vec!["{\"keyword\":\"耳机\"}", "{}", "{}", "{}", "{}"]);
        assert!(matches!(sendable_calls(&calls[..1]), Cow::Borrowed(_)));
    }
}
