//! `test-mcp-server --description-file FILE [--calls-file FILE]
//! [--finish-file FILE]`: an MCP server over stdio with one read-only tool,
//! `look_up`, whose description is the text of the description file when
//! the tools are listed. Changing that file between two starts of the app
//! is a changed tool definition. Each call is appended as a line to the
//! calls file, so a test can tell whether, and how often, the tool ran.
//! With a finish file, a call that asked for progress is told "查到一半"
//! (1 of 2) and answers only once that file exists, so a test can see a
//! running call's progress. Nothing is written to stdout but the protocol.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error(
        "usage: test-mcp-server --description-file FILE [--calls-file FILE] [--finish-file FILE]"
    )]
    Usage,
    #[error("serving over stdio: {0}")]
    Serve(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

struct Args {
    description_file: PathBuf,
    calls_file: Option<PathBuf>,
    finish_file: Option<PathBuf>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, StartError> {
    let (mut description_file, mut calls_file, mut finish_file) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(StartError::Usage)?;
        match flag.as_str() {
            "--description-file" => description_file = Some(PathBuf::from(value)),
            "--calls-file" => calls_file = Some(PathBuf::from(value)),
            "--finish-file" => finish_file = Some(PathBuf::from(value)),
            _ => return Err(StartError::Usage),
        }
    }
    Ok(Args {
        description_file: description_file.ok_or(StartError::Usage)?,
        calls_file,
        finish_file,
    })
}

/// How often a held call looks for its finish file.
const FINISH_POLL: std::time::Duration = std::time::Duration::from_millis(50);

struct LookUp {
    args: Arc<Args>,
}

fn input_schema() -> Arc<rmcp::model::JsonObject> {
    let schema = json!({
        "type": "object",
        "properties": {"word": {"type": "string", "title": "词语"}},
        "required": ["word"]
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

fn record_call(file: &Path, word: &str) -> std::io::Result<()> {
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    writeln!(out, "{word}")
}

impl ServerHandler for LookUp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let description = std::fs::read_to_string(&self.args.description_file).map_err(internal)?;
        let tool = Tool::new("look_up", description.trim().to_string(), input_schema())
            .with_title("查词")
            .with_annotations(ToolAnnotations::new().read_only(true));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "look_up" {
            return Err(ErrorData::invalid_params(
                format!("no tool {}", request.name),
                None,
            ));
        }
        let word = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("word"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(file) = &self.args.calls_file {
            record_call(file, &word).map_err(internal)?;
        }
        if let (Some(finish), Some(token)) =
            (&self.args.finish_file, context.meta.get_progress_token())
        {
            let news = ProgressNotificationParam::new(token, 1.0)
                .with_total(2.0)
                .with_message("查到一半");
            context.peer.notify_progress(news).await.map_err(internal)?;
            while !finish.exists() {
                tokio::time::sleep(FINISH_POLL).await;
            }
        }
        let answer = format!("{word}: found");
        Ok(CallToolResult::success(vec![ContentBlock::text(answer)]).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), StartError> {
    let args = Arc::new(parse_args(std::env::args().skip(1))?);
    let service = LookUp { args }
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| StartError::Serve(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| StartError::Serve(e.to_string()))?;
    Ok(())
}
