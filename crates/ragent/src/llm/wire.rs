//! The chat-completions request body in OpenAI's shape, borrowed from a
//! [`ChatRequest`] and written straight to JSON: the history and the tool
//! schemas are not copied into an intermediate JSON tree on every turn.

use serde::Serialize;
use serde_json::value::RawValue;

use super::{ChatMessage, ChatRequest, ToolCallRequest, ToolSpec};

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// `null` beside tool calls when the model said nothing.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    r#type: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct Tool<'a> {
    r#type: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
}

fn message(message: &ChatMessage) -> Message<'_> {
    match message {
        ChatMessage::System { content } => Message::System { content },
        ChatMessage::User { content } => Message::User { content },
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => Message::Assistant {
            content: (!content.is_empty() || tool_calls.is_empty()).then_some(content.as_str()),
            tool_calls: tool_calls.iter().map(call).collect(),
        },
        ChatMessage::Tool {
            tool_call_id,
            content,
        } => Message::Tool {
            tool_call_id,
            content,
        },
    }
}

fn call(call: &ToolCallRequest) -> Call<'_> {
    Call {
        id: &call.id,
        r#type: "function",
        function: CallFunction {
            name: &call.name,
            arguments: &call.arguments,
        },
    }
}

fn tool(spec: &ToolSpec) -> Tool<'_> {
    Tool {
        r#type: "function",
        function: Function {
            name: &spec.name,
            description: &spec.description,
            parameters: &spec.parameters,
        },
    }
}

/// The JSON body of a streaming request for `model`.
pub fn request_body(model: &str, request: &ChatRequest) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&Body {
        model,
        stream: true,
        messages: request.messages.iter().map(|m| message(m)).collect(),
        tools: request.tools.iter().map(tool).collect(),
    })
}
