//! A scripted MCP server that asks the user in the middle of a call, run
//! in process over a duplex pipe and speaking the 2026-07-28 revision: its
//! one write tool `pay` answers `input_required` (a form, or whatever the
//! test scripts) until it is sent again with answers, and keeps every
//! `inputResponses` and `requestState` it receives. Its state outlives a
//! connection, as a real server's would across the app's restart.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use ragent::mcp::connect::start_client;
use ragent::mcp::{Connect, ConnectError, Connected, IDEMPOTENCY_KEY, PageOrigins, ServerEntry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    ExperimentalCapabilities, InputRequests, InputRequiredResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::DuplexStream;

/// The state the server hands out: odd on purpose (spaces, escapes, a
/// line separator, non-ASCII), so only a byte-exact echo matches it.
pub const ODD_STATE: &str = " {\"order\": \"A1\",  \"amount\":\"¥6,799\"}\u{2028}\t\\u0041 ";

/// What `pay` answers to a call.
#[derive(Debug, Clone)]
pub enum Ask {
    /// `input_required` with these `inputRequests` and [`ODD_STATE`].
    Input(Value),
    /// `input_required` with no input requests, only [`ODD_STATE`].
    StateOnly,
    /// The call's result, built from the responses it carried.
    Finish,
}

/// One `pay` call as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct PayCall {
    pub responses: Option<Value>,
    pub request_state: Option<String>,
    pub keyed: bool,
}

#[derive(Clone, Default)]
pub struct AskingServer {
    script: Arc<Mutex<VecDeque<Ask>>>,
    pub calls: Arc<Mutex<Vec<PayCall>>>,
}

/// The params of a form asking how to pay, with titled options.
pub fn payment_params() -> Value {
    json!({
        "mode": "form",
        "message": "确认支付 ¥6,799.00，并选择支付方式",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "method": {
                    "type": "string",
                    "title": "支付方式",
                    "oneOf": [
                        {"const": "alipay", "title": "支付宝"},
                        {"const": "wechat", "title": "微信支付"}
                    ]
                }
            },
            "required": ["method"]
        }
    })
}

/// The payment form as an input request.
pub fn payment_form() -> Value {
    json!({"method": "elicitation/create", "params": payment_params()})
}

/// A server that honours idempotency keys and offers tools.
pub fn keyed_tools_config() -> ServerConfig {
    let mut experimental = ExperimentalCapabilities::new();
    experimental.insert(IDEMPOTENCY_KEY.into(), JsonObject::new());
    ServerConfig::new(
        ServerCapabilities::builder()
            .enable_experimental_with(experimental)
            .enable_tools()
            .build(),
    )
}

/// The one tool: `pay`, a destructive write.
pub fn pay_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"order": {"type": "string"}}});
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    Tool::new("pay", "Pay an order.", Arc::new(schema))
        .with_title("支付")
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .open_world(false),
        )
}

/// The params of a request that sends the user to the page at `url`.
pub fn page_params(url: &str) -> Value {
    json!({
        "mode": "url",
        "message": "请在收银台完成支付",
        "url": url,
        "elicitationId": "page-1"
    })
}

/// `{"confirm": <a request to open the page at url>}`.
pub fn asks_to_open(url: &str) -> Ask {
    Ask::Input(json!({"confirm": {"method": "elicitation/create", "params": page_params(url)}}))
}

/// `{"confirm": payment_form()}`.
pub fn asks_payment() -> Ask {
    Ask::Input(json!({ "confirm": payment_form() }))
}

impl AskingServer {
    /// Answers calls as `script` says, in order; `Finish` once it runs out.
    pub fn new(script: Vec<Ask>) -> AskingServer {
        AskingServer {
            script: Arc::new(Mutex::new(script.into())),
            ..AskingServer::default()
        }
    }

    pub fn calls(&self) -> Vec<PayCall> {
        self.calls.lock().unwrap().clone()
    }

    pub fn entry(&self, name: &str, trusted: bool) -> ServerEntry {
        ServerEntry {
            name: name.into(),
            trusted,
            call_timeout: None,
            pages: PageOrigins::none(),
            ucp: None,
            connector: Arc::new(InProcessAsking {
                server: self.clone(),
                identity: uuid::Uuid::new_v4().to_string(),
            }),
        }
    }

    /// [`AskingServer::entry`] whose pages may also be at `declared`.
    pub fn entry_with_pages(&self, name: &str, declared: &[&str]) -> ServerEntry {
        let declared: Vec<String> = declared.iter().map(|o| o.to_string()).collect();
        ServerEntry {
            pages: PageOrigins::of(None, &declared),
            ucp: None,
            ..self.entry(name, true)
        }
    }
}

struct Handler {
    server: AskingServer,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        keyed_tools_config()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![pay_tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let keyed = context.meta.0.contains_key(IDEMPOTENCY_KEY);
        let responses = request
            .input_responses
            .as_ref()
            .map(|r| serde_json::to_value(r).unwrap());
        self.server.calls.lock().unwrap().push(PayCall {
            responses: responses.clone(),
            request_state: request.request_state.clone(),
            keyed,
        });
        let next = self
            .server
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Ask::Finish);
        match next {
            Ask::Input(requests) => {
                let requests: InputRequests = serde_json::from_value(requests)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                    Some(requests),
                    Some(ODD_STATE.to_string()),
                )))
            }
            Ask::StateOnly => Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                None,
                Some(ODD_STATE.to_string()),
            ))),
            Ask::Finish => {
                let action = responses
                    .as_ref()
                    .and_then(|r| r["confirm"]["action"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "none".into());
                let method = responses
                    .as_ref()
                    .and_then(|r| {
                        r["confirm"]["content"]["method"]
                            .as_str()
                            .map(str::to_string)
                    })
                    .unwrap_or_default();
                let text = match action.as_str() {
                    "accept" => format!("paid with {method}"),
                    other => format!("not paid: the user chose {other}"),
                };
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
        }
    }
}

/// Connects to `handler` served in process over a duplex pipe, whose
/// server end goes through `between` first.
pub async fn serve_in_process<H: ServerHandler>(
    handler: H,
    between: impl FnOnce(DuplexStream) -> DuplexStream,
) -> Result<Connected, ConnectError> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server_io = between(server_io);
    tokio::spawn(async move {
        if let Ok(service) = handler.serve(server_io).await {
            let _ = service.waiting().await;
        }
    });
    let client = start_client(client_io).await?;
    Ok(Connected { client, pid: None })
}

struct InProcessAsking {
    server: AskingServer,
    identity: String,
}

impl Connect for InProcessAsking {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        let handler = Handler {
            server: self.server.clone(),
        };
        Box::pin(serve_in_process(handler, |io| io))
    }

    fn identity(&self) -> String {
        format!("in-process-asking:{}", self.identity)
    }

    fn describe(&self) -> String {
        "in-process asking server".into()
    }
}
