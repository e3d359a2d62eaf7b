//! What the page's first screen shows, handed to the window as it is made.
//! With it the page draws its whole first screen before it asks the core
//! anything; without it, the first frame was an empty screen and the
//! answers came a frame or two later (docs/benchmarks.md, part 5).

use ragent::agent::DatabaseRestored;
use ragent::protocol::{ModelStatus, SessionInfo, Transcript};
use ragent::settings_view::SettingsView;
use ragent::{Agent, AgentError};
use serde::Serialize;

/// The global the page reads it from (ui/src/api.ts, `StartState` in
/// ui/src/protocol.ts).
const PAGE_GLOBAL: &str = "__BITSELECT_START__";

/// The longest script handed over with the newest transcript in it. The
/// web view keeps the script's text for the window's life (it runs again
/// on every reload), so a long conversation would be held twice; above
/// this the page opens the session itself, a frame later.
pub const HANDED_SCRIPT_CAP: usize = 256 * 1024;

/// The answers of `get_settings`, `databases_restored`, `list_sessions`
/// and `open_session` of the newest session, as the page would ask them,
/// and `check_model`'s when no model is set up (it asks no one then).
#[derive(Debug, Serialize)]
pub struct StartState {
    pub settings: SettingsView,
    pub restored: Vec<DatabaseRestored>,
    pub sessions: Vec<SessionInfo>,
    /// The most recently updated session, opened; the page uses it only
    /// if it is the one it would open itself.
    pub latest: Option<Transcript>,
    /// The model check's answer on a first run, so that the first-run page
    /// is the first screen; `None` when a model is set up, and the page
    /// checks it once interactive (that may wait on the network).
    pub model: Option<ModelStatus>,
}

impl StartState {
    pub fn read(agent: &Agent) -> Result<StartState, AgentError> {
        let sessions = agent.list_sessions()?;
        // The first of the most recently updated, as the page's stable sort
        // of the list picks it.
        let latest = sessions
            .iter()
            .rev()
            .max_by_key(|session| session.updated_at)
            .map(|session| agent.transcript(&session.id))
            .transpose()?;
        Ok(StartState {
            settings: agent.settings_view(),
            restored: agent.databases_restored(),
            sessions,
            latest,
            model: agent.model_not_set_up(),
        })
    }

    /// A script run before the page's own on every load of the window:
    /// JSON is a JavaScript expression, so it is assigned as written.
    pub fn script(&self) -> Result<String, serde_json::Error> {
        self.script_within(HANDED_SCRIPT_CAP)
    }

    /// The script, without the newest transcript when with it the script
    /// would be longer than `cap` bytes.
    pub fn script_within(&self, cap: usize) -> Result<String, serde_json::Error> {
        let assign = |json: String| format!("window.{PAGE_GLOBAL} = {json};");
        let whole = assign(serde_json::to_string(self)?);
        if whole.len() <= cap || self.latest.is_none() {
            return Ok(whole);
        }
        let without_latest = StartState {
            settings: self.settings.clone(),
            restored: self.restored.clone(),
            sessions: self.sessions.clone(),
            latest: None,
            model: self.model.clone(),
        };
        Ok(assign(serde_json::to_string(&without_latest)?))
    }
}
