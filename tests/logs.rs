//! The app's logs: a session run with a model key, an extra header and a
//! server token set, logged at debug level, leaves none of them in any log
//! file.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bitselect_assistant::{AppDirs, logging, open_core};
use ragent::mcp::config::{ServerConfig, ServerTransport};
use ragent::protocol::{AgentEvent, StopReason};
use serde_json::json;
use support::app_binary;
use support::model::{ScriptedModel, text, tool_call};
use tracing_subscriber::EnvFilter;

const API_KEY: &str = "sk-test-SECRET-1234";
const HEADER_VALUE: &str = "hdr-test-SECRET-5678";
const SERVER_TOKEN: &str = "env-test-SECRET-9012";
/// Longest the run may take before the test fails (a guard, not a pause).
const RUN_GUARD: Duration = Duration::from_secs(60);

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn no_log_file_holds_the_api_key_a_header_value_or_a_server_token() {
    let data = tempfile::tempdir().unwrap();
    let dirs = AppDirs::under(data.path());
    logging::init(&dirs.logs, EnvFilter::new("debug")).unwrap();
    let shop = Path::new(app_binary()).with_file_name("bitselect-mcp");
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_search",
            "bitselect__search_product",
            json!({"keyword": "iPhone"}),
        ),
        text("找到了几款 iPhone。"),
    ])
    .unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let agent = open_core(&dirs, &shop).await.unwrap();
        let mut settings = agent.settings();
        settings.model.base_url = model.base_url().to_owned();
        settings.model.model = "scripted".into();
        settings.model.api_key = Some(API_KEY.into());
        settings
            .model
            .extra_headers
            .insert("X-Org-Token".into(), HEADER_VALUE.into());
        // A user's server with a token in its environment: the shop again.
        settings.mcp_servers.insert(
            "notes".into(),
            ServerConfig {
                transport: ServerTransport::Stdio {
                    command: shop.display().to_string(),
                    args: vec![
                        "--data-dir".into(),
                        data.path().join("notes").display().to_string(),
                    ],
                    env: BTreeMap::from([("NOTES_TOKEN".into(), SERVER_TOKEN.into())]),
                },
                trusted: false,
                disabled: false,
                timeout_secs: None,
                oauth_client_id: None,
                page_origins: Vec::new(),
                ucp: None,
            },
        );
        agent.save_settings(settings).await.unwrap();

        let mut events = agent.subscribe();
        let session = agent.create_session(None).unwrap();
        agent.send_message(&session.id, "找一下 iPhone").unwrap();
        let stopped = tokio::time::timeout(RUN_GUARD, async {
            loop {
                let envelope = events.recv().await.unwrap();
                if let AgentEvent::RunStopped { reason } = envelope.event {
                    return reason;
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(stopped, StopReason::Completed);
        // Listing starts the user's server too.
        let tools = agent.tool_policies().await;
        assert!(tools.iter().any(|t| t.server == "notes"), "{tools:?}");
        agent.shutdown().await;
    });
    // The key really went out with both model requests.
    assert_eq!(model.requests().len(), 2);

    let files = files_under(&dirs.logs);
    let mut app_log_has_debug = false;
    for file in &files {
        let content = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        for secret in [API_KEY, HEADER_VALUE, SERVER_TOKEN] {
            assert!(
                !content.contains(secret),
                "{} holds {secret}:\n{content}",
                file.display()
            );
        }
        let name = file.file_name().unwrap().to_string_lossy();
        if name.starts_with(logging::APP_LOG_PREFIX) {
            app_log_has_debug |= content.contains("DEBUG");
        }
    }
    assert!(app_log_has_debug, "no debug lines in {files:?}");
    let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap()).collect();
    assert!(names.iter().any(|n| *n == "mcp-bitselect.log"), "{names:?}");
    assert!(names.iter().any(|n| *n == "mcp-notes.log"), "{names:?}");
}
