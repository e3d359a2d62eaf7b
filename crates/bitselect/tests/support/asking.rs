//! A client that speaks MCP 2026-07-28, where a tool may answer
//! `input_required`, and helpers to play the rounds of such a call.

use std::net::SocketAddr;

use bitselect::{Shop, ShopServer};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitationCapability, FormElicitationCapability, Implementation, InputRequiredResult,
    InputResponses, ProtocolVersion, RequestMetaObject, UrlElicitationCapability,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;

/// What a client says it can show when a server asks the user.
#[derive(Debug, Clone, Copy)]
pub enum Shows {
    Forms,
    Pages,
    FormsAndPages,
}

/// A 2026-07-28 client declaring the elicitation modes it shows.
#[derive(Debug, Clone)]
pub struct AskedClient(pub Shows);

impl ClientHandler for AskedClient {
    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::default();
        if matches!(self.0, Shows::Forms | Shows::FormsAndPages) {
            elicitation.form = Some(FormElicitationCapability::default());
        }
        if matches!(self.0, Shows::Pages | Shows::FormsAndPages) {
            elicitation.url = Some(UrlElicitationCapability::new());
        }
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        ClientConfig::new(capabilities, Implementation::new("asked-client", "1.0"))
    }
}

pub type ModernClient = RunningService<RoleClient, AskedClient>;

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// A 2026-07-28 client of `shop` served in process (as over stdio).
pub async fn connect_modern(shop: Shop, shows: Shows) -> ModernClient {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = ShopServer::new(shop).serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    AskedClient(shows)
        .serve_with_lifecycle(client_io, modern())
        .await
        .expect("a 2026-07-28 session")
}

/// A 2026-07-28 client of the shop served over streamable HTTP at `addr`.
pub async fn http_modern(addr: SocketAddr, bearer: Option<&str>, shows: Shows) -> ModernClient {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://{addr}{}",
        bitselect::MCP_PATH
    ));
    if let Some(token) = bearer {
        config = config.auth_header(token.to_owned());
    }
    AskedClient(shows)
        .serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), modern())
        .await
        .expect("a 2026-07-28 session over HTTP")
}

/// A call of `tool` with `arguments` and the idempotency key `key`.
pub fn keyed_request(tool: &str, arguments: Value, key: &str) -> CallToolRequestParams {
    let mut params = crate::support::client::request(tool, arguments);
    let mut meta = RequestMetaObject::new();
    meta.insert("ragent/idempotency_key".to_owned(), Value::from(key));
    params.meta = Some(meta);
    params
}

/// `request` sent again with `answer` to the question under `key` and the
/// state `asked` gave, echoed as it came.
pub fn answered(
    request: &CallToolRequestParams,
    asked: &InputRequiredResult,
    key: &str,
    answer: Value,
) -> CallToolRequestParams {
    let responses: InputResponses = [(key.to_owned(), answer)].into_iter().collect();
    let mut again = request.clone().with_input_responses(responses);
    again.request_state = asked.request_state.clone();
    again
}

pub async fn call_once(
    client: &Peer<RoleClient>,
    params: CallToolRequestParams,
) -> CallToolResponse {
    client
        .call_tool_once(params)
        .await
        .expect("the call gets an answer")
}

/// The question of a call that asked; panics on any other answer.
pub fn asked(response: CallToolResponse) -> InputRequiredResult {
    match response {
        CallToolResponse::InputRequired(asked) => asked,
        other => panic!("expected input_required, got {other:?}"),
    }
}

/// The result of a call that completed; panics on a question.
pub fn completed(response: CallToolResponse) -> CallToolResult {
    match response {
        CallToolResponse::Complete(result) => result,
        other => panic!("expected a result, got {other:?}"),
    }
}

/// The `params` of the request under `key`, as JSON.
pub fn question(asked: &InputRequiredResult, key: &str) -> Value {
    let requests = serde_json::to_value(&asked.input_requests).expect("requests as JSON");
    requests[key]["params"].clone()
}
