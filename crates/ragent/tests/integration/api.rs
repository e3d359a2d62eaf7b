//! The shell's side of the API: sessions, settings applied without a
//! restart (a new model endpoint, a user-added server over streamable
//! HTTP and its trust), and the transcript a reopened window draws.

use std::process::Stdio;

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::agent::DEFAULT_SESSION_TITLE;
use ragent::mcp::config::{ServerConfig, ServerTransport};
use ragent::protocol::{StopReason, TranscriptItem};
use ragent::toolcall::CallStatus;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_named_by_their_first_message_renamed_and_deleted() {
    let mut h = Harness::start(Setup::bare()).await;
    h.model.push_turn(text_turn("您好，有什么可以帮您？"));
    h.say("  你好，我想买手机  ").await;

    let sessions = h.agent.list_sessions().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].title, "你好，我想买手机");
    let other = h.agent.create_session(None).unwrap();
    assert_eq!(other.title, DEFAULT_SESSION_TITLE);
    h.agent.rename_session(&h.session, "买手机").unwrap();
    let titles: Vec<String> = h
        .agent
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.title)
        .collect();
    assert!(titles.contains(&"买手机".to_string()), "{titles:?}");

    let transcript = h.agent.transcript(&h.session).unwrap();
    let texts: Vec<String> = transcript
        .items
        .iter()
        .map(|i| match i {
            TranscriptItem::User { text, .. } | TranscriptItem::Assistant { text, .. } => {
                text.clone()
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(texts, vec!["你好，我想买手机", "您好，有什么可以帮您？"]);

    h.agent.delete_session(&h.session).unwrap();
    assert!(matches!(
        h.agent.transcript(&h.session),
        Err(AgentError::SessionNotFound(_))
    ));
    assert!(matches!(
        h.agent.send_message(&h.session, "还在吗"),
        Err(AgentError::SessionNotFound(_))
    ));
    assert!(matches!(
        h.agent.send_message(&other.id, "   "),
        Err(AgentError::EmptyMessage)
    ));
    assert_eq!(h.agent.list_sessions().unwrap().len(), 1);
}

/// Starts the shop over streamable HTTP on a free port; returns its URL.
async fn shop_over_http(data_dir: &std::path::Path) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(shop_binary())
        .args([
            "--data-dir",
            data_dir.to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(url) = line.split("listening on ").nth(1) {
            let url = url.trim().to_string();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return (child, url);
        }
    }
    panic!("the shop did not say where it listens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_take_effect_without_a_restart() {
    let mut h = Harness::start(Setup::bare()).await;
    let (_shop, url) = shop_over_http(&h.shop_dir()).await;

    // A user-added server: untrusted unless the user says so.
    let second_model = ScriptedModel::start().unwrap();
    let mut settings = h.agent.settings();
    settings.model.base_url = second_model.base_url();
    settings.mcp_servers.insert(
        "web".into(),
        ServerConfig {
            transport: ServerTransport::Http {
                url,
                headers: Default::default(),
            },
            trusted: false,
            disabled: false,
            timeout_secs: None,
            oauth_client_id: None,
            page_origins: Vec::new(),
            ucp: None,
        },
    );
    h.agent.save_settings(settings.clone()).await.unwrap();
    assert_eq!(h.agent.settings(), settings);

    second_model.push_turn(calls_turn("", &[("c1", "web__query_cart", json!({}))]));
    let run = h.say("看看购物车").await;
    assert!(run.asked(), "an untrusted server's read asks");
    assert_eq!(h.model.requests().len(), 0, "the old endpoint is not used");
    let card = run.card().clone();
    second_model.push_turn(text_turn("购物车里有 5 件商品。"));
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.finished()[0].status, CallStatus::Succeeded);
    assert!(
        run.finished()[0]
            .output
            .as_deref()
            .unwrap()
            .contains("MK8T4FE/A")
    );

    settings.mcp_servers.get_mut("web").unwrap().trusted = true;
    h.agent.save_settings(settings.clone()).await.unwrap();
    second_model.push_turn(calls_turn("", &[("c2", "web__query_cart", json!({}))]));
    second_model.push_turn(text_turn("还是 5 件。"));
    let run = h.say("再看看").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.started(), vec!["query_cart"], "trusted now: no card");

    settings.mcp_servers.insert(
        "bad__name".into(),
        ServerConfig {
            transport: ServerTransport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: Default::default(),
            },
            trusted: false,
            disabled: false,
            timeout_secs: None,
            oauth_client_id: None,
            page_origins: Vec::new(),
            ucp: None,
        },
    );
    let refused = h.agent.save_settings(settings).await;
    assert!(
        matches!(refused, Err(AgentError::InvalidSettings(_))),
        "{refused:?}"
    );
}

#[test]
fn the_agent_can_live_in_a_shell_state_and_its_futures_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<ragent::Agent>();
    send_sync::<ragent::AgentError>();
    let config = ragent::AgentConfig::new("/nonexistent/agent.db");
    send(&ragent::Agent::open(config));
}

/// A model that answers every request the same way, without HTTP.
struct Parrot;

impl ragent::llm::ChatModel for Parrot {
    fn complete<'a>(
        &'a self,
        request: &'a ragent::llm::ChatRequest,
        news: ragent::llm::TurnSink<'a>,
        _cancel: &'a tokio_util::sync::CancellationToken,
    ) -> futures::future::BoxFuture<'a, Result<ragent::llm::AssistantTurn, ragent::llm::LlmError>>
    {
        Box::pin(async move {
            let heard = match request.messages.last().map(|m| m.as_ref()) {
                Some(ragent::llm::ChatMessage::User { content }) => content.clone(),
                other => panic!("expected the user's message last, got {other:?}"),
            };
            let text = format!("你说：{heard}");
            news(ragent::llm::TurnNews::Text(&text));
            Ok(ragent::llm::AssistantTurn {
                text,
                ..Default::default()
            })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_can_be_injected_and_a_missing_one_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let agent = ragent::Agent::open(ragent::AgentConfig::new(dir.path().join("plain.db")))
        .await
        .unwrap();
    let mut events = Events(agent.subscribe());
    let session = agent.create_session(None).unwrap().id;
    agent.send_message(&session, "你好").unwrap();
    let run = events.until_stop().await;
    assert_eq!(run.reason, StopReason::Failed);
    let error = run
        .events
        .iter()
        .find_map(|e| match e {
            ragent::protocol::AgentEvent::Error { error } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(error.code, ragent::protocol::ErrorCode::ModelNotConfigured);

    let mut config = ragent::AgentConfig::new(dir.path().join("parrot.db"));
    config.model = Some(std::sync::Arc::new(Parrot));
    let agent = ragent::Agent::open(config).await.unwrap();
    let mut events = Events(agent.subscribe());
    let session = agent.create_session(Some("鹦鹉")).unwrap().id;
    agent.send_message(&session, "你好").unwrap();
    let run = events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.text(), "你说：你好");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_adds_its_servers_untrusted_in_one_save_and_a_stale_preview_adds_nothing() {
    use ragent::mcp::import::ImportPreview;

    let h = Harness::start(Setup::bare()).await;
    let text = r#"{"mcpServers": {
        "notes": {"command": "notes-mcp", "env": {"TOKEN": "${env:NOTES_TOKEN}"}},
        "tracker": {"url": "http://127.0.0.1:9/mcp", "disabled": true, "timeout": 5}
    }}"#;
    let ImportPreview::Plan { plan } = h.agent.preview_mcp_import(text) else {
        panic!("refused")
    };
    assert!(
        h.agent.settings().mcp_servers.is_empty(),
        "a preview saves nothing"
    );

    // A server named like one of the import is added meanwhile.
    let mut settings = h.agent.settings();
    settings.mcp_servers.insert(
        "notes".into(),
        ServerConfig::untrusted(ServerTransport::Http {
            url: "http://127.0.0.1:9/notes".into(),
            headers: Default::default(),
        }),
    );
    h.agent.save_settings(settings.clone()).await.unwrap();
    let stale = h.agent.apply_mcp_import(text, &plan.fingerprint).await;
    assert!(matches!(stale, Err(AgentError::ImportChanged)), "{stale:?}");
    let refused = h
        .agent
        .apply_mcp_import("{\"mcpServers\": {\"x\": {\"cwd\": \"/\"}}}", "")
        .await;
    assert!(
        matches!(refused, Err(AgentError::ImportRefused(_))),
        "{refused:?}"
    );
    assert_eq!(h.agent.settings(), settings, "nothing was added");

    let ImportPreview::Plan { plan } = h.agent.preview_mcp_import(text) else {
        panic!("refused")
    };
    let view = h
        .agent
        .apply_mcp_import(text, &plan.fingerprint)
        .await
        .unwrap();
    assert_eq!(
        view.settings.mcp_servers.keys().collect::<Vec<_>>(),
        vec!["notes", "notes-2", "tracker"]
    );
    let stored = h.agent.settings().mcp_servers;
    // Added untrusted and turned off: nothing pasted runs before the user turns it on.
    assert_eq!(
        stored["notes-2"],
        ServerConfig {
            disabled: true,
            ..ServerConfig::untrusted(ServerTransport::Stdio {
                command: "notes-mcp".into(),
                args: vec![],
                env: [("TOKEN".to_string(), "${env:NOTES_TOKEN}".to_string())].into(),
            })
        }
    );
    assert!(stored["tracker"].disabled && !stored["tracker"].trusted);
    assert_eq!(stored["tracker"].timeout_secs, Some(5));
    let running = |statuses: Vec<ragent::mcp::ServerStatus>| -> Vec<String> {
        statuses.into_iter().map(|s| s.name).collect()
    };
    let started = running(h.agent.server_status().await);
    assert!(!started.contains(&"notes-2".to_string()), "{started:?}");
    assert!(!started.contains(&"tracker".to_string()), "{started:?}");

    // The user turns notes-2 on; a server left disabled is kept but never started.
    let mut turned_on = h.agent.settings();
    if let Some(notes) = turned_on.mcp_servers.get_mut("notes-2") {
        notes.disabled = false;
    }
    h.agent.save_settings(turned_on).await.unwrap();
    let started = running(h.agent.server_status().await);
    assert!(started.contains(&"notes-2".to_string()), "{started:?}");
    assert!(!started.contains(&"tracker".to_string()), "{started:?}");

    let exported: serde_json::Value =
        serde_json::from_str(&h.agent.export_mcp_config().text).unwrap();
    assert_eq!(
        exported["mcpServers"]["tracker"],
        json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "disabled": true, "timeout": 5})
    );
}
