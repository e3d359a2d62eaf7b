//! The API the desktop shell calls. One [`Agent`] owns the store, the MCP
//! servers and the model client; runs execute on spawned tasks and report
//! through [`Agent::subscribe`]. No task ever waits for the user: a run
//! that needs a decision stores its batch and ends, and [`Agent::respond`]
//! starts a new run from the stored state.

mod batch;
mod call_schemas;
mod card;
mod checkout_preview;
mod context;
mod definitions;
mod elicitation;
mod ending;
mod events;
mod execute;
mod held_inputs;
mod inner;
mod inspect;
mod judge;
mod mandates;
mod mcp_config;
mod merchants;
mod message;
mod preview;
mod reads_first;
mod recheck;
mod recovery;
mod rejudge;
mod respond;
mod retry;
mod run;
mod sign_in;
mod sign_ins;
mod start;
mod tools;
mod transcript;
mod views;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::batch::expire_card_if_due;
use crate::agent::call_schemas::CallSchemas;
use crate::agent::elicitation::route;
use crate::agent::elicitation::stored::expire_request_if_due;
use crate::agent::held_inputs::LiveInputs;
use crate::agent::inner::{ActiveRun, Inner, Live};
use crate::agent::respond::{Replied, Reply};
use crate::agent::sign_ins::SignIns;
use crate::agent::start::Start;
use crate::agent::views::call_view;
use crate::clock::{Clock, SteadyClock, SystemClock};
use crate::error::AgentError;
use crate::llm::openai::ClientOptions;
use crate::llm::{ChatModel, LlmError};
use crate::mcp::config::validate_server_name;
use crate::mcp::hub::HubOptions;
use crate::mcp::login_path::LoginPath;
use crate::mcp::{McpHub, ServerEntry, ToolSource};
use crate::policy::{ToolFacts, ToolOverride};
use crate::protocol::{
    AgentEvent, AuditEntry, CallDecision, EventEnvelope, InputOutcome, KeyedReply, SessionInfo,
    Transcript,
};
use crate::schema::SchemaCache;
use crate::secrets::{
    self, DatabaseSecrets, KEYRING_TIMEOUT, KeyringSecrets, SecretStore, SecretsBackend, keeper,
    off_thread,
};
use crate::settings::{Settings, SettingsError};
use crate::settings_view::{SettingsEdit, SettingsView};
use crate::store::mandates as kept_mandates;
use crate::store::{Store, StoreError, audit, calls, kv, sessions};
use crate::ucp::evidence::KeptMandate;
use crate::ucp::profile::ProfileCache;

pub use elicitation::judge::MAX_ROUNDS as MAX_INPUT_ROUNDS;
pub use message::DEFAULT_SESSION_TITLE;
pub use recovery::RecoveryReport;

pub use sqlite_backups::{Database, DatabaseRestored};

/// How to open an agent.
pub struct AgentConfig {
    pub db_path: PathBuf,
    /// Servers the app supplies, each with its trust (the shop is
    /// trusted). The user's settings cannot redefine them.
    pub builtin_servers: Vec<ServerEntry>,
    /// A model to use instead of the OpenAI-compatible client built from
    /// the settings.
    pub model: Option<Arc<dyn ChatModel>>,
    /// A tool source to use instead of a fresh [`McpHub`].
    pub tools: Option<Arc<dyn ToolSource>>,
    pub llm_options: ClientOptions,
    pub hub_options: HubOptions,
    /// The wall clock; the agent reads it through a [`SteadyClock`], so a
    /// clock set back never makes time run backwards for cards and runs.
    pub clock: Arc<dyn Clock>,
    /// Settings for a database that has none yet (first run).
    pub initial_settings: Option<Settings>,
    /// Events buffered per subscriber before a slow one starts losing them.
    pub event_capacity: usize,
    /// Where the API key, headers and server env values are kept.
    pub secrets: SecretsBackend,
    /// Where each user stdio server's stderr is appended, as
    /// `mcp-<server>.log`; without it those lines go to the debug log.
    pub log_dir: Option<PathBuf>,
    /// Start stdio servers with the login shell's PATH when the app's looks
    /// like a desktop session's minimal one (see `mcp::login_path`).
    pub login_shell_path: bool,
    /// The built-in server that the setting `shop` may move online: then
    /// it is reached over HTTP at the URL set and signed in to as the
    /// user, under the same name and trust.
    pub online_shop: Option<String>,
    /// The local shop's database, which the app's built-in shop server
    /// opens: checked at start before any server runs, and restored from
    /// its newest good copy when damaged, as the agent's own is.
    pub shop_database: Option<PathBuf>,
}

impl AgentConfig {
    pub fn new(db_path: impl Into<PathBuf>) -> Self {
        AgentConfig {
            db_path: db_path.into(),
            builtin_servers: Vec::new(),
            model: None,
            tools: None,
            llm_options: ClientOptions::default(),
            hub_options: HubOptions::default(),
            clock: Arc::new(SystemClock),
            initial_settings: None,
            event_capacity: 1024,
            secrets: SecretsBackend::Database,
            log_dir: None,
            login_shell_path: false,
            online_shop: None,
            shop_database: None,
        }
    }
}

/// The agent core. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

/// A claim on a session's single run slot; released when dropped unless a
/// run task took it over.
pub(crate) struct RunSlot {
    inner: Arc<Inner>,
    session_id: String,
    run_id: String,
    cancel: CancellationToken,
    armed: bool,
}

impl RunSlot {
    fn claim(inner: &Arc<Inner>, session_id: &str) -> Result<RunSlot, AgentError> {
        let mut live = inner.live();
        if live.runs.contains_key(session_id) {
            return Err(AgentError::RunInProgress(session_id.to_string()));
        }
        let run_id = uuid::Uuid::new_v4().to_string();
        let cancel = CancellationToken::new();
        live.runs.insert(
            session_id.to_string(),
            ActiveRun {
                run_id: run_id.clone(),
                cancel: cancel.clone(),
                task: None,
            },
        );
        Ok(RunSlot {
            inner: inner.clone(),
            session_id: session_id.to_string(),
            run_id,
            cancel,
            armed: true,
        })
    }

    /// Runs `start` on a task that frees the slot when it ends.
    fn spawn(mut self, start: Start) -> String {
        self.armed = false;
        let inner = self.inner.clone();
        let session_id = self.session_id.clone();
        let run_id = self.run_id.clone();
        let cancel = self.cancel.clone();
        let task = inner.runtime.spawn({
            let inner = inner.clone();
            let session_id = session_id.clone();
            let run_id = run_id.clone();
            async move { run::drive(&inner, &session_id, &run_id, &cancel, start).await }
        });
        let mut live = inner.live();
        match live.runs.get_mut(&session_id) {
            Some(active) if active.run_id == run_id => active.task = Some(task),
            // The run already ended and freed the slot.
            _ => {}
        }
        run_id
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        if self.armed {
            self.inner.release(&self.session_id, &self.run_id);
        }
    }
}

impl Agent {
    /// Opens the database (migrating it), starts nothing yet, and recovers
    /// what a crash left: expired cards, and calls left `running`. Runs go
    /// to the runtime this is called on (the app's is a
    /// [`CoreRuntime`](crate::runtime::CoreRuntime)).
    pub async fn open(config: AgentConfig) -> Result<Agent, AgentError> {
        for entry in &config.builtin_servers {
            validate_server_name(&entry.name)
                .map_err(|e| SettingsError::ServerName(e.to_string()))?;
        }
        let store = Arc::new(Store::open(&config.db_path)?);
        let mut restored: Vec<DatabaseRestored> = store.restored().into_iter().cloned().collect();
        if let Some(shop) = &config.shop_database {
            restored.extend(
                sqlite_backups::restore_if_damaged(Database::Shop, shop)
                    .map_err(StoreError::Backup)?,
            );
        }
        // Never earlier than what was already recorded, never backwards.
        let clock: Arc<dyn Clock> =
            Arc::new(SteadyClock::new(config.clock, store.latest_moment()?));
        let (secrets, drain) = open_secrets(&store, config.secrets, clock.now_ms()).await?;
        let settings = {
            let (store, secrets) = (store.clone(), secrets.clone());
            let initial = config.initial_settings.unwrap_or_default();
            let now = clock.now_ms();
            off_thread(SECRETS_TIMEOUT, move || {
                keeper::load(&store, &*secrets, drain.as_ref(), initial, now)
            })
            .await?
        };
        let events = Arc::new(events::Events::new(config.event_capacity.max(16)));
        let tools = config
            .tools
            .unwrap_or_else(|| Arc::new(McpHub::new(config.hub_options)));
        let inner = Arc::new(Inner {
            store,
            secrets,
            clock,
            events,
            tools,
            builtin: config.builtin_servers,
            online_shop: config.online_shop,
            model_override: config.model,
            llm_options: config.llm_options,
            schemas: SchemaCache::default(),
            windows: context::Windows::default(),
            live: Mutex::new(Live {
                settings: settings.clone(),
                model: Err(LlmError::NotConfigured),
                runs: HashMap::new(),
            }),
            log_dir: config.log_dir,
            login_path: config
                .login_shell_path
                .then(|| Arc::new(LoginPath::from_env())),
            sign_ins: SignIns::default(),
            live_inputs: LiveInputs::default(),
            merchant_profiles: ProfileCache::default(),
            call_schemas: CallSchemas::default(),
            restored,
            runtime: tokio::runtime::Handle::current(),
        });
        let model = inner.build_model(&settings);
        inner.live().model = model;
        inner.tools.configure(inner.server_entries(&settings)).await;
        let report = recovery::recover(&inner).await?;
        if !report.is_empty() {
            tracing::info!(?report, "recovered after a restart");
        }
        Ok(Agent { inner })
    }

    /// Every event of every session, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EventEnvelope> {
        self.inner.events.subscribe()
    }

    /// Stores the message and starts a run answering it. A pending card in
    /// the session is superseded: its calls never run, and the model is
    /// told so before it reads the new message. Returns the run id.
    pub fn send_message(&self, session_id: &str, text: &str) -> Result<String, AgentError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(AgentError::EmptyMessage);
        }
        self.inner.session(session_id)?;
        let slot = RunSlot::claim(&self.inner, session_id)?;
        let start = message::send(&self.inner, session_id, &slot.run_id, text)?;
        Ok(slot.spawn(start))
    }

    /// Asks the model again on the stored conversation after a failed
    /// turn; nothing is appended. Refused while a run is going, while a
    /// card waits, and when the model has already answered. Returns the
    /// run id.
    pub fn retry(&self, session_id: &str) -> Result<String, AgentError> {
        self.inner.session(session_id)?;
        let slot = RunSlot::claim(&self.inner, session_id)?;
        expire_card_if_due(&self.inner, session_id)?;
        retry::check(&self.inner, session_id)?;
        Ok(slot.spawn(Start::Fresh))
    }

    /// Asks the model for another final answer: the last one is withdrawn
    /// (kept in the database, no longer in the conversation) and a run
    /// answers again. Refused while a run is going, while a card waits, and
    /// when the conversation does not end with an answer that asked for no
    /// tool. Returns the run id.
    pub fn regenerate(&self, session_id: &str) -> Result<String, AgentError> {
        self.inner.session(session_id)?;
        let slot = RunSlot::claim(&self.inner, session_id)?;
        expire_card_if_due(&self.inner, session_id)?;
        let message_id = retry::withdraw_final_answer(&self.inner, session_id)?;
        // The open window holds the withdrawn answer: read the store again.
        self.inner.windows.forget(session_id);
        self.inner.emit(
            session_id,
            Some(&slot.run_id),
            AgentEvent::AnswerWithdrawn { message_id },
        );
        Ok(slot.spawn(Start::Fresh))
    }

    /// Records decisions on the pending card. Once every call on it is
    /// decided, the batch runs in the model's order and the loop goes on.
    /// A stale reply, an unknown call, a second decision for a call or
    /// edited arguments that do not fit the schema change nothing. An
    /// approval of a call whose preview changed since its card was shown
    /// records nothing either: the card is shown again with the new one.
    pub async fn respond(
        &self,
        session_id: &str,
        reply_id: &str,
        decisions: Vec<CallDecision>,
    ) -> Result<InputOutcome, AgentError> {
        self.inner.session(session_id)?;
        let reply = Reply {
            session_id,
            reply_id,
            decisions: &decisions,
        };
        let slot = match RunSlot::claim(&self.inner, session_id) {
            Ok(slot) => slot,
            // A second click while the first one's run is going: say what
            // is wrong with the reply itself when something is.
            Err(busy) => return Err(respond::diagnose(&self.inner, &reply).unwrap_or(busy)),
        };
        Ok(match respond::respond(&self.inner, &reply).await? {
            Replied::Waiting(remaining) => InputOutcome::AwaitingDecisions { remaining },
            Replied::Run(start) => InputOutcome::RunStarted {
                run_id: slot.spawn(start),
            },
        })
    }

    /// Answers the request for input a call's server made (an MCP
    /// elicitation): accept with the form's content, decline or cancel
    /// each of its requests. The answer is checked against the request's
    /// form before anything is sent. A request stored with its call: the
    /// call goes to its server again with the answers and the server's
    /// state, and a run goes on. A request waiting on the server's
    /// connection: the answer goes there and the run holding the call goes
    /// on. A request not waiting, expired, or an answer that does not fit
    /// changes nothing.
    pub fn answer_input(
        &self,
        session_id: &str,
        request_id: &str,
        replies: Vec<KeyedReply>,
    ) -> Result<InputOutcome, AgentError> {
        self.inner.session(session_id)?;
        if let Some(run_id) = route::answer_live(&self.inner, session_id, request_id, &replies)? {
            return Ok(InputOutcome::RunContinues { run_id });
        }
        let slot = RunSlot::claim(&self.inner, session_id)?;
        let start = route::answer_stored(&self.inner, session_id, request_id, &replies)?;
        Ok(InputOutcome::RunStarted {
            run_id: slot.spawn(start),
        })
    }

    /// The address of the waiting request's page `key` (a URL-mode
    /// request), for the shell to open in the browser.
    pub fn input_url(
        &self,
        session_id: &str,
        request_id: &str,
        key: &str,
    ) -> Result<String, AgentError> {
        self.inner.session(session_id)?;
        route::url_to_open(&self.inner, session_id, request_id, key)
    }

    /// Cancels the session's run. Returns whether one was running.
    pub fn cancel_run(&self, session_id: &str) -> Result<bool, AgentError> {
        self.inner.session(session_id)?;
        let live = self.inner.live();
        Ok(match live.runs.get(session_id) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        })
    }

    /// Whether a run is in progress in the session.
    pub fn is_running(&self, session_id: &str) -> bool {
        self.inner.live().runs.contains_key(session_id)
    }

    pub fn create_session(&self, title: Option<&str>) -> Result<SessionInfo, AgentError> {
        let id = uuid::Uuid::new_v4().to_string();
        let title = title
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or(DEFAULT_SESSION_TITLE);
        Ok(self
            .inner
            .store
            .with_conn(|c| sessions::create(c, &id, title, self.inner.now()))?)
    }

    pub fn list_sessions(&self) -> Result<Vec<SessionInfo>, AgentError> {
        Ok(self.inner.store.with_conn(sessions::list)?)
    }

    /// Renames a session and returns it as listed.
    pub fn rename_session(&self, session_id: &str, title: &str) -> Result<SessionInfo, AgentError> {
        self.inner.session(session_id)?;
        self.inner
            .store
            .with_conn(|c| sessions::rename(c, session_id, title.trim(), self.inner.now()))?;
        self.inner.session(session_id)
    }

    /// Deletes a session and its history (the audit log keeps its rows).
    pub fn delete_session(&self, session_id: &str) -> Result<(), AgentError> {
        self.inner.session(session_id)?;
        // Holding the slot keeps a run from starting while the rows go.
        let _slot = RunSlot::claim(&self.inner, session_id)?;
        self.inner
            .store
            .with_conn(|c| sessions::delete(c, session_id))?;
        self.inner.windows.forget(session_id);
        Ok(())
    }

    /// The session as a window shows it, with the pending card if any.
    pub fn transcript(&self, session_id: &str) -> Result<Transcript, AgentError> {
        self.inner.session(session_id)?;
        let running = self.is_running(session_id);
        if !running {
            expire_card_if_due(&self.inner, session_id)?;
            expire_request_if_due(&self.inner, session_id)?;
        }
        transcript::build(&self.inner, session_id, running)
    }

    /// The settings with their secret values: for the core and tests,
    /// never for a page (that gets [`Agent::settings_view`]).
    pub fn settings(&self) -> Settings {
        self.inner.settings()
    }

    /// The settings as a page may see them: no secret values.
    pub fn settings_view(&self) -> SettingsView {
        SettingsView::of(&self.inner.settings())
    }

    /// Saves the settings as a page edited them: each secret kept, set or
    /// cleared as the edit says. Answers with the new view.
    pub async fn edit_settings(&self, edit: SettingsEdit) -> Result<SettingsView, AgentError> {
        let settings = edit.apply(&self.inner.settings())?;
        self.save_settings(settings).await?;
        Ok(self.settings_view())
    }

    /// Validates, stores and applies the settings: the next run uses the
    /// new model and servers. Secret values go to the secret store, the
    /// rest to the database.
    pub async fn save_settings(&self, settings: Settings) -> Result<(), AgentError> {
        settings.validate(&self.inner.builtin_names())?;
        self.check_auto_approvals(&settings).await?;
        {
            let (store, secrets) = (self.inner.store.clone(), self.inner.secrets.clone());
            let (old, new, now) = (self.inner.settings(), settings.clone(), self.inner.now());
            off_thread(SECRETS_TIMEOUT, move || {
                keeper::save(&store, &*secrets, &old, &new, now)
            })
            .await?;
        }
        // Their Debug hides keys, header values and server env values.
        tracing::debug!(model = ?settings.model, servers = ?settings.mcp_servers, "settings saved");
        let model = self.inner.build_model(&settings);
        let entries = self.inner.server_entries(&settings);
        {
            let mut live = self.inner.live();
            live.settings = settings;
            live.model = model;
        }
        self.inner.tools.configure(entries).await;
        Ok(())
    }

    /// Refuses an `auto_approve` setting for a tool the policy would never
    /// honour it for, judged on the tools the servers list now (a tool not
    /// listed is left to the policy, which checks again at every call).
    async fn check_auto_approvals(&self, settings: &Settings) -> Result<(), AgentError> {
        let wanted: Vec<&String> = settings
            .tool_overrides
            .iter()
            .filter(|(_, o)| **o == ToolOverride::AutoApprove)
            .map(|(name, _)| name)
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let listing = self.inner.tools.list_tools().await;
        for name in wanted {
            let Some(tool) = listing.tools.iter().find(|t| &t.qualified_name == name) else {
                continue;
            };
            if let Some(reason) = ToolFacts::of(tool, false).auto_approve_refusal() {
                return Err(SettingsError::AutoApproveNotAllowed {
                    tool: name.clone(),
                    reason,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Newest first.
    /// The newest `limit` decisions, each with what became of its call.
    pub fn audit_log(&self, limit: u32) -> Result<Vec<AuditEntry>, AgentError> {
        Ok(self.inner.store.with_conn(|c| {
            let mut entries = audit::list(c, limit)?;
            for entry in &mut entries {
                if entry.call_id.is_empty() {
                    continue;
                }
                entry.call =
                    calls::find_call(c, &entry.call_id)?.map(|call| Box::new(call_view(&call)));
            }
            Ok::<_, StoreError>(entries)
        })?)
    }

    /// The checkout mandates the shopper signed, newest first, each
    /// verified again offline (what the audit view shows them).
    pub fn mandates(&self) -> Result<Vec<KeptMandate>, AgentError> {
        let records = self.inner.store.with_conn(kept_mandates::all)?;
        Ok(records.iter().map(KeptMandate::of).collect())
    }

    /// What this start did about each damaged database (kept aside, and
    /// the copy put in its place, if there was one), for the user to be
    /// told; empty when none was damaged.
    pub fn databases_restored(&self) -> Vec<DatabaseRestored> {
        self.inner.restored.clone()
    }

    /// Stops every run and waits for their tasks to end. Stored state stays
    /// as it is, exactly as after a crash.
    pub async fn shutdown(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut live = self.inner.live();
            live.runs
                .drain()
                .filter_map(|(_, run)| {
                    run.cancel.cancel();
                    run.task
                })
                .collect()
        };
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

/// How long reading or writing every secret of the settings may take.
const SECRETS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// The secret store to use, and the database's, to empty into it when it
/// is the keyring. The keyring is used only if a probe (write, read back,
/// delete) answers within [`KEYRING_TIMEOUT`].
async fn open_secrets(
    store: &Arc<Store>,
    backend: SecretsBackend,
    now: i64,
) -> Result<(Arc<dyn SecretStore>, Option<DatabaseSecrets>), AgentError> {
    let database = || DatabaseSecrets::new(store.clone());
    let chosen: (Arc<dyn SecretStore>, Option<DatabaseSecrets>) = match backend {
        SecretsBackend::Database => (Arc::new(database()), None),
        SecretsBackend::Custom(secrets) => (secrets, Some(database())),
        SecretsBackend::KeyringOrDatabase { service } => {
            let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS");
            if let Some(why) = secrets::keyring_unreachable_because(bus.as_deref()) {
                tracing::warn!(
                    why,
                    "no OS keyring in this session; secrets are kept in the database"
                );
                return Ok((Arc::new(database()), None));
            }
            let vault = store.with_conn(|c| kv::vault_id(c, now))?;
            let keyring: Arc<dyn SecretStore> = Arc::new(KeyringSecrets::new(service, vault));
            match secrets::probe(keyring.clone(), KEYRING_TIMEOUT).await {
                Ok(()) => (keyring, Some(database())),
                Err(error) => {
                    tracing::warn!(%error, "the OS keyring did not answer; secrets are kept in the database");
                    (Arc::new(database()), None)
                }
            }
        }
    };
    tracing::info!(store = chosen.0.kind(), "settings secrets store");
    Ok(chosen)
}
