//! Property tests of the parsers the core trusts least: the model's event
//! stream (SSE framing and the chunks' JSON), the arguments of its tool
//! calls, what MCP servers send (tool definitions with their schemas and
//! annotations, tool results), and configs imported from other clients.
//! Inputs are built towards each parser's own vocabulary (real field
//! names, line ends, fragments of JSON) with hostile values and fully
//! random bytes or JSON beside them.
//!
//! The properties: nothing panics or hangs, every failure is a typed
//! error, and the stream's framing does not depend on where the network
//! cut the bytes. `PROPTEST_CASES` sets the cases per property (default
//! 256; `scripts/fuzz` runs many more in release). Every run uses one fixed
//! seed, printed: `PROPTEST_RNG_SEED=<seed>` replays a run,
//! `PROPTEST_NEW_SEED=1` picks a new one.

use std::collections::BTreeMap;

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use crate::llm::sse::{SseParser, TurnAssembler};
use crate::llm::turn::{is_object_text, parse_object, sendable_arguments};
use crate::mcp::import;
use crate::mcp::pin;
use crate::schema::validate_arguments;

fn runner() -> TestRunner {
    TestRunner::new(proptest_seed::replayable(Config {
        cases: proptest_seed::cases_or(256),
        ..Config::default()
    }))
}

/// Text that is hard on parsers: empty, blank, long, control characters,
/// quotes and escapes, numbers as text, unicode of every width.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        select(vec![
            "",
            " ",
            "\n",
            "\r\n",
            "\u{0}",
            "\"",
            "\\",
            "{",
            "}",
            "[",
            "]",
            "null",
            "-0",
            "1e999",
            "NaN",
            "[DONE]",
            "data:",
            "比特严选",
            "😀",
            "\u{202e}",
            "\u{feff}",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
        "[ -~]{0,40}",
        "\\PC{0,3000}",
    ]
}

/// JSON numbers as they are not usually written.
fn hostile_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(9_007_199_254_740_993_u64)),
    ]
}

/// Any JSON value, with object members named from `keys` or at random.
fn json_value(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        hostile_number(),
        hostile_text().prop_map(Value::String),
    ];
    let key = prop_oneof![select(keys).prop_map(str::to_owned), "[a-z_$]{0,12}"];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            btree_map(key.clone(), inner, 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

// ---- The model's stream ----

/// Bytes of an event stream: its own pieces (field names, line ends of
/// every kind, comments, `[DONE]`, chunks of JSON) mixed with random bytes.
fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        select(vec![
            "data: ",
            "data:",
            "event: message\n",
            ": keep-alive\n",
            "id: 7\n",
            "retry: 10\n",
            "\n",
            "\r\n",
            "\r",
            "\n\n",
            "[DONE]",
            "{\"choices\":[",
            "{\"delta\":{\"content\":\"",
            "é",
            "比",
        ])
        .prop_map(|piece| piece.as_bytes().to_vec()),
        vec(any::<u8>(), 0..8),
        // A character cut in two, as a read may cut it.
        Just("特".as_bytes()[..2].to_vec()),
    ];
    vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

fn events_of(chunks: &[&[u8]]) -> Vec<String> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    events
}

#[test]
fn the_streams_events_do_not_depend_on_where_the_bytes_were_cut() {
    runner()
        .run(
            &(
                stream_bytes(),
                vec(any::<prop::sample::Index>(), 0..8),
                any::<bool>(),
            ),
            |(bytes, cuts, after_each_cr)| {
                let mut at: Vec<usize> =
                    cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
                // Where a cut is hardest: between a `\r` and what follows.
                if after_each_cr {
                    at.extend(
                        bytes
                            .iter()
                            .enumerate()
                            .filter(|(_, b)| **b == b'\r')
                            .map(|(i, _)| i + 1),
                    );
                }
                at.sort_unstable();
                at.dedup();
                let mut chunks = Vec::new();
                let mut start = 0;
                for end in at {
                    chunks.push(&bytes[start..end]);
                    start = end;
                }
                chunks.push(&bytes[start..]);
                prop_assert_eq!(events_of(&chunks), events_of(&[&bytes]));
                Ok(())
            },
        )
        .unwrap();
}

const CHUNK_KEYS: &[&str] = &[
    "choices",
    "delta",
    "content",
    "tool_calls",
    "index",
    "id",
    "type",
    "function",
    "name",
    "arguments",
    "finish_reason",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "error",
    "message",
    "role",
];

/// One `data` payload: a chunk as providers send them, with hostile
/// values in its fields, or any JSON, or no JSON at all.
fn chunk_data() -> impl Strategy<Value = String> {
    let call = (
        prop_oneof![
            any::<u64>().prop_map(Value::from),
            hostile_number(),
            Just(json!(0))
        ],
        prop::option::of(hostile_text()),
        prop::option::of(hostile_text()),
        prop::option::of(hostile_text()),
    )
        .prop_map(|(index, id, name, arguments)| {
            json!({ "index": index, "id": id, "type": "function",
                    "function": { "name": name, "arguments": arguments } })
        });
    let chunk = (
        prop::option::of(hostile_text()),
        prop::option::of(vec(call, 0..3)),
        prop::option::of(hostile_text()),
        prop::option::of(json_value(CHUNK_KEYS)),
    )
        .prop_map(|(content, calls, finish, usage)| {
            json!({
                "choices": [{ "delta": { "content": content, "tool_calls": calls },
                              "finish_reason": finish }],
                "usage": usage,
            })
            .to_string()
        });
    prop_oneof![
        4 => chunk,
        1 => json_value(CHUNK_KEYS).prop_map(|value| value.to_string()),
        1 => hostile_text(),
        1 => Just("[DONE]".to_owned()),
    ]
}

#[test]
fn any_chunks_make_a_turn_or_a_typed_error_and_every_calls_arguments_can_be_sent_back() {
    runner()
        .run(&vec(chunk_data(), 0..12), |chunks| {
            let mut turn = TurnAssembler::default();
            for data in &chunks {
                // A chunk the assembler cannot use is a typed error; what
                // it made of the others still assembles.
                let _ = turn.apply(data);
            }
            let _ = turn.is_complete();
            let assembled = turn.finish();
            for call in &assembled.tool_calls {
                let sent = sendable_arguments(&call.arguments);
                prop_assert!(is_object_text(sent), "{sent:?}");
                prop_assert!(parse_object(sent).is_ok(), "{sent:?}");
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_calls_arguments_are_an_object_or_say_why_not() {
    let text = prop_oneof![
        json_value(&["keyword", "skuCode", "quantity", "limit"]).prop_map(|v| v.to_string()),
        hostile_text(),
        // JSON cut off anywhere, as a stream that ended early leaves it.
        (json_value(&["keyword"]), any::<prop::sample::Index>()).prop_map(|(v, cut)| {
            let text = v.to_string();
            let at = cut.index(text.len() + 1);
            text.char_indices()
                .map(|(i, _)| i)
                .take_while(|&i| i <= at)
                .last()
                .map_or(String::new(), |i| text[..i].to_owned())
        }),
    ];
    runner()
        .run(&text, |text| {
            match parse_object(&text) {
                Ok(_) => prop_assert!(
                    text.trim().is_empty()
                        || serde_json::from_str::<Map<String, Value>>(&text).is_ok()
                ),
                Err(_) => prop_assert!(serde_json::from_str::<Map<String, Value>>(&text).is_err()),
            }
            Ok(())
        })
        .unwrap();
}

// ---- What MCP servers send ----

const SCHEMA_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "$ref",
    "$defs",
    "definitions",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "$schema",
    "$id",
    "multipleOf",
    "uniqueItems",
    "dependentRequired",
    "title",
    "description",
];

const TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "_meta",
    "type",
    "properties",
    "required",
];

const RESULT_KEYS: &[&str] = &[
    "content",
    "type",
    "text",
    "structuredContent",
    "isError",
    "_meta",
    "data",
    "mimeType",
    "resource",
    "uri",
];

#[test]
fn any_schema_and_arguments_are_checked_or_refused_with_reasons() {
    let schema = prop_oneof![
        json_value(SCHEMA_KEYS),
        // Schemas that refer to themselves, which must not recurse forever.
        Just(json!({ "$ref": "#" })),
        Just(json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" })),
        Just(json!({ "properties": { "x": { "$ref": "#" } }, "type": "object" })),
    ];
    runner()
        .run(
            &(schema, json_value(&["x", "keyword", "quantity"])),
            |(schema, arguments)| {
                if let Err(reasons) = validate_arguments(&schema, &arguments) {
                    prop_assert!(!reasons.is_empty());
                }
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn any_tool_definition_a_server_sends_is_read_or_refused_whole() {
    let tool = prop_oneof![
        json_value(TOOL_KEYS),
        (
            hostile_text(),
            json_value(SCHEMA_KEYS),
            json_value(TOOL_KEYS)
        )
            .prop_map(|(name, schema, annotations)| {
                json!({ "name": name, "inputSchema": { "type": "object", "properties": schema },
                        "annotations": annotations })
            }),
    ];
    runner()
        .run(&tool, |tool| {
            // What rmcp cannot read as a tool never reaches the core.
            let Ok(tool) = serde_json::from_value::<rmcp::model::Tool>(tool) else {
                return Ok(());
            };
            let info = pin::tool_info("server", true, &tool);
            prop_assert_eq!(info.server.as_str(), "server");
            let _ = pin::moves_money(&tool);
            let _ = pin::preview_of(&tool);
            let definition = pin::definition_of(&tool);
            let view = pin::definition_view(&definition);
            prop_assert!(pin::changed_fields(&view, &view).is_empty());
            Ok(())
        })
        .unwrap();
}

#[test]
fn any_tool_result_a_server_sends_is_rendered_as_text() {
    runner()
        .run(&json_value(RESULT_KEYS), |result| {
            let Ok(result) = serde_json::from_value::<rmcp::model::CallToolResult>(result) else {
                return Ok(());
            };
            let output = crate::mcp::hub::render_result(&result);
            prop_assert_eq!(output.is_error, result.is_error.unwrap_or(false));
            Ok(())
        })
        .unwrap();
}

// ---- Configs imported from other clients ----

const CONFIG_KEYS: &[&str] = &[
    "mcpServers",
    "servers",
    "mcp",
    "command",
    "args",
    "env",
    "url",
    "type",
    "headers",
    "transport",
    "cwd",
    "disabled",
    "timeout",
    "inputs",
    "envFile",
];

#[test]
fn any_config_is_planned_or_refused_with_its_problems() {
    let server = (
        hostile_text(),
        json_value(CONFIG_KEYS),
        json_value(CONFIG_KEYS),
    )
        .prop_map(|(command, args, env)| json!({ "command": command, "args": args, "env": env }));
    let config = prop_oneof![
        btree_map("[a-z ._-]{0,12}", server, 0..4)
            .prop_map(|servers| json!({ "mcpServers": servers }).to_string()),
        json_value(CONFIG_KEYS).prop_map(|v| v.to_string()),
        hostile_text(),
    ];
    let existing = BTreeMap::new();
    runner()
        .run(&config, |text| {
            match import::plan(&text, &["bitselect".to_owned()], &existing, |_| false) {
                Ok(planned) => prop_assert!(
                    planned.servers.keys().all(|name| name != "bitselect"),
                    "an imported server never takes the app's own name"
                ),
                Err(problems) => prop_assert!(!problems.is_empty()),
            }
            Ok(())
        })
        .unwrap();
}
