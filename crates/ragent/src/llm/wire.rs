//! The chat-completions request body in OpenAI's shape, borrowed from a
//! [`ChatRequest`] and written straight to JSON: the history and the tool
//! schemas are not copied into an intermediate JSON tree on every turn.
//!
//! A session's messages go out again on every turn and never change (the
//! store only appends), so each message is written to JSON once and kept
//! while the message lives ([`MessageTexts`]): a turn copies the
//! conversation instead of escaping all of it again (docs/benchmarks.md).
//! A run offers the same tools on every turn, so their JSON is kept too,
//! for as long as the run's list lives.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use serde::Serialize;
use serde_json::value::RawValue;

use super::{ChatMessage, ChatRequest, ToolCallRequest, ToolSpec, turn};

/// The whole body in one struct: what [`MessageTexts::request_body`]
/// writes piece by piece.
#[cfg(test)]
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
}

#[cfg(test)]
#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
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
            // Calls are stored with sendable arguments; this also covers
            // messages stored before that was so.
            arguments: turn::sendable_arguments(&call.arguments),
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

/// Each message's JSON, found by the message's allocation. An entry holds
/// a weak reference, so that allocation cannot be reused for another
/// message while the entry exists; entries of dropped messages are let go
/// once they outnumber the live ones.
#[derive(Debug, Default)]
pub struct MessageTexts {
    texts: Mutex<HashMap<usize, KeptText, ByAddress>>,
    /// The tools' JSON array, and the list it was written from.
    tools: Mutex<Option<KeptTools>>,
    /// The last body's length: the next is about as long, so it is
    /// written into room for it rather than grown (and copied) as it goes.
    last_len: AtomicUsize,
}

/// Hashes an allocation's address. Addresses are distinct and no one picks
/// them to collide, so a multiplication spreads them well enough; the
/// default hasher cost more than the lookup it serves, once per message
/// of every request.
#[derive(Debug, Default, Clone, Copy)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
        self.write_u64(self.0);
    }

    fn write_u64(&mut self, address: u64) {
        // A full product's two halves folded together: every bit of the
        // address reaches the low bits that choose the bucket (its own
        // low bits are all zero).
        let product = u128::from(address) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }

    fn write_usize(&mut self, address: usize) {
        self.write_u64(address as u64);
    }
}

type ByAddress = BuildHasherDefault<AddressHasher>;

/// A message's JSON, and the message it was written from.
type KeptText = (Weak<ChatMessage>, Box<str>);

/// A list of tools' JSON, and the list it was written from.
type KeptTools = (Weak<[ToolSpec]>, Box<str>);

impl MessageTexts {
    /// The JSON body of a streaming request for `model`; with
    /// `ask_usage`, asking for the token usage in a last chunk.
    pub fn request_body(
        &self,
        model: &str,
        request: &ChatRequest,
        ask_usage: bool,
    ) -> Result<Vec<u8>, serde_json::Error> {
        let mut texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        let mut body = Vec::with_capacity(self.last_len.load(Ordering::Relaxed).max(4096) + 1024);
        body.extend_from_slice(b"{\"model\":");
        serde_json::to_writer(&mut body, model)?;
        body.extend_from_slice(b",\"stream\":true,");
        if ask_usage {
            body.extend_from_slice(b"\"stream_options\":{\"include_usage\":true},");
        }
        body.extend_from_slice(b"\"messages\":[");
        for (i, chat_message) in request.messages.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            let key = Arc::as_ptr(chat_message) as usize;
            match texts.get(&key) {
                Some((kept, text)) if kept.strong_count() > 0 => {
                    body.extend_from_slice(text.as_bytes())
                }
                _ => {
                    let text = serde_json::to_string(&message(chat_message))?;
                    body.extend_from_slice(text.as_bytes());
                    texts.insert(key, (Arc::downgrade(chat_message), text.into_boxed_str()));
                }
            }
        }
        body.push(b']');
        if texts.len() > 2 * request.messages.len() + 64 {
            texts.retain(|_, (kept, _)| kept.strong_count() > 0);
        }
        drop(texts);
        if !request.tools.is_empty() {
            body.extend_from_slice(b",\"tools\":");
            self.write_tools(&request.tools, &mut body)?;
        }
        body.push(b'}');
        self.last_len.store(body.len(), Ordering::Relaxed);
        Ok(body)
    }

    /// Writes the tools as a JSON array, from the text kept for this very
    /// list (the same allocation, still alive) or written now and kept.
    fn write_tools(
        &self,
        tools: &Arc<[ToolSpec]>,
        body: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let mut kept = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((list, text)) = kept.as_ref()
            && list.upgrade().is_some_and(|list| Arc::ptr_eq(&list, tools))
        {
            body.extend_from_slice(text.as_bytes());
            return Ok(());
        }
        let text = serde_json::to_string(&tools.iter().map(tool).collect::<Vec<_>>())?;
        body.extend_from_slice(text.as_bytes());
        *kept = Some((Arc::downgrade(tools), text.into_boxed_str()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plain_body(model: &str, request: &ChatRequest) -> Vec<u8> {
        serde_json::to_vec(&Body {
            model,
            stream: true,
            stream_options: Some(StreamOptions {
                include_usage: true,
            }),
            messages: request.messages.iter().map(|m| message(m)).collect(),
            tools: request.tools.iter().map(tool).collect(),
        })
        .unwrap()
    }

    fn user(text: &str) -> Arc<ChatMessage> {
        Arc::new(ChatMessage::User {
            content: text.into(),
        })
    }

    #[test]
    fn neighbouring_addresses_fall_in_different_buckets() {
        use std::collections::HashSet;
        use std::hash::BuildHasher;
        // Allocations 16 bytes apart, as a heap hands them out: the low
        // bits that pick a bucket among 4,096 spread them at least as a
        // random hash would (about 2,590 buckets).
        let buckets: HashSet<u64> = (0..4_096usize)
            .map(|i| ByAddress::default().hash_one(0x7f3a_5c20_0000 + 16 * i) & 0xfff)
            .collect();
        assert!(buckets.len() > 2_500, "{} buckets of 4,096", buckets.len());
    }

    #[test]
    fn kept_texts_write_the_body_a_fresh_write_would() {
        let texts = MessageTexts::default();
        let tools: Arc<[ToolSpec]> = vec![
            ToolSpec::new(
                "shop__search_product",
                "搜索\"商品\"",
                &json!({"type": "object"}),
            )
            .unwrap(),
        ]
        .into();
        let mut messages = vec![
            Arc::new(ChatMessage::System {
                content: "系统".into(),
            }),
            user("iPhone 17 多少钱？\n"),
            Arc::new(ChatMessage::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCallRequest {
                    id: "c1".into(),
                    name: "shop__search_product".into(),
                    arguments: r#"{"keyword":"iPhone 17"}"#.into(),
                }],
            }),
            Arc::new(ChatMessage::Tool {
                tool_call_id: "c1".into(),
                content: "{\"price\":\"6799.00\"}".into(),
            }),
        ];
        for turn in 0..3 {
            let request = ChatRequest {
                messages: messages.clone(),
                tools: tools.clone(),
            };
            assert_eq!(
                texts.request_body("m", &request, true).unwrap(),
                plain_body("m", &request),
                "turn {turn}"
            );
            messages.push(user(&format!("第 {turn} 句")));
        }
        let without_tools = ChatRequest {
            messages: messages.clone(),
            tools: Vec::new().into(),
        };
        assert_eq!(
            texts.request_body("m", &without_tools, true).unwrap(),
            plain_body("m", &without_tools)
        );
    }

    #[test]
    fn a_list_of_tools_gone_is_never_answered_for_by_its_old_text() {
        let texts = MessageTexts::default();
        let messages = vec![user("你好")];
        for round in 0..200 {
            // Each round's list is dropped before the next is made: the
            // allocator may hand out the same address for other tools.
            let tools: Arc<[ToolSpec]> = vec![
                ToolSpec::new(
                    format!("shop__tool_{round}"),
                    "工具",
                    &json!({"type": "object"}),
                )
                .unwrap(),
            ]
            .into();
            let request = ChatRequest {
                messages: messages.clone(),
                tools,
            };
            assert_eq!(
                texts.request_body("m", &request, true).unwrap(),
                plain_body("m", &request),
                "round {round}"
            );
        }
    }

    #[test]
    fn a_message_gone_is_never_answered_for_by_its_old_text() {
        let texts = MessageTexts::default();
        let tools: Arc<[ToolSpec]> = Vec::new().into();
        for round in 0..200 {
            // Each round's message is dropped before the next is made, so
            // an allocator would happily hand out the same address again.
            let request = ChatRequest {
                messages: vec![user(&format!("第 {round} 条"))],
                tools: tools.clone(),
            };
            assert_eq!(
                texts.request_body("m", &request, true).unwrap(),
                plain_body("m", &request),
                "round {round}"
            );
        }
        let kept = texts.texts.lock().unwrap().len();
        assert!(
            kept <= 2 + 64 + 1,
            "dropped messages are let go: {kept} kept"
        );
    }
}
