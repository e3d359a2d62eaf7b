//! A scripted MCP server of the 2025-11-25 revision, run in process over a
//! duplex pipe: its one write tool `pay` asks the user the older way, by
//! sending `elicitation/create` to the client while the call runs, and
//! answers the call from what came back. It keeps each answer it received
//! and the protocol revision the connection speaks. With `ask_while_listing`
//! it also asks while the client lists its tools, when no call runs.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use ragent::mcp::{Connect, ConnectError, Connected, PageOrigins, ServerEntry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Notify;

use super::asking::{keyed_tools_config, pay_tool, serve_in_process};
pub use super::asking::{page_params, payment_params};

/// What one `elicitation/create` brought back to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The client's result, as JSON (`{"action": …, "content": …}`).
    Result(Value),
    /// The request failed (the client answered an error).
    Failed(String),
}

#[derive(Clone, Default)]
pub struct LegacyServer {
    /// The `params` of the request each `pay` call sends, in order.
    script: Arc<Mutex<VecDeque<Value>>>,
    /// Sent while the client lists tools, once.
    ask_while_listing: Arc<Mutex<Option<Value>>>,
    answers: Arc<Mutex<Vec<Answer>>>,
    answered: Arc<Notify>,
    versions: Arc<Mutex<Vec<ProtocolVersion>>>,
    pays: Arc<Mutex<u32>>,
}

/// The params of a form asking for the payment password.
pub fn password_request() -> Value {
    json!({
        "mode": "form",
        "message": "请输入支付密码",
        "requestedSchema": {
            "type": "object",
            "properties": {"password": {"type": "string", "title": "支付密码"}},
            "required": ["password"]
        }
    })
}

impl LegacyServer {
    /// Each `pay` call sends the next of `script`; once it runs out, pays
    /// without asking.
    pub fn new(script: Vec<Value>) -> LegacyServer {
        LegacyServer {
            script: Arc::new(Mutex::new(script.into())),
            ..LegacyServer::default()
        }
    }

    /// Also asks once while the client lists its tools.
    pub fn asking_while_listing(self, params: Value) -> LegacyServer {
        *self.ask_while_listing.lock().unwrap() = Some(params);
        self
    }

    pub fn answers(&self) -> Vec<Answer> {
        self.answers.lock().unwrap().clone()
    }

    /// Waits until the server has received `count` answers.
    pub async fn answered(&self, count: usize) -> Vec<Answer> {
        loop {
            let notified = self.answered.notified();
            let answers = self.answers();
            if answers.len() >= count {
                return answers;
            }
            tokio::time::timeout(std::time::Duration::from_secs(30), notified)
                .await
                .expect("the server got its answer in time");
        }
    }

    /// The revision each connection negotiated.
    pub fn versions(&self) -> Vec<ProtocolVersion> {
        self.versions.lock().unwrap().clone()
    }

    pub fn pays(&self) -> u32 {
        *self.pays.lock().unwrap()
    }

    pub fn entry(&self, name: &str, trusted: bool) -> ServerEntry {
        ServerEntry {
            name: name.into(),
            trusted,
            call_timeout: None,
            pages: PageOrigins::none(),
            ucp: None,
            connector: Arc::new(InProcessLegacy {
                server: self.clone(),
                identity: uuid::Uuid::new_v4().to_string(),
            }),
        }
    }

    async fn ask(&self, params: Value, context: &RequestContext<RoleServer>) -> Answer {
        let answer = match serde_json::from_value::<ElicitRequestParams>(params) {
            Ok(params) => match context.peer.create_elicitation(params).await {
                Ok(result) => Answer::Result(serde_json::to_value(result).unwrap()),
                Err(error) => Answer::Failed(error.to_string()),
            },
            Err(error) => Answer::Failed(format!("the script's request is not one: {error}")),
        };
        self.answers.lock().unwrap().push(answer.clone());
        self.answered.notify_waiters();
        answer
    }
}

struct Handler {
    server: LegacyServer,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        keyed_tools_config()
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Owned(vec![ProtocolVersion::V_2025_11_25])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(info) = context.peer.peer_info() {
            self.server
                .versions
                .lock()
                .unwrap()
                .push(info.protocol_version.clone());
        }
        let asking = self.server.ask_while_listing.lock().unwrap().take();
        if let Some(params) = asking {
            self.server.ask(params, &context).await;
        }
        Ok(ListToolsResult::with_all_items(vec![pay_tool()]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let next = self.server.script.lock().unwrap().pop_front();
        let text = match next {
            None => {
                *self.server.pays.lock().unwrap() += 1;
                "paid without asking".to_string()
            }
            Some(params) => match self.server.ask(params, &context).await {
                Answer::Result(result) if result["action"] == "accept" => {
                    *self.server.pays.lock().unwrap() += 1;
                    format!(
                        "paid with {}",
                        result["content"]["method"].as_str().unwrap_or("")
                    )
                }
                Answer::Result(result) => format!(
                    "not paid: the user chose {}",
                    result["action"].as_str().unwrap_or("")
                ),
                Answer::Failed(error) => format!("not paid: {error}"),
            },
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// The server's end of the pipe, behind a filter that answers
/// `server/discover` as a server of 2025-11-25 does, "method not found"
/// (rmcp's server knows the method and would answer that it supports no
/// version the client asks for), and passes everything else through.
fn before_discovery(client: DuplexStream) -> DuplexStream {
    let (server_end, filter_end) = tokio::io::duplex(64 * 1024);
    let (from_client, to_client) = tokio::io::split(client);
    let (from_server, mut to_server) = tokio::io::split(filter_end);
    let to_client = Arc::new(tokio::sync::Mutex::new(to_client));
    tokio::spawn({
        let to_client = to_client.clone();
        async move {
            let mut lines = BufReader::new(from_client).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if message["method"] == "server/discover" {
                    let refusal = json!({
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "Method not found"}
                    });
                    let mut out = to_client.lock().await;
                    if out
                        .write_all(format!("{refusal}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                    continue;
                }
                if to_server
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_server).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut out = to_client.lock().await;
            if out.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                return;
            }
        }
    });
    server_end
}

struct InProcessLegacy {
    server: LegacyServer,
    identity: String,
}

impl Connect for InProcessLegacy {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        let handler = Handler {
            server: self.server.clone(),
        };
        Box::pin(serve_in_process(handler, before_discovery))
    }

    fn identity(&self) -> String {
        format!("in-process-legacy:{}", self.identity)
    }

    fn describe(&self) -> String {
        "in-process server of the 2025-11-25 revision".into()
    }
}
