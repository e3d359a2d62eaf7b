//! Every tool's arguments, fuzzed through the real MCP server in process.
//!
//! For each of the nineteen tools (the six previews with their writes'
//! fields), proptest builds argument objects biased
//! towards the tool's own fields (real names with hostile values: huge,
//! negative and fractional numbers, integer extremes, number literals beyond
//! `f64`, numbers as text, blank and very long strings, unicode, keys that
//! trim to the same category, wrong types, nested values, extra keys) and
//! fully random JSON, sometimes with an idempotency key from a small pool.
//! Each one is written as a JSON-RPC line to the server over
//! `tokio::io::duplex`, so arguments that are not even an object reach it too.
//!
//! The property: every call is answered with a result, a tool error that is
//! the caller's fault (never `INTERNAL`, which is what a panic inside a call
//! becomes) or a JSON-RPC invalid-request/invalid-params error; nothing
//! panics anywhere in the process; the connection stays open (a request
//! longer than the transport's line limit is dropped unanswered, and a
//! `ping` sent after it is answered); and the
//! database keeps its invariants (stock plus what live orders hold is
//! conserved, order amounts add up, coupons and orders agree, cart lines stay
//! within 1 to 99).
//!
//! `PROPTEST_CASES` sets the cases per tool (default 200, about 20 s for all
//! nineteen in a debug build). Every run uses one fixed seed, printed on
//! failure: `PROPTEST_RNG_SEED=<seed>` replays a run, `PROPTEST_NEW_SEED=1`
//! picks a new seed (`proptest_seed`);
//! `FUZZ_TRACE=1` prints each call and its answer. A long run:
//! `PROPTEST_CASES=20000 cargo test --release -p bitselect --test fuzz_arguments -- --nocapture`.

mod support;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bitselect::serve::ServeError;
use bitselect::serve_io;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestCaseResult, TestRunner};
use rmcp::service::QuitReason;
use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use serde_json::{Map, Value, json};
use support::{TestShop, open_shop};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const DEFAULT_CASES_PER_TOOL: u32 = 200;
/// Calls made on one seeded shop before the next case gets a fresh one, so
/// state builds up (orders placed, carts changed) without drifting forever.
const CALLS_PER_SHOP: u32 = 50;
/// Far longer than any call takes: a call not answered by then never will be.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// The seed's last order number; later ones were placed during the run.
const LAST_SEEDED_ORDER: i64 = 88_238;

// ---- panics anywhere in the process ----------------------------------------

static PANICS: AtomicUsize = AtomicUsize::new(0);
static COUNT_PANICS: Once = Once::new();

/// Counts every panic in the process, on any thread (the server's tasks, the
/// blocking pool), then reports it as usual.
fn count_panics() {
    COUNT_PANICS.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            report(info);
        }));
    });
}

// ---- hostile values ---------------------------------------------------------

/// Marks a string value as a number literal to be written verbatim, for
/// literals `serde_json::Value` cannot hold (beyond `u64`, many decimals).
const RAW: &str = "\u{1}raw:";

fn raw(literal: &'static str) -> Value {
    Value::String(format!("{RAW}{literal}"))
}

/// Writes marked strings back as the bare literals they stand for.
fn unmark_raw_literals(text: &str) -> String {
    const MARK: &str = "\"\\u0001raw:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARK.len()..];
        match after.find('"') {
            Some(end) => {
                out.push_str(&after[..end]);
                rest = &after[end + 1..];
            }
            None => {
                rest = &rest[at..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

fn float(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

fn hostile_number() -> BoxedStrategy<Value> {
    prop_oneof![
        select(vec![
            json!(0),
            json!(-1),
            json!(1),
            json!(99),
            json!(100),
            json!(i64::MAX),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(u32::MAX),
            json!(u64::from(u32::MAX) + 1),
            json!(i64::from(i32::MIN)),
            json!(9_999_999_999_999_u64),
            json!(999_999_999_999_999_u64),
            json!(100_000_000),
            float(100_000_000.01),
            float(1e308),
            float(-1e308),
            float(f64::MIN_POSITIVE),
            float(-0.0),
            float(0.001),
            float(1.005),
            float(99.999),
            float(0.1 + 0.2),
            raw("123456789012345678901234567890"),
            raw("-123456789012345678901234567890"),
            raw("18446744073709551616"),
            raw("-9223372036854775809"),
            raw("1.0000000000000000000001"),
            raw("9999999999999.99"),
            raw("99999999.995"),
            raw("1E2"),
            raw("1e-7"),
            raw("-0"),
            raw("0.10e1"),
        ]),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<f64>().prop_map(float),
        (0_u32..200).prop_map(Value::from),
    ]
    .boxed()
}

fn hostile_text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => select(vec![
            "", " ", "\t\n ", "\u{3000}", "\u{200b}", "\u{feff}", "\u{0}", "\r\n",
            "null", "NaN", "-NaN", "Infinity", "-Infinity", "inf", "1e3", "0x10",
            "１２３", "12 ", " -0 ", "+5", "5.", ".5", "1,000", "99999999999999999999",
            "9999999999999", "9999999999999.99", "100000000.01", "-1", "0", "0.00",
            "' OR 1=1 --", "%", "_", "%_%", "\\", "\"", "'", "`", "/*", ";",
            "💳💸", "\u{202e}abc", "a\u{301}", "../../etc/passwd", "${USER_ID}",
            "__proto__", "constructor", "toString", "<script>alert(1)</script>",
        ]).prop_map(str::to_owned),
        3 => "\\PC{0,40}",
        2 => "(?s).{0,40}",
        1 => (1_usize..5_000, select(vec!["長", "a", " ", "9", "\u{301}"]))
            .prop_map(|(n, s)| s.repeat(n)),
        1 => (50_000_usize..200_000).prop_map(|n| "x".repeat(n)),
    ]
    .boxed()
}

fn hostile_leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => hostile_number(),
        3 => hostile_text().prop_map(Value::String),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
    ]
    .boxed()
}

/// Any JSON value, nested a few levels.
fn any_json() -> BoxedStrategy<Value> {
    hostile_leaf()
        .prop_recursive(3, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("\\PC{0,12}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
        .boxed()
}

// ---- values biased towards a field's meaning ---------------------------------

/// One of `examples`, sometimes padded with whitespace or in lower case, or
/// a hostile string.
fn text_like(examples: &[&'static str]) -> BoxedStrategy<Value> {
    let examples: Vec<&'static str> = examples.to_vec();
    let lower = examples_lower(&examples);
    let padded = (
        select(examples.clone()),
        select(vec!["", " ", "\t", "\u{3000}", "\n"]),
    )
        .prop_map(|(v, pad)| format!("{pad}{v}{pad}"));
    prop_oneof![
        4 => select(examples).prop_map(str::to_owned),
        1 => padded,
        1 => select(lower),
        2 => hostile_text(),
    ]
    .prop_map(Value::String)
    .boxed()
}

fn examples_lower(examples: &[&'static str]) -> Vec<String> {
    examples.iter().map(|e| e.to_lowercase()).collect()
}

/// A count such as a quantity or a limit.
fn count() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => (0_i64..=120).prop_map(Value::from),
        1 => hostile_number(),
        1 => (0_u32..200).prop_map(|n| Value::String(n.to_string())),
    ]
    .boxed()
}

/// An amount of yuan, as a number or as text.
fn yuan() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => (0_i64..5_000_000, 0_i64..100)
            .prop_map(|(y, f)| Value::String(format!("{y}.{f:02}"))),
        2 => (0_u32..100_000).prop_map(Value::from),
        1 => (-1_000_i64..0).prop_map(Value::from),
        3 => hostile_number(),
        1 => hostile_text().prop_map(Value::String),
    ]
    .boxed()
}

fn boolean() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => any::<bool>().prop_map(Value::Bool),
        1 => select(vec![json!("true"), json!(1), json!(0), json!("false")]),
    ]
    .boxed()
}

fn list_of(item: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    prop_oneof![
        4 => prop::collection::vec(item.clone(), 0..6).prop_map(Value::Array),
        1 => prop::collection::vec(item, 0..300).prop_map(Value::Array),
    ]
    .boxed()
}

const SKUS: &[&str] = &[
    "MG6W4CH/A", // iPhone 17
    "MYEV3CH/A", // delisted
    "MFHP4CH/A", // out of stock, in the cart
    "MFHE4CH/A", // three left, in the cart
    "MH304CH/A",
    "MJT74CH/A",
    "MK8T4FE/A",
    "MDF44FE/A",
    "MDH74CH/A",
    "MFE94CH/A",
    "NOPE-1",
];
const SPUS: &[&str] = &["IPHONE-17", "IPHONE-16", "AIRPODS-4", "X"];
const ORDERS: &[&str] = &[
    "88231", "88232", "88233", "88234", "88235", "88236", "88237", "88238", "88239", "88240", "1",
    "0088231",
];
const TRACKING: &[&str] = &[
    "BIT9100000231",
    "BIT9100000234",
    "BIT9100000238",
    "BIT9100000235",
    "SF1234567890",
];
const AFTER_SALES: &[&str] = &["AS88232001", "AS88231001", "AS88236001"];
const COUPONS: &[&str] = &[
    "EDU-MAC-920",
    "EDU-PAD-920",
    "SHOP-5000-300",
    "SHOP-12000-800",
    "ACC-500-50",
    "PHONE-8000-500",
    "NEW-1000-100",
];
const CATEGORIES: &[&str] = &[
    "手机",
    "平板",
    "电脑",
    "智能手表",
    "耳机音频",
    "智能家居",
    "空间计算",
    "配件",
    "手表",
];
const ORDER_STATUSES: &[&str] = &["待支付", "已支付待发货", "已发货", "已签收", "已取消"];
const NAMES: &[&str] = &[
    "张三",
    "李四",
    "A",
    "王小明明明明明明明明明明明明明明明明明明",
];
const PHONES: &[&str] = &["13800138000", "138-0013-8000", "+86 138 0013 8000", "1"];
const ADDRESSES: &[&str] = &["北京市朝阳区建国路 88 号", "上海市浦东新区", "x"];

/// `categoryAmounts`: a few categories, or very many keys that trim to one.
fn category_amounts() -> BoxedStrategy<Value> {
    let few = prop::collection::btree_map(text_like(CATEGORIES).prop_map(key_text), yuan(), 0..10)
        .prop_map(|m| Value::Object(m.into_iter().collect()));
    let many_spellings = (
        select(CATEGORIES.to_vec()),
        1_usize..1_500,
        yuan(),
        select(vec![" ", "\t", "\u{3000}", "\n"]),
    )
        .prop_map(|(category, keys, amount, pad)| {
            Value::Object(
                (0..keys)
                    .map(|n| (format!("{}{category}", pad.repeat(n)), amount.clone()))
                    .collect(),
            )
        });
    prop_oneof![
        4 => few,
        1 => many_spellings,
    ]
    .boxed()
}

fn key_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// One `items` entry of `create_order`.
fn order_item() -> BoxedStrategy<Value> {
    prop_oneof![
        6 => object_of(vec![("skuCode", text_like(SKUS)), ("quantity", count())]),
        1 => hostile_leaf(),
    ]
    .boxed()
}

// ---- argument objects -----------------------------------------------------------

type Fields = Vec<(&'static str, BoxedStrategy<Value>)>;

/// An object with each field present three times in four, its value biased
/// (four in five) or hostile, plus now and then a key that is no field.
fn object_of(fields: Fields) -> BoxedStrategy<Value> {
    let names: Vec<&'static str> = fields.iter().map(|(name, _)| *name).collect();
    let present: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
        .into_iter()
        .map(|(name, biased)| {
            let value = prop_oneof![4 => biased, 1 => any_json()];
            prop::option::weighted(0.75, value)
                .prop_map(move |v| v.map(|v| (name.to_owned(), v)))
                .boxed()
        })
        .collect();
    let extra = prop::collection::vec((extra_key(names), any_json()), 0..3);
    prop_oneof![
        4 => (present.clone(), Just(Vec::new())),
        1 => (present, extra),
    ]
    .prop_map(|(present, extra)| {
        let mut object: Map<String, Value> = present.into_iter().flatten().collect();
        object.extend(extra);
        Value::Object(object)
    })
    .boxed()
}

/// A key that is not one of `names`: one of them misspelt, or anything.
fn extra_key(names: Vec<&'static str>) -> BoxedStrategy<String> {
    let misspelt = select(if names.is_empty() { vec!["x"] } else { names }).prop_flat_map(|name| {
        select(vec![
            format!("{name} "),
            format!(" {name}"),
            name.to_uppercase(),
            snake_case(name),
            format!("{name}s"),
        ])
    });
    prop_oneof![
        2 => misspelt,
        1 => select(vec!["", "_meta", "__proto__", "constructor", "arguments", "userId"])
            .prop_map(str::to_owned),
        1 => "\\PC{0,16}",
    ]
    .boxed()
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A tool and the fields of its arguments.
struct ToolSpec {
    name: &'static str,
    fields: fn() -> Fields,
}

fn tools() -> Vec<ToolSpec> {
    let mut tools = vec![
        ToolSpec {
            name: "search_product",
            fields: || {
                vec![
                    (
                        "keyword",
                        text_like(&["iPhone 17 黑色", "airtag", "苹果", "保护壳", "MG6W4CH/A"]),
                    ),
                    ("category", text_like(CATEGORIES)),
                    ("tags", list_of(text_like(&["保护壳", "防摔", "5G"]))),
                    ("minPrice", yuan()),
                    ("maxPrice", yuan()),
                    ("skuCodes", list_of(text_like(SKUS))),
                    ("spuCodes", list_of(text_like(SPUS))),
                    ("inStockOnly", boolean()),
                    (
                        "sort",
                        text_like(&["relevance", "price_asc", "price_desc", "stock_desc"]),
                    ),
                    ("limit", count()),
                ]
            },
        },
        ToolSpec {
            name: "query_cart",
            fields: Vec::new,
        },
        ToolSpec {
            name: "query_coupons",
            fields: || vec![("amount", yuan()), ("categoryAmounts", category_amounts())],
        },
        ToolSpec {
            name: "query_order",
            fields: || {
                vec![
                    ("orderNo", text_like(ORDERS)),
                    ("status", text_like(ORDER_STATUSES)),
                    ("limit", count()),
                ]
            },
        },
        ToolSpec {
            name: "query_logistics",
            fields: || {
                vec![
                    ("trackingNo", text_like(TRACKING)),
                    ("orderNo", text_like(ORDERS)),
                ]
            },
        },
        ToolSpec {
            name: "query_after_sale",
            fields: || {
                vec![
                    ("afterSaleNo", text_like(AFTER_SALES)),
                    ("orderNo", text_like(ORDERS)),
                ]
            },
        },
        ToolSpec {
            name: "update_cart_item",
            fields: || {
                vec![
                    ("skuCode", text_like(SKUS)),
                    ("action", text_like(&["add", "decrease", "remove"])),
                    ("quantity", count()),
                ]
            },
        },
        ToolSpec {
            name: "create_order",
            fields: || {
                vec![
                    ("items", list_of(order_item())),
                    ("couponCode", text_like(COUPONS)),
                    ("receiverName", text_like(NAMES)),
                    ("receiverPhone", text_like(PHONES)),
                    ("receiverAddress", text_like(ADDRESSES)),
                ]
            },
        },
        ToolSpec {
            name: "pay_order",
            fields: || vec![("orderNo", text_like(ORDERS))],
        },
        ToolSpec {
            name: "cancel_order",
            fields: || {
                vec![
                    ("orderNo", text_like(ORDERS)),
                    ("reason", text_like(&["不想要了", "买错了"])),
                ]
            },
        },
        ToolSpec {
            name: "change_address",
            fields: || {
                vec![
                    ("orderNo", text_like(ORDERS)),
                    ("receiverName", text_like(NAMES)),
                    ("receiverPhone", text_like(PHONES)),
                    ("receiverAddress", text_like(ADDRESSES)),
                ]
            },
        },
        ToolSpec {
            name: "apply_after_sale",
            fields: || {
                vec![
                    ("orderNo", text_like(ORDERS)),
                    ("skuCode", text_like(SKUS)),
                    (
                        "type",
                        text_like(&["退货退款", "换货", "return_refund", "exchange"]),
                    ),
                    ("reason", text_like(&["屏幕有亮点", "坏了", "不喜欢"])),
                ]
            },
        },
        ToolSpec {
            name: "submit_ticket",
            fields: || {
                vec![
                    (
                        "topic",
                        text_like(&[
                            "订单问题",
                            "物流问题",
                            "售后问题",
                            "商品咨询",
                            "优惠券问题",
                            "其他",
                        ]),
                    ),
                    ("orderNo", text_like(ORDERS)),
                    (
                        "description",
                        text_like(&["耳机左耳没有声音，请帮忙处理", "你好"]),
                    ),
                ]
            },
        },
    ];
    // Each preview takes exactly its write's arguments.
    let previews: Vec<ToolSpec> = tools
        .iter()
        .filter_map(|write| {
            preview_of(write.name).map(|name| ToolSpec {
                name,
                fields: write.fields,
            })
        })
        .collect();
    tools.extend(previews);
    tools
}

/// The read-only tool that previews `write`, as the write's `_meta` names it.
fn preview_of(write: &str) -> Option<&'static str> {
    Some(match write {
        "update_cart_item" => "preview_update_cart_item",
        "create_order" => "preview_create_order",
        "pay_order" => "preview_pay_order",
        "cancel_order" => "preview_cancel_order",
        "change_address" => "preview_change_address",
        "apply_after_sale" => "preview_apply_after_sale",
        _ => return None,
    })
}

/// A tool's `arguments` and the request's `_meta`, if any.
fn call_of(spec: &ToolSpec) -> BoxedStrategy<(Value, Option<Value>)> {
    let arguments = prop_oneof![
        8 => object_of((spec.fields)()),
        1 => prop::collection::btree_map("\\PC{0,12}", any_json(), 0..6)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        1 => any_json(),
    ];
    let key = prop_oneof![
        3 => select(vec!["k1", "k2", "k3"]).prop_map(|k| Value::String(k.to_owned())),
        1 => any_json(),
    ];
    let meta = prop_oneof![
        3 => Just(None),
        1 => key.prop_map(|key| Some(json!({ "ragent/idempotency_key": key }))),
        // `_meta` itself stays an object: rmcp 3.11 leaves a request whose
        // `_meta` is not one unanswered, before the shop sees it.
        1 => prop::collection::btree_map("\\PC{0,12}", any_json(), 0..4)
            .prop_map(|m| Some(Value::Object(m.into_iter().collect()))),
    ];
    (arguments, meta).boxed()
}

// ---- the wire ------------------------------------------------------------------

type ServeTask = JoinHandle<Result<QuitReason, ServeError>>;

/// A client speaking raw JSON-RPC lines to a server over a duplex pipe.
struct Wire {
    send: WriteHalf<DuplexStream>,
    receive: Lines<BufReader<ReadHalf<DuplexStream>>>,
    server: ServeTask,
    next_id: u64,
}

/// How the server answered one call.
#[derive(Debug)]
enum Answer {
    Result {
        is_error: bool,
        code: Option<String>,
    },
    Error {
        code: i64,
        message: String,
    },
    /// The request's line was longer than the transport takes: dropped
    /// unread, and the connection went on serving.
    Discarded,
}

impl Wire {
    async fn connect(t: &TestShop) -> Result<Self, String> {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(serve_io(
            t.shop.clone(),
            server_io,
            CancellationToken::new(),
        ));
        let (receive, send) = tokio::io::split(client_io);
        let mut wire = Self {
            send,
            receive: BufReader::new(receive).lines(),
            server,
            next_id: 0,
        };
        let protocol = serde_json::to_value(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
            .map_err(|e| e.to_string())?;
        let init = json!({
            "protocolVersion": protocol,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"}
        });
        wire.request("initialize", &init)
            .await?
            .ok_or("the initialize request was too long")?;
        wire.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await?;
        Ok(wire)
    }

    async fn line(&mut self, text: &str) -> Result<(), String> {
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send
            .write_all(&bytes)
            .await
            .map_err(|e| format!("the connection closed while sending: {e}"))
    }

    /// Sends a request and waits for its answer: the response with its id,
    /// or an error without one (the answer to a request the server could not
    /// read as one). `None` when the line is longer than the transport takes:
    /// the server discards such a line unanswered (as the other MCP SDKs do,
    /// since it cannot know the request's id), so a `ping` must then be
    /// answered, showing the connection still serves.
    async fn request(&mut self, method: &str, params: &Value) -> Result<Option<Value>, String> {
        let line = self.request_line(method, params);
        if line.len() <= DEFAULT_MAX_LINE_LENGTH {
            return self.exchange(&line).await.map(Some);
        }
        self.line(&line).await?;
        let ping = self.request_line("ping", &json!({}));
        let pong = self.exchange(&ping).await?;
        if pong.get("result").is_none() {
            return Err(format!(
                "the ping after a discarded line was answered {pong}"
            ));
        }
        Ok(None)
    }

    fn request_line(&mut self, method: &str, params: &Value) -> String {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        unmark_raw_literals(&message.to_string())
    }

    /// Sends a request line and waits for the answer to the last id given.
    async fn exchange(&mut self, line: &str) -> Result<Value, String> {
        let id = self.next_id;
        self.line(line).await?;
        loop {
            let line = tokio::time::timeout(ANSWER_TIMEOUT, self.receive.next_line())
                .await
                .map_err(|_| format!("no answer within {ANSWER_TIMEOUT:?}"))?
                .map_err(|e| format!("reading the answer failed: {e}"))?
                .ok_or("the server closed the connection")?;
            let answer: Value = serde_json::from_str(&line)
                .map_err(|e| format!("unreadable answer {e}: {line}"))?;
            match answer.get("id") {
                Some(got) if *got == json!(id) => return Ok(answer),
                Some(Value::Null) if answer.get("error").is_some() => return Ok(answer),
                // A notification, or a request from the server: not ours.
                _ => continue,
            }
        }
    }

    async fn call(
        &mut self,
        tool: &str,
        arguments: &Value,
        meta: Option<&Value>,
    ) -> Result<Answer, String> {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta.clone();
        }
        let Some(answer) = self.request("tools/call", &params).await? else {
            return Ok(Answer::Discarded);
        };
        if let Some(error) = answer.get("error") {
            return Ok(Answer::Error {
                code: error["code"].as_i64().unwrap_or_default(),
                message: error["message"].as_str().unwrap_or_default().to_owned(),
            });
        }
        let result = &answer["result"];
        Ok(Answer::Result {
            is_error: result["isError"] == json!(true),
            code: result["structuredContent"]["error"]["code"]
                .as_str()
                .map(str::to_owned),
        })
    }
}

// ---- the shop's invariants ---------------------------------------------------------

/// Units in stock plus units held by orders that are not cancelled: placing
/// and cancelling orders move units between the two, nothing else changes it.
fn units_accounted_for(t: &TestShop) -> Result<i64, String> {
    let conn = t.shop.connection().map_err(|e| e.to_string())?;
    conn.query_row(
        "SELECT (SELECT COALESCE(SUM(stock), 0) FROM sku)
              + (SELECT COALESCE(SUM(i.quantity), 0) FROM order_item i
                 JOIN orders o ON o.order_no = i.order_no WHERE o.status != '已取消')",
        [],
        |row| row.get(0),
    )
    .map_err(|e| e.to_string())
}

/// Each query counts the rows that break one rule; all must count zero.
const BROKEN_RULES: &[(&str, &str)] = &[
    (
        "stock below zero",
        "SELECT COUNT(*) FROM sku WHERE stock < 0",
    ),
    (
        "a cart line outside 1 to 99",
        "SELECT COUNT(*) FROM cart_item WHERE quantity < 1 OR quantity > 99",
    ),
    (
        "an order whose amounts do not add up",
        "SELECT COUNT(*) FROM orders WHERE discount_fen < 0 OR discount_fen > total_fen
             OR pay_fen != total_fen - discount_fen",
    ),
    (
        "a new order whose total is not the sum of its lines",
        "SELECT COUNT(*) FROM orders o WHERE CAST(o.order_no AS INTEGER) > ?1
             AND o.total_fen != (SELECT COALESCE(SUM(price_fen * quantity), 0)
                                 FROM order_item WHERE order_no = o.order_no)",
    ),
    (
        "a new order without lines",
        "SELECT COUNT(*) FROM orders o WHERE CAST(o.order_no AS INTEGER) > ?1
             AND NOT EXISTS (SELECT 1 FROM order_item WHERE order_no = o.order_no)",
    ),
    (
        "a coupon whose status and order disagree",
        "SELECT COUNT(*) FROM user_coupon
         WHERE (status = '已使用') != (order_no IS NOT NULL)",
    ),
    (
        "a coupon used on a missing or cancelled order",
        "SELECT COUNT(*) FROM user_coupon u WHERE u.status = '已使用' AND NOT EXISTS (
             SELECT 1 FROM orders o WHERE o.order_no = u.order_no AND o.status != '已取消')",
    ),
    (
        "a live new order whose coupon is not marked used by it",
        "SELECT COUNT(*) FROM orders o WHERE CAST(o.order_no AS INTEGER) > ?1
             AND o.coupon_code IS NOT NULL AND o.status != '已取消'
             AND NOT EXISTS (SELECT 1 FROM user_coupon u WHERE u.code = o.coupon_code
                             AND u.order_no = o.order_no AND u.status = '已使用')",
    ),
    (
        "an after-sale for a line that is not in its order",
        "SELECT COUNT(*) FROM after_sale a WHERE NOT EXISTS (
             SELECT 1 FROM order_item i WHERE i.order_no = a.order_no AND i.sku_code = a.sku_code)",
    ),
];

fn check_invariants(t: &TestShop, units: i64) -> Result<(), String> {
    let conn = t.shop.connection().map_err(|e| e.to_string())?;
    for (rule, sql) in BROKEN_RULES {
        let mut stmt = conn.prepare(sql).map_err(|e| e.to_string())?;
        let broken: i64 = if stmt.parameter_count() == 1 {
            stmt.query_row([LAST_SEEDED_ORDER], |row| row.get(0))
        } else {
            stmt.query_row([], |row| row.get(0))
        }
        .map_err(|e| format!("{rule}: {e}"))?;
        if broken != 0 {
            return Err(format!("{broken} rows break the rule: no {rule}"));
        }
    }
    let now = units_accounted_for(t)?;
    if now != units {
        return Err(format!(
            "units in stock and in live orders went from {units} to {now}"
        ));
    }
    Ok(())
}

/// SQLite's own checks, once per shop.
fn check_database(t: &TestShop) -> Result<(), String> {
    let conn = t.shop.connection().map_err(|e| e.to_string())?;
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .map_err(|e| e.to_string())?;
    let foreign: Option<String> = conn
        .query_row("PRAGMA foreign_key_check", [], |row| row.get(0))
        .ok();
    match (integrity.as_str(), foreign) {
        ("ok", None) => Ok(()),
        (integrity, foreign) => Err(format!(
            "integrity_check: {integrity}; foreign key violation in {foreign:?}"
        )),
    }
}

// ---- the run --------------------------------------------------------------------

/// A seeded shop with a connected wire and what must stay true of it.
struct Session {
    t: TestShop,
    wire: Wire,
    units: i64,
    calls: u32,
}

impl Session {
    fn open(rt: &Runtime) -> Result<Self, String> {
        let t = open_shop();
        let units = units_accounted_for(&t)?;
        let wire = rt.block_on(Wire::connect(&t))?;
        Ok(Self {
            t,
            wire,
            units,
            calls: 0,
        })
    }

    fn close(self) -> Result<(), String> {
        check_database(&self.t)?;
        self.wire.server.abort();
        Ok(())
    }
}

/// Calls `spec`'s tool with generated arguments until the cases are done or
/// one breaks the property, drawing from `seed`. Returns how many calls
/// were made.
fn fuzz_tool(rt: &Runtime, spec: &ToolSpec, cases: u32, seed: u64) -> Result<u32, String> {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 50,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let session: RefCell<Option<Session>> = RefCell::new(None);
    let calls = RefCell::new(0_u32);
    let outcome = runner.run(&call_of(spec), |(arguments, meta)| {
        let mut slot = session.borrow_mut();
        if slot.as_ref().is_some_and(|s| s.calls >= CALLS_PER_SHOP)
            && let Some(done) = slot.take()
        {
            done.close().map_err(TestCaseError::fail)?;
        }
        if slot.is_none() {
            *slot = Some(Session::open(rt).map_err(TestCaseError::fail)?);
        }
        let Some(s) = slot.as_mut() else {
            return Err(TestCaseError::fail("no session"));
        };
        s.calls += 1;
        *calls.borrow_mut() += 1;
        let panics_before = PANICS.load(Ordering::SeqCst);
        let trace = std::env::var_os("FUZZ_TRACE").is_some();
        let t0 = Instant::now();
        if trace {
            let a = arguments.to_string();
            let a: String = a.chars().take(200).collect();
            eprintln!("-> {} {} meta {:?}", spec.name, a, meta);
        }
        let answer = rt.block_on(s.wire.call(spec.name, &arguments, meta.as_ref()));
        if trace {
            eprintln!("<- {:?} in {:?}", answer, t0.elapsed());
        }
        let verdict = judge(spec.name, arguments.is_object(), answer, &s.wire.server)
            .and_then(|()| check_invariants(&s.t, s.units))
            .and_then(|()| {
                let panics = PANICS.load(Ordering::SeqCst) - panics_before;
                if panics == 0 {
                    Ok(())
                } else {
                    Err(format!("{panics} panic(s) during the call"))
                }
            });
        if let Err(why) = verdict {
            // The next case starts on a fresh shop and connection.
            *slot = None;
            return Err(TestCaseError::fail(why));
        }
        TestCaseResult::Ok(())
    });
    if let Some(done) = session.into_inner() {
        done.close()?;
    }
    let calls = calls.into_inner();
    outcome.map(|()| calls).map_err(|e| e.to_string())
}

fn judge(
    tool: &str,
    arguments_are_object: bool,
    answer: Result<Answer, String>,
    server: &ServeTask,
) -> Result<(), String> {
    if server.is_finished() {
        return Err(format!("the server stopped serving after a {tool} call"));
    }
    match answer? {
        Answer::Result {
            is_error: false, ..
        } => Ok(()),
        Answer::Result {
            is_error: true,
            code: Some(code),
        } if code != "INTERNAL" => Ok(()),
        Answer::Result { code, .. } => Err(format!(
            "{tool} failed inside the shop instead of refusing the input: code {code:?}"
        )),
        Answer::Error { code: -32602, .. } | Answer::Discarded => Ok(()),
        // Arguments that are not an object do not make a `tools/call`
        // request: rmcp answers it as an invalid request or unknown method.
        Answer::Error {
            code: -32600 | -32601,
            ..
        } if !arguments_are_object => Ok(()),
        Answer::Error { code, message } => {
            Err(format!("{tool} answered JSON-RPC error {code}: {message}"))
        }
    }
}

#[test]
fn no_argument_makes_a_tool_panic_overflow_or_drop_the_connection() {
    count_panics();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let cases = proptest_seed::cases_or(DEFAULT_CASES_PER_TOOL);
    let seed = proptest_seed::replayable_seed();
    let mut tried: BTreeMap<&str, u32> = BTreeMap::new();
    let started = Instant::now();
    let mut failures = Vec::new();
    for spec in tools() {
        let tool_started = Instant::now();
        match fuzz_tool(&rt, &spec, cases, seed) {
            Ok(calls) => {
                eprintln!(
                    "fuzz {:<24} {calls:>7} inputs tried, 0 panics ({:.1?})",
                    spec.name,
                    tool_started.elapsed()
                );
                tried.insert(spec.name, calls);
            }
            Err(failure) => failures.push(format!("{}: {failure}", spec.name)),
        }
    }
    let total: u32 = tried.values().sum();
    eprintln!(
        "fuzz total: {total} inputs tried over {} tools, {} panics, in {:.1?}",
        tried.len(),
        PANICS.load(Ordering::SeqCst),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{}\n\nreplay with PROPTEST_RNG_SEED={seed}",
        failures.join("\n\n")
    );
    assert_eq!(tried.len(), 19, "every tool was fuzzed");
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "nothing panicked");
}

#[test]
fn a_request_longer_than_the_transport_takes_is_dropped_and_the_next_is_served() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut s = Session::open(&rt).expect("a session");
    let huge = json!({"amount": "9".repeat(DEFAULT_MAX_LINE_LENGTH)});
    let answer = rt
        .block_on(s.wire.call("query_coupons", &huge, None))
        .expect("the connection goes on");
    assert!(matches!(answer, Answer::Discarded), "{answer:?}");
    let answer = rt
        .block_on(
            s.wire
                .call("query_coupons", &json!({"amount": "100.00"}), None),
        )
        .expect("an answer");
    assert!(
        matches!(
            answer,
            Answer::Result {
                is_error: false,
                ..
            }
        ),
        "{answer:?}"
    );
    s.close().expect("the shop keeps its invariants");
}

#[test]
fn raw_literals_are_written_bare() {
    let message = json!({"a": raw("1e400"), "b": [raw("-0")], "c": "\u{1}"});
    assert_eq!(
        unmark_raw_literals(&message.to_string()),
        r#"{"a":1e400,"b":[-0],"c":"\u0001"}"#
    );
}
