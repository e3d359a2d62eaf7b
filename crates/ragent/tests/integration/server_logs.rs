//! Each user stdio server's stderr goes to its own file in the log
//! directory the app passes in, appended across restarts.

use std::collections::BTreeMap;
use std::path::Path;

use ragent::mcp::config::{ServerConfig, ServerTransport};
use ragent::settings::Settings;
use ragent::{Agent, AgentConfig};

use crate::support::shop_binary;

/// The shop as a user's untrusted stdio server: it writes "shop opened" to
/// stderr when it starts.
fn shop_as_user_server(data_dir: &Path) -> ServerConfig {
    ServerConfig {
        transport: ServerTransport::Stdio {
            command: shop_binary().display().to_string(),
            args: vec!["--data-dir".into(), data_dir.display().to_string()],
            env: BTreeMap::from([("RUST_LOG".into(), "info".into())]),
        },
        trusted: false,
        disabled: false,
        timeout_secs: None,
        oauth_client_id: None,
        page_origins: Vec::new(),
        ucp: None,
    }
}

async fn open_and_list(dir: &Path, settings: &Settings) -> usize {
    let mut config = AgentConfig::new(dir.join("assistant.db"));
    config.initial_settings = Some(settings.clone());
    config.log_dir = Some(dir.join("logs"));
    let agent = Agent::open(config).await.unwrap();
    // Listing the tools starts the server.
    let tools = agent.tool_policies().await;
    agent.shutdown().await;
    tools.len()
}

#[tokio::test]
async fn a_user_stdio_servers_stderr_is_appended_to_its_own_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::default();
    settings.mcp_servers.insert(
        "myshop".into(),
        shop_as_user_server(&dir.path().join("shop")),
    );

    assert!(open_and_list(dir.path(), &settings).await > 0);
    let log = dir.path().join("logs").join("mcp-myshop.log");
    let first = std::fs::read_to_string(&log).unwrap();
    assert_eq!(first.matches("shop opened").count(), 1, "{first}");

    // A second start of the app appends to the same file.
    assert!(open_and_list(dir.path(), &settings).await > 0);
    let both = std::fs::read_to_string(&log).unwrap();
    assert!(both.starts_with(&first), "{both}");
    assert_eq!(both.matches("shop opened").count(), 2, "{both}");
}
