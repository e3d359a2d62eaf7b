//! The tests' own MCP server (`test-mcp-server`, one read-only tool
//! `look_up`), set up as the user's server `words`, and the core opened on
//! a data directory while the app is closed.

use std::error::Error;
use std::path::{Path, PathBuf};

use ragent::mcp::config::{ServerConfig, ServerTransport};

use super::app_binary;

/// The test server cargo built beside the app (`cargo build --workspace`
/// builds it; scripts/test does).
pub fn test_server() -> Result<PathBuf, Box<dyn Error>> {
    let server = Path::new(app_binary()).with_file_name("test-mcp-server");
    if !server.is_file() {
        return Err(format!(
            "{} is missing: build it with `cargo build -p test-mcp-server`",
            server.display()
        )
        .into());
    }
    Ok(server)
}

/// The test server's files (see crates/test-mcp-server).
pub struct WordsServer<'a> {
    pub description: &'a Path,
    pub calls: &'a Path,
    /// With one, a call is told its progress and answers once it exists.
    pub finish: Option<&'a Path>,
}

/// Adds the test server to the data directory's settings as a trusted
/// user server named `words`, through the core's own settings store.
pub fn add_words_server(data_dir: &Path, files: &WordsServer) -> Result<(), Box<dyn Error>> {
    let mut args = vec![
        "--description-file".into(),
        files.description.display().to_string(),
        "--calls-file".into(),
        files.calls.display().to_string(),
    ];
    if let Some(finish) = files.finish {
        args.extend(["--finish-file".into(), finish.display().to_string()]);
    }
    let server = ServerConfig {
        transport: ServerTransport::Stdio {
            command: test_server()?.display().to_string(),
            args,
            env: Default::default(),
        },
        trusted: true,
        disabled: false,
        timeout_secs: None,
        oauth_client_id: None,
        page_origins: Vec::new(),
        ucp: None,
    };
    with_agent(data_dir, |agent| {
        Box::pin(async move {
            let mut settings = agent.settings();
            settings.mcp_servers.insert("words".into(), server);
            agent.save_settings(settings).await
        })
    })
}

/// Opens the core on the data directory (the app is not running), runs `f`.
pub fn with_agent<T>(
    data_dir: &Path,
    f: impl for<'a> FnOnce(
        &'a ragent::Agent,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<T, ragent::AgentError>> + 'a>,
    >,
) -> Result<T, Box<dyn Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let value = runtime.block_on(async {
        let config = ragent::AgentConfig::new(data_dir.join(bitselect_assistant::CORE_DB_FILE));
        let agent = ragent::Agent::open(config).await?;
        let value = f(&agent).await;
        agent.shutdown().await;
        value
    })?;
    Ok(value)
}

pub fn calls_made(calls: &Path) -> Result<String, Box<dyn Error>> {
    Ok(std::fs::read_to_string(calls).unwrap_or_default())
}
