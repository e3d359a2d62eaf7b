//! An agent as the app opens it, on a temporary directory, with the real
//! shop over stdio, a fake model, and the hub timed; plus waiting for the
//! events of a run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ragent::llm::openai::{ClientOptions, OpenAiClient};
use ragent::mcp::{McpHub, ServerEntry};
use ragent::protocol::{AgentEvent, ConfirmationCard, EventEnvelope, StopReason};
use ragent::runtime::CoreRuntime;
use ragent::settings::{ModelSettings, Settings};
use ragent::{Agent, AgentConfig};
use tempfile::TempDir;
use tokio::sync::broadcast;

use crate::BenchError;
use crate::timed_tools::TimedTools;
use test_support::ScriptedModel;

/// Longest a run may take before the bench gives up (a guard, not a pause).
const RUN_GUARD: Duration = Duration::from_secs(120);

pub struct BenchAgent {
    /// Where the agent keeps its data.
    pub data: PathBuf,
    /// The temporary directory `data` is, when the agent made it.
    _dir: Option<TempDir>,
    pub agent: Agent,
    pub tools: Arc<TimedTools>,
    pub events: broadcast::Receiver<EventEnvelope>,
    /// The agent's own thread, as the app gives it one; the fake model
    /// stays on the bench's runtime, as a remote model would be elsewhere.
    core: CoreRuntime,
}

impl BenchAgent {
    /// Opens an agent whose model is `model` and whose only server is
    /// `shop(dir)`, with room for `max_turns` model turns per run.
    pub async fn open(
        model: &ScriptedModel,
        max_turns: u32,
        shop: impl FnOnce(&Path) -> Result<ServerEntry, BenchError>,
    ) -> Result<BenchAgent, BenchError> {
        let dir = tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
        let mut agent = BenchAgent::open_at(dir.path(), model, max_turns, shop).await?;
        agent._dir = Some(dir);
        Ok(agent)
    }

    /// [`BenchAgent::open`] on the data directory `data`, as an earlier
    /// opening left it (the app started again).
    pub async fn open_at(
        data: &Path,
        model: &ScriptedModel,
        max_turns: u32,
        shop: impl FnOnce(&Path) -> Result<ServerEntry, BenchError>,
    ) -> Result<BenchAgent, BenchError> {
        let mut config = AgentConfig::new(db_path(data));
        let model_settings = ModelSettings {
            base_url: model.base_url(),
            model: "fake".into(),
            api_key: Some("bench".into()),
            ..ModelSettings::default()
        };
        config.llm_options = ClientOptions {
            max_retries: 0,
            ..ClientOptions::default()
        };
        // The real client, to this model: an earlier opening of `data`
        // saved the address of a model that is gone.
        let client = OpenAiClient::new(&model_settings, config.llm_options.clone())
            .map_err(|e| BenchError::Setup(format!("the model client: {e}")))?;
        config.model = Some(Arc::new(client));
        config.initial_settings = Some(Settings {
            model: model_settings,
            max_turns_per_run: max_turns,
            ..Settings::default()
        });
        config.builtin_servers.push(shop(&data.join("shop"))?);
        let tools = Arc::new(TimedTools::new(Arc::new(McpHub::default())));
        config.tools = Some(tools.clone());
        let core = CoreRuntime::start()
            .map_err(|e| BenchError::Setup(format!("the agent's thread: {e}")))?;
        let agent = core
            .handle()
            .spawn(Agent::open(config))
            .await
            .map_err(|e| BenchError::Setup(format!("opening the agent: {e}")))??;
        let events = agent.subscribe();
        Ok(BenchAgent {
            data: data.to_path_buf(),
            _dir: None,
            agent,
            tools,
            events,
            core,
        })
    }

    pub fn db_path(&self) -> PathBuf {
        db_path(&self.data)
    }

    /// Follows events until the session's run stops; returns why, and the
    /// card if one was requested.
    pub async fn until_stop(
        &mut self,
        session_id: &str,
    ) -> Result<(StopReason, Option<ConfirmationCard>), BenchError> {
        let mut card = None;
        loop {
            let envelope = tokio::time::timeout(RUN_GUARD, self.events.recv())
                .await
                .map_err(|_| BenchError::Run("no event within the guard time".into()))?
                .map_err(|e| BenchError::Run(format!("event stream: {e}")))?;
            if envelope.session_id != session_id {
                continue;
            }
            match envelope.event {
                AgentEvent::ConfirmationRequested { card: c } => card = Some(c),
                AgentEvent::Error { error } => {
                    return Err(BenchError::Run(format!(
                        "the run failed: {}",
                        error.message
                    )));
                }
                AgentEvent::ToolCallFinished { call } if call.is_error => {
                    return Err(BenchError::Run(format!(
                        "call {} failed: {}",
                        call.tool,
                        call.output.unwrap_or_default()
                    )));
                }
                AgentEvent::RunStopped { reason } => return Ok((reason, card)),
                _ => {}
            }
        }
    }

    /// Closes the agent as the app closes, its shop with it.
    pub async fn shutdown(self) {
        self.agent.shutdown().await;
        drop(self.core);
    }
}

fn db_path(dir: &Path) -> PathBuf {
    dir.join("agent.db")
}
