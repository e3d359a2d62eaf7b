//! The API key, headers, server env values and the secret values in a
//! server's args and URL: kept apart from the stored settings document (in the keyring, or the database where no keyring
//! answers), never in the settings view, and saved from the page as intent.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use ragent::mcp::config::ServerTransportWith;
use ragent::mcp::config::{ServerConfig, ServerTransport};
use ragent::secrets::{KeyringSecrets, MemorySecrets, SecretStore, SecretsBackend};
use ragent::settings::Settings;
use ragent::settings_view::{Secret, SettingsEdit};
use ragent::store::{Store, kv};
use ragent::{Agent, AgentConfig};

const SECRETS: [&str; 7] = [
    "sk-live-key",
    "org-secret",
    "env-token",
    "Bearer http-token",
    "stdio-region",
    "arg-api-key",
    "url-query-token",
];

fn settings_with_secrets() -> Settings {
    let mut settings = Settings::default();
    settings.model.base_url = "https://api.example.com/v1".into();
    settings.model.model = "m".into();
    settings.model.api_key = Some(SECRETS[0].into());
    settings.model.extra_headers = [("X-Org".to_string(), SECRETS[1].to_string())].into();
    settings.mcp_servers.insert(
        "notes".into(),
        ServerConfig {
            transport: ServerTransport::Stdio {
                command: "notes-mcp".into(),
                args: vec!["--api-key".into(), SECRETS[5].into()],
                env: [
                    ("TOKEN".to_string(), SECRETS[2].to_string()),
                    ("REGION".to_string(), SECRETS[4].to_string()),
                ]
                .into(),
            },
            trusted: false,
            disabled: false,
            timeout_secs: None,
            oauth_client_id: None,
            page_origins: Vec::new(),
            ucp: None,
        },
    );
    settings.mcp_servers.insert(
        "remote".into(),
        ServerConfig {
            transport: ServerTransport::Http {
                url: format!("http://127.0.0.1:9/mcp?token={}", SECRETS[6]),
                headers: [("Authorization".to_string(), SECRETS[3].to_string())].into(),
            },
            trusted: false,
            disabled: false,
            timeout_secs: None,
            oauth_client_id: None,
            page_origins: Vec::new(),
            ucp: None,
        },
    );
    settings
}

async fn open(db: &Path, secrets: SecretsBackend) -> Agent {
    let mut config = AgentConfig::new(db);
    config.secrets = secrets;
    Agent::open(config).await.unwrap()
}

/// Every row of the database's key-value table, as stored.
fn stored_rows(db: &Path) -> BTreeMap<String, String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT key, value FROM settings").unwrap();
    stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The settings as an older version stored them: secrets inline in the
/// one document.
fn store_as_an_older_version_did(db: &Path) {
    let store = Store::open(db).unwrap();
    store
        .with_conn(|c| kv::save_settings(c, &settings_with_secrets(), 1))
        .unwrap();
}

fn assert_no_secret_in(text: &str, what: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret:?} found in {what}: {text}");
    }
}

#[tokio::test]
async fn with_a_keyring_no_secret_value_is_in_the_database_and_all_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    let keyring = Arc::new(MemorySecrets::new());
    let agent = open(&db, SecretsBackend::Custom(keyring.clone())).await;
    agent.save_settings(settings_with_secrets()).await.unwrap();

    let rows = stored_rows(&db);
    assert_no_secret_in(&format!("{rows:?}"), "the database");
    assert!(rows["settings"].contains("X-Org") && rows["settings"].contains("TOKEN"));
    let held: Vec<String> = keyring.snapshot().into_values().collect();
    for secret in SECRETS {
        assert!(
            held.contains(&secret.to_string()),
            "{secret} not in the keyring"
        );
    }
    drop(agent);

    let again = open(&db, SecretsBackend::Custom(keyring.clone())).await;
    assert_eq!(again.settings(), settings_with_secrets());
}

#[tokio::test]
async fn where_no_keyring_answers_the_secrets_live_in_the_database_beside_the_settings_document() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    let agent = open(&db, SecretsBackend::Database).await;
    agent.save_settings(settings_with_secrets()).await.unwrap();
    let rows = stored_rows(&db);
    assert_no_secret_in(&rows["settings"], "the settings document");
    assert_eq!(rows["secret/model/api_key"], SECRETS[0]);
    assert_eq!(rows["secret/server/notes/env/TOKEN"], SECRETS[2]);
    assert_eq!(rows["secret/server/notes/arg/api-key"], SECRETS[5]);
    assert_eq!(rows["secret/server/remote/query/token"], SECRETS[6]);
    drop(agent);

    let again = open(&db, SecretsBackend::Database).await;
    assert_eq!(again.settings(), settings_with_secrets());
}

#[tokio::test]
async fn inline_secrets_of_an_older_settings_document_move_to_the_keyring_on_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    store_as_an_older_version_did(&db);
    let keyring = Arc::new(MemorySecrets::new());
    let agent = open(&db, SecretsBackend::Custom(keyring.clone())).await;
    assert_eq!(agent.settings(), settings_with_secrets());
    assert_no_secret_in(&format!("{:?}", stored_rows(&db)), "the database");
    let bytes = on_disk(&db);
    for secret in SECRETS {
        assert!(!holds(&bytes, secret), "{secret:?} is still on disk");
    }
    assert_eq!(
        keyring.get("model/api_key").unwrap().as_deref(),
        Some(SECRETS[0])
    );
    assert_eq!(
        keyring
            .get("server/remote/header/Authorization")
            .unwrap()
            .as_deref(),
        Some(SECRETS[3])
    );
}

#[tokio::test]
async fn secrets_the_database_kept_move_to_the_keyring_once_one_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    let agent = open(&db, SecretsBackend::Database).await;
    agent.save_settings(settings_with_secrets()).await.unwrap();
    drop(agent);

    let keyring = Arc::new(MemorySecrets::new());
    let agent = open(&db, SecretsBackend::Custom(keyring.clone())).await;
    assert_eq!(agent.settings(), settings_with_secrets());
    assert_no_secret_in(&format!("{:?}", stored_rows(&db)), "the database");
    assert_eq!(keyring.snapshot().len(), SECRETS.len());
}

#[tokio::test]
async fn the_settings_view_carries_no_secret_value_only_which_are_set() {
    let dir = tempfile::tempdir().unwrap();
    let agent = open(&dir.path().join("assistant.db"), SecretsBackend::Database).await;
    agent.save_settings(settings_with_secrets()).await.unwrap();
    let view = agent.settings_view();
    assert_no_secret_in(&serde_json::to_string(&view).unwrap(), "the view");
    assert_eq!(view.settings.model.api_key, Some(Secret::Keep));
    assert_eq!(
        view.settings.model.extra_headers,
        [("X-Org".to_string(), Secret::Keep)].into()
    );
}

#[tokio::test]
async fn a_pasted_config_with_a_token_in_its_args_stores_the_token_in_the_keyring_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    let keyring = Arc::new(MemorySecrets::new());
    let agent = open(&db, SecretsBackend::Custom(keyring.clone())).await;
    let pasted =
        r#"{"mcpServers": {"gh": {"command": "gh-mcp", "args": ["--token", "ghp-PASTED"]}}}"#;

    let ragent::mcp::import::ImportPreview::Plan { plan } = agent.preview_mcp_import(pasted) else {
        panic!("the text is importable");
    };
    assert!(!serde_json::to_string(&plan).unwrap().contains("ghp-PASTED"));
    agent
        .apply_mcp_import(pasted, &plan.fingerprint)
        .await
        .unwrap();

    assert_eq!(
        keyring.get("server/gh/arg/token").unwrap().as_deref(),
        Some("ghp-PASTED")
    );
    assert!(!format!("{:?}", stored_rows(&db)).contains("ghp-PASTED"));
    assert!(
        !serde_json::to_string(&agent.settings_view())
            .unwrap()
            .contains("ghp-PASTED")
    );
    let ServerTransport::Stdio { args, .. } = &agent.settings().mcp_servers["gh"].transport else {
        panic!("gh runs a command");
    };
    assert_eq!(args, &["--token", "ghp-PASTED"]);
}

/// The edit a page sends back when the user changes nothing.
fn unchanged(agent: &Agent) -> SettingsEdit {
    // What the page saves when the user changes nothing: the view it got.
    SettingsEdit {
        settings: agent.settings_view().settings,
        renamed: Default::default(),
    }
}

#[tokio::test]
async fn saving_from_the_page_keeps_untouched_secrets_sets_new_ones_and_clears_cleared_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    let agent = open(&db, SecretsBackend::Database).await;
    agent.save_settings(settings_with_secrets()).await.unwrap();

    agent.edit_settings(unchanged(&agent)).await.unwrap();
    assert_eq!(
        agent.settings(),
        settings_with_secrets(),
        "keep changes nothing"
    );

    let mut edit = unchanged(&agent);
    edit.settings.model.api_key = Some(Secret::Set {
        value: "sk-rotated".into(),
    });
    edit.settings.model.extra_headers.remove("X-Org");
    let ServerTransportWith::Stdio { env, .. } = &mut edit
        .settings
        .mcp_servers
        .get_mut("notes")
        .unwrap()
        .transport
    else {
        panic!("notes is a stdio server");
    };
    env.remove("TOKEN");
    let view = agent.edit_settings(edit).await.unwrap();
    assert_eq!(view.settings.model.api_key, Some(Secret::Keep));
    assert!(view.settings.model.extra_headers.is_empty());

    let mut expected = settings_with_secrets();
    expected.model.api_key = Some("sk-rotated".into());
    expected.model.extra_headers.clear();
    if let ServerTransport::Stdio { env, .. } =
        &mut expected.mcp_servers.get_mut("notes").unwrap().transport
    {
        env.remove("TOKEN");
    }
    assert_eq!(agent.settings(), expected);
    let rows = stored_rows(&db);
    assert!(
        !rows.contains_key("secret/model/header/X-Org"),
        "a cleared secret is deleted"
    );
    assert!(!rows.contains_key("secret/server/notes/env/TOKEN"));
    drop(agent);
    assert_eq!(
        open(&db, SecretsBackend::Database).await.settings(),
        expected
    );

    let agent = open(&db, SecretsBackend::Database).await;
    let mut clear = unchanged(&agent);
    clear.settings.model.api_key = None;
    let view = agent.edit_settings(clear).await.unwrap();
    assert_eq!(view.settings.model.api_key, None);
    assert_eq!(agent.settings().model.api_key, None);
    assert!(!stored_rows(&db).contains_key("secret/model/api_key"));
}

/// The database file and its log, as bytes on disk.
fn on_disk(db: &Path) -> Vec<u8> {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let mut bytes = std::fs::read(db).unwrap();
    bytes.extend(std::fs::read(wal).unwrap_or_default());
    bytes
}

fn holds(bytes: &[u8], secret: &str) -> bool {
    bytes
        .windows(secret.len())
        .any(|window| window == secret.as_bytes())
}

#[tokio::test]
async fn a_replaced_or_cleared_secret_is_in_neither_the_database_file_nor_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    let agent = open(&db, SecretsBackend::Database).await;
    agent.save_settings(settings_with_secrets()).await.unwrap();
    assert!(
        holds(&on_disk(&db), SECRETS[0]),
        "a kept secret is on disk where no keyring answers"
    );

    let mut rotate = unchanged(&agent);
    rotate.settings.model.api_key = Some(Secret::Set {
        value: "sk-rotated-key".into(),
    });
    rotate.settings.model.extra_headers.remove("X-Org");
    agent.edit_settings(rotate).await.unwrap();
    let mut clear = unchanged(&agent);
    clear.settings.model.api_key = None;
    agent.edit_settings(clear).await.unwrap();
    // The session goes on writing: the next page images must not revive them.
    agent.create_session(None).unwrap();

    let bytes = on_disk(&db);
    for gone in [SECRETS[0], SECRETS[1], "sk-rotated-key"] {
        assert!(!holds(&bytes, gone), "{gone:?} is still on disk");
    }
    assert!(
        holds(&bytes, SECRETS[2]),
        "the secrets kept are still there"
    );
    drop(agent);
    let bytes = on_disk(&db);
    for gone in [SECRETS[0], SECRETS[1], "sk-rotated-key"] {
        assert!(!holds(&bytes, gone), "{gone:?} is on disk after closing");
    }
}

/// The real OS keyring: run by `scripts/test-keyring` inside a private D-Bus
/// session with its own Secret Service. Fails when no keyring answers.
#[tokio::test]
#[ignore = "needs a Secret Service: scripts/test-keyring runs it in a private D-Bus session"]
async fn the_os_keyring_keeps_the_secrets_when_a_secret_service_answers() {
    let service = "app.bitselect.assistant.test";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assistant.db");
    store_as_an_older_version_did(&db);
    let keyring_or_db = || SecretsBackend::KeyringOrDatabase {
        service: service.into(),
    };
    let agent = open(&db, keyring_or_db()).await;
    assert_eq!(agent.settings(), settings_with_secrets());
    let rows = stored_rows(&db);
    assert_no_secret_in(&format!("{rows:?}"), "the database");

    let vault = rows["secrets_vault"].clone();
    let os = KeyringSecrets::new(service, vault);
    assert_eq!(
        os.get("model/api_key").unwrap().as_deref(),
        Some(SECRETS[0]),
        "the key is in the OS keyring"
    );
    assert_eq!(
        os.get("server/notes/env/TOKEN").unwrap().as_deref(),
        Some(SECRETS[2])
    );

    let mut cleared = settings_with_secrets();
    cleared.model.api_key = None;
    agent.save_settings(cleared.clone()).await.unwrap();
    assert_eq!(
        os.get("model/api_key").unwrap(),
        None,
        "cleared in the keyring"
    );
    drop(agent);

    let again = open(&db, keyring_or_db()).await;
    assert_eq!(again.settings(), cleared);
    assert_no_secret_in(&format!("{:?}", stored_rows(&db)), "the database");
    again.save_settings(Settings::default()).await.unwrap();
    assert_eq!(os.get("server/notes/env/TOKEN").unwrap(), None);
}
