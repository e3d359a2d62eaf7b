//! An MCP client of the shop served in process, and readers of its answers.

use std::net::SocketAddr;

use bitselect::{Shop, serve_io};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, RequestMetaObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub type Client = RunningService<RoleClient, ()>;

pub async fn connect(shop: Shop) -> Client {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(serve_io(shop, server_io, CancellationToken::new()));
    ().serve(client_io).await.expect("client connects")
}

/// A client of the shop served over streamable HTTP at `addr`, sending
/// `Authorization: Bearer <bearer>` when given one.
pub async fn http_client(addr: SocketAddr, bearer: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://{addr}{}",
        bitselect::MCP_PATH
    ));
    if let Some(token) = bearer {
        config = config.auth_header(token.to_owned());
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

pub fn request(tool: &str, arguments: Value) -> CallToolRequestParams {
    let arguments: JsonObject = match arguments {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    };
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

pub async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(request(tool, arguments))
        .await
        .expect("the call gets an answer")
}

pub async fn call_keyed(
    client: &Client,
    tool: &str,
    arguments: Value,
    key: Value,
) -> CallToolResult {
    let mut params = request(tool, arguments);
    let mut meta = RequestMetaObject::new();
    meta.insert("ragent/idempotency_key".to_owned(), key);
    params.meta = Some(meta);
    client
        .call_tool(params)
        .await
        .expect("the call gets an answer")
}

/// The structured content of a successful call.
pub fn ok(result: &CallToolResult) -> &Value {
    assert_eq!(
        result.is_error,
        Some(false),
        "expected success: {}",
        text(result)
    );
    result
        .structured_content
        .as_ref()
        .expect("structured content")
}

/// The error code of a refused call.
pub fn refused(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a tool error: {}",
        text(result)
    );
    result
        .structured_content
        .as_ref()
        .expect("structured error")["error"]["code"]
        .as_str()
        .expect("error code")
        .to_owned()
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Adds `quantity` of `sku` to the cart of the client's user; panics if refused.
pub async fn add_to_cart(client: &Client, sku: &str, quantity: u32) {
    let arguments = serde_json::json!({"skuCode": sku, "action": "add", "quantity": quantity});
    ok(&call(client, "update_cart_item", arguments).await);
}
