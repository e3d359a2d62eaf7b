//! What every part of the agent shares: the store, the secrets, the clock,
//! the event stream, the tool source, the settings in force and the runs
//! going. The ground floor of `agent/`: it imports nothing above it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::call_schemas::CallSchemas;
use crate::agent::context::Windows;
use crate::agent::events::Events;
use crate::agent::held_inputs::LiveInputs;
use crate::agent::sign_ins::SignIns;
use crate::clock::Clock;
use crate::error::AgentError;
use crate::llm::openai::{ClientOptions, OpenAiClient};
use crate::llm::{ChatModel, LlmError};
use crate::mcp::config::{ServerConfig, ServerTransport};
use crate::mcp::login_path::LoginPath;
use crate::mcp::sign_in::ServerTokens;
use crate::mcp::{PageOrigins, ServerEntry, ToolSource};
use crate::policy::Trust;
use crate::protocol::{AgentEvent, EventEnvelope, SessionInfo};
use crate::schema::SchemaCache;
use crate::secrets::SecretStore;
use crate::settings::{Settings, ShopConnection};
use crate::store::{Store, StoreError, sessions};
use crate::ucp::binding::MerchantBinding;
use crate::ucp::profile::ProfileCache;

/// A run in progress, so it can be cancelled and a second one refused.
pub(crate) struct ActiveRun {
    pub run_id: String,
    pub cancel: CancellationToken,
    pub task: Option<JoinHandle<()>>,
}

/// What changes when settings are saved.
pub(crate) struct Live {
    pub settings: Settings,
    pub model: Result<Arc<dyn ChatModel>, LlmError>,
    pub runs: HashMap<String, ActiveRun>,
}

pub(crate) struct Inner {
    pub store: Arc<Store>,
    pub secrets: Arc<dyn SecretStore>,
    pub clock: Arc<dyn Clock>,
    /// Sent in order: a read turn being stored holds its session's later events.
    pub events: Arc<Events>,
    pub tools: Arc<dyn ToolSource>,
    pub builtin: Vec<ServerEntry>,
    pub online_shop: Option<String>,
    pub model_override: Option<Arc<dyn ChatModel>>,
    pub llm_options: ClientOptions,
    pub schemas: SchemaCache,
    pub windows: Windows,
    pub live: Mutex<Live>,
    pub log_dir: Option<PathBuf>,
    pub login_path: Option<Arc<LoginPath>>,
    pub sign_ins: SignIns,
    /// Requests for input that wait on their server's connection.
    pub live_inputs: LiveInputs,
    /// UCP merchants' profiles as lately read: a card computed and then
    /// approved reads its merchant's keys once.
    pub merchant_profiles: ProfileCache,
    /// The listed tools' input schemas as calls keep them.
    pub call_schemas: CallSchemas,
    /// What this start did about damaged databases.
    pub restored: Vec<sqlite_backups::DatabaseRestored>,
    /// The runtime the agent was opened on: its runs go there, whichever
    /// thread starts them, so a run's steps and the connections it opens
    /// share one scheduler.
    pub runtime: tokio::runtime::Handle,
}

impl Inner {
    pub(crate) fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    pub(crate) fn emit(&self, session_id: &str, run_id: Option<&str>, event: AgentEvent) {
        self.events.send(EventEnvelope {
            session_id: session_id.to_string(),
            run_id: run_id.map(str::to_string),
            event,
        });
    }

    pub(crate) fn live(&self) -> MutexGuard<'_, Live> {
        // A panic while holding this lock leaves plain data behind; keep going.
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The token that cancels the session's run; one never cancelled when
    /// no run goes (recovery at start).
    pub(crate) fn run_cancel(&self, session_id: &str) -> CancellationToken {
        self.live()
            .runs
            .get(session_id)
            .map(|run| run.cancel.clone())
            .unwrap_or_default()
    }

    /// The id of the session's run, when one goes.
    pub(crate) fn run_id(&self, session_id: &str) -> Option<String> {
        self.live()
            .runs
            .get(session_id)
            .map(|run| run.run_id.clone())
    }

    /// Frees the session's run slot if `run_id` still holds it.
    pub(crate) fn release(&self, session_id: &str, run_id: &str) {
        let mut live = self.live();
        if live
            .runs
            .get(session_id)
            .is_some_and(|r| r.run_id == run_id)
        {
            live.runs.remove(session_id);
        }
        drop(live);
        // Between runs, an app left open for days keeps a copy a day.
        self.store.keep_daily_copy();
    }

    pub(crate) fn settings(&self) -> Settings {
        self.live().settings.clone()
    }

    pub(crate) fn model(&self) -> Result<Arc<dyn ChatModel>, LlmError> {
        self.live().model.clone()
    }

    pub(crate) fn build_model(&self, settings: &Settings) -> Result<Arc<dyn ChatModel>, LlmError> {
        match &self.model_override {
            Some(model) => Ok(model.clone()),
            None => OpenAiClient::new(&settings.model, self.llm_options.clone())
                .map(|c| Arc::new(c) as Arc<dyn ChatModel>),
        }
    }

    /// A server's OAuth tokens, kept in the secret store.
    pub(crate) fn tokens(&self, server: &str) -> ServerTokens {
        ServerTokens::new(server, self.secrets.clone())
    }

    pub(crate) fn server_entries(&self, settings: &Settings) -> Vec<ServerEntry> {
        let mut entries: Vec<ServerEntry> = self
            .builtin
            .iter()
            .map(|entry| match self.online_shop_url(&entry.name, settings) {
                Some(url) => ServerEntry {
                    connector: ServerConfig::untrusted(ServerTransport::Http {
                        url,
                        headers: Default::default(),
                    })
                    .connector(
                        &entry.name,
                        None,
                        None,
                        Some(self.tokens(&entry.name)),
                    ),
                    pages: self.pages_in(&entry.name, settings),
                    ..entry.clone()
                },
                None => entry.clone(),
            })
            .collect();
        // A disabled server stays in the settings but is neither started
        // nor asked for its tools.
        entries.extend(
            settings
                .mcp_servers
                .iter()
                .filter(|(_, config)| !config.disabled)
                .map(|(name, config)| ServerEntry {
                    name: name.clone(),
                    trusted: config.trusted,
                    connector: config.connector(
                        name,
                        self.log_dir.as_deref(),
                        self.login_path.as_ref(),
                        Some(self.tokens(name)),
                    ),
                    call_timeout: config.timeout_secs.map(std::time::Duration::from_secs),
                    pages: config.pages(),
                    ucp: config.ucp.as_ref().map(|merchant| MerchantBinding {
                        origin: merchant.origin.clone(),
                        platform_profile: settings.ucp_platform_profile.clone(),
                    }),
                }),
        );
        entries
    }

    /// The online shop's URL when `server` is the built-in shop and the
    /// user has moved it online.
    pub(crate) fn online_shop_url(&self, server: &str, settings: &Settings) -> Option<String> {
        match &settings.shop {
            ShopConnection::Online { url } if self.online_shop.as_deref() == Some(server) => {
                Some(url.trim().to_string())
            }
            _ => None,
        }
    }

    /// The web pages `server` may send the user to under the settings in
    /// force now (a server no longer configured: none).
    pub(crate) fn pages_of(&self, server: &str) -> PageOrigins {
        self.pages_in(server, &self.live().settings)
    }

    /// The web pages `server` may send the user to under `settings`: the
    /// online shop's URL's origin, a built-in entry's own, or a configured
    /// server's (`ServerConfig::pages`).
    fn pages_in(&self, server: &str, settings: &Settings) -> PageOrigins {
        if let Some(url) = self.online_shop_url(server, settings) {
            return PageOrigins::of(Some(&url), &[]);
        }
        match self.builtin.iter().find(|e| e.name == server) {
            Some(entry) => entry.pages.clone(),
            None => settings
                .mcp_servers
                .get(server)
                .map(ServerConfig::pages)
                .unwrap_or_default(),
        }
    }

    /// Whether the server is trusted under the settings in force now (a
    /// server no longer configured is not).
    pub(crate) fn trust_of(&self, server: &str) -> Trust {
        let builtin = self.builtin.iter().find(|e| e.name == server);
        let trusted = match builtin {
            Some(entry) => entry.trusted,
            None => self
                .live()
                .settings
                .mcp_servers
                .get(server)
                .is_some_and(|config| config.trusted),
        };
        if trusted {
            Trust::Trusted
        } else {
            Trust::Untrusted
        }
    }

    pub(crate) fn builtin_names(&self) -> Vec<String> {
        self.builtin.iter().map(|e| e.name.clone()).collect()
    }

    pub(crate) fn session(&self, session_id: &str) -> Result<SessionInfo, AgentError> {
        self.store
            .with_conn(|c| sessions::get(c, session_id))
            .map_err(|e| match e {
                StoreError::NotFound(_) => AgentError::SessionNotFound(session_id.to_string()),
                other => AgentError::Store(other),
            })
    }
}
