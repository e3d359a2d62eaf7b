//! What the stories share: a scripted model server, the real shop over
//! stdio, an in-process test server, and a harness that opens an agent on
//! a temporary directory and follows its events.

pub mod asking;
pub mod faults;
pub mod inputs;
pub mod legacy;
pub mod model;
pub mod notes;
pub mod online_shop;
pub mod shop;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ragent::clock::Clock;
use ragent::llm::openai::ClientOptions;
use ragent::mcp::{ServerEntry, ToolSource};
use ragent::protocol::{
    AgentEvent, ConfirmationCard, ErrorInfo, EventEnvelope, StopReason, ToolCallView,
};
use ragent::settings::{ModelSettings, Settings};
use ragent::{Agent, AgentConfig};
use tempfile::TempDir;
use tokio::sync::broadcast;

pub use model::*;
pub use online_shop::OnlineShop;
pub use shop::*;

/// Longest a test waits for an event before it fails (a guard, not a pause).
const EVENT_GUARD: Duration = Duration::from_secs(60);

/// Model client options for tests: quick retries, short patience.
pub fn test_llm_options() -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(5),
        first_byte_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(20),
        max_retries: 2,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(2),
        list_models_timeout: Duration::from_secs(5),
    }
}

/// Wraps the real hub, to inject faults.
pub type WrapTools = Box<dyn FnOnce(Arc<dyn ToolSource>) -> Arc<dyn ToolSource> + Send>;

/// How to open the agent of a test.
pub struct Setup {
    pub shop: bool,
    pub servers: Vec<ServerEntry>,
    pub settings: Settings,
    pub clock: Option<Arc<dyn Clock>>,
    pub wrap_tools: Option<WrapTools>,
    /// The built-in server the setting `shop` may move online.
    pub online_shop: Option<String>,
}

impl Setup {
    pub fn shop() -> Setup {
        Setup {
            shop: true,
            ..Setup::bare()
        }
    }

    pub fn bare() -> Setup {
        Setup {
            shop: false,
            servers: Vec::new(),
            settings: Settings::default(),
            clock: None,
            wrap_tools: None,
            online_shop: None,
        }
    }
}

/// One agent on a temporary directory, with a scripted model.
pub struct Harness {
    pub dir: TempDir,
    /// The app's data directory: `dir` unless the test put it elsewhere.
    pub data: PathBuf,
    pub model: ScriptedModel,
    pub agent: Agent,
    pub events: Events,
    pub session: String,
}

impl Harness {
    pub async fn start(setup: Setup) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_path_buf();
        Harness::start_in(setup, dir, data).await
    }

    /// An agent whose data directory is `data` (a small disk, say).
    pub async fn start_in(setup: Setup, dir: TempDir, data: PathBuf) -> Harness {
        let model = ScriptedModel::start().unwrap();
        let agent = open_agent(&data, &model, setup).await;
        let events = Events(agent.subscribe());
        let session = agent.create_session(None).unwrap().id;
        Harness {
            dir,
            data,
            model,
            agent,
            events,
            session,
        }
    }

    pub fn shop_dir(&self) -> PathBuf {
        self.data.join("shop")
    }

    pub fn shop_db(&self) -> ShopDb {
        ShopDb::open(&self.shop_dir())
    }

    /// Stops this agent as a crash would (stored state stays as it is)
    /// and opens a new one on the same database and model.
    pub async fn restart(&mut self, setup: Setup) {
        self.agent.shutdown().await;
        let agent = open_agent(&self.data, &self.model, setup).await;
        self.events = Events(agent.subscribe());
        self.agent = agent;
    }

    /// The model proposes adding `quantity` iPhones to the cart (call id
    /// `c1`) in answer to `text`; returns the card that stops the run.
    pub async fn card_for_iphones(&mut self, text: &str, quantity: u32) -> ConfirmationCard {
        self.model.push_turn(calls_turn(
            &format!("将把 {quantity} 台 iPhone 17 256GB 黑色加入购物车。"),
            &[(
                "c1",
                "shop__update_cart_item",
                serde_json::json!({"skuCode": IPHONE, "action": "add", "quantity": quantity}),
            )],
        ));
        self.say(text).await.card().clone()
    }

    /// The session's transcript as a reopened window gets it.
    pub fn transcript_items(&self) -> Vec<ragent::protocol::TranscriptItem> {
        self.agent.transcript(&self.session).unwrap().items
    }

    /// The session's user and assistant messages as a reopened window
    /// gets them, in order.
    pub fn conversation(&self) -> Vec<(&'static str, String)> {
        self.transcript_items()
            .into_iter()
            .filter_map(|item| match item {
                ragent::protocol::TranscriptItem::User { text, .. } => Some(("user", text)),
                ragent::protocol::TranscriptItem::Assistant { text, .. } => {
                    Some(("assistant", text))
                }
                _ => None,
            })
            .collect()
    }

    /// The session's tool calls as a reopened window gets them, in order.
    pub fn transcript_calls(&self) -> Vec<ToolCallView> {
        self.transcript_items()
            .into_iter()
            .filter_map(|item| match item {
                ragent::protocol::TranscriptItem::ToolCall { call } => Some(*call),
                _ => None,
            })
            .collect()
    }

    /// Sends a message and follows the run to its stop.
    pub async fn say(&mut self, text: &str) -> Run {
        self.agent.send_message(&self.session, text).unwrap();
        self.events.until_stop().await
    }

    /// Approves every asking call of `card` and follows the run that
    /// resumes to its stop.
    pub async fn approve(&mut self, card: &ConfirmationCard) -> Run {
        self.agent
            .respond(&self.session, &card.reply_id, approve_all(card))
            .await
            .unwrap();
        self.events.until_stop().await
    }
}

pub async fn open_agent(dir: &Path, model: &ScriptedModel, setup: Setup) -> Agent {
    let mut config = AgentConfig::new(dir.join("agent.db"));
    let mut settings = setup.settings;
    settings.model = ModelSettings {
        base_url: model.base_url(),
        model: "scripted".into(),
        api_key: Some("test-key".into()),
        ..ModelSettings::default()
    };
    config.initial_settings = Some(settings);
    config.llm_options = test_llm_options();
    if setup.shop {
        config.builtin_servers.push(shop_entry(&dir.join("shop")));
        // As the app does: the local shop's database is checked at start.
        config.shop_database = Some(dir.join("shop").join("shop.db"));
    }
    config.builtin_servers.extend(setup.servers);
    config.online_shop = setup.online_shop;
    if let Some(clock) = setup.clock {
        config.clock = clock;
    }
    if let Some(wrap) = setup.wrap_tools {
        let hub: Arc<dyn ToolSource> = Arc::new(ragent::mcp::McpHub::default());
        config.tools = Some(wrap(hub));
    }
    Agent::open(config).await.unwrap()
}

/// The events of an agent, awaited one by one.
pub struct Events(pub broadcast::Receiver<EventEnvelope>);

/// The events of one run and why it stopped.
#[derive(Debug)]
pub struct Run {
    pub events: Vec<AgentEvent>,
    pub reason: StopReason,
}

impl Events {
    pub async fn next(&mut self) -> EventEnvelope {
        tokio::time::timeout(EVENT_GUARD, self.0.recv())
            .await
            .expect("an event within the guard time")
            .expect("the event stream is open")
    }

    /// Events up to and including the next `run_stopped`.
    pub async fn until_stop(&mut self) -> Run {
        let mut events = Vec::new();
        loop {
            let envelope = self.next().await;
            if let AgentEvent::RunStopped { reason } = envelope.event {
                return Run { events, reason };
            }
            events.push(envelope.event);
        }
    }

    /// Waits for an event that `pick` accepts.
    pub async fn wait_for<T>(&mut self, mut pick: impl FnMut(&AgentEvent) -> Option<T>) -> T {
        loop {
            let envelope = self.next().await;
            if let Some(found) = pick(&envelope.event) {
                return found;
            }
        }
    }
}

impl Run {
    /// The card this run stopped for.
    pub fn card(&self) -> &ConfirmationCard {
        self.events
            .iter()
            .find_map(|e| match e {
                AgentEvent::ConfirmationRequested { card } => Some(card),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no card in {:#?}", self.events))
    }

    pub fn asked(&self) -> bool {
        matches!(self.reason, StopReason::AwaitingConfirmation { .. })
    }

    /// Tools sent to servers in this run, in order.
    pub fn started(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCallStarted { call } => Some(call.tool.clone()),
                _ => None,
            })
            .collect()
    }

    /// Calls that reached a final state in this run, in order.
    pub fn finished(&self) -> Vec<ToolCallView> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCallFinished { call } => Some(call.clone()),
                _ => None,
            })
            .collect()
    }

    /// The assistant's text of this run, from its deltas.
    pub fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn errors(&self) -> Vec<String> {
        self.error_infos().into_iter().map(|e| e.message).collect()
    }

    /// The run's error events, whole.
    pub fn error_infos(&self) -> Vec<ErrorInfo> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Error { error } => Some(error.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Approves every call of the card that asks.
pub fn approve_all(card: &ConfirmationCard) -> Vec<ragent::protocol::CallDecision> {
    card.calls
        .iter()
        .filter(|c| c.status == ragent::toolcall::CallStatus::Asking)
        .map(|c| ragent::protocol::CallDecision {
            call_id: c.call_id.clone(),
            decision: ragent::protocol::Decision::Approve,
        })
        .collect()
}
