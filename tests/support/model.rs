//! The scripted model the end-to-end tests give the app: the workspace's
//! one (`test-support`), loaded with every turn before the app starts.

use serde_json::Value;
use test_support::turns::{calls_turn, text_turn};

/// One answer of the model, as the chunks it streams.
pub type Turn = Vec<Value>;

/// Plain assistant text (streamed in two pieces, so the page really
/// streams).
pub fn text(content: &str) -> Turn {
    text_turn(content)
}

/// One tool call: (call id, `server__tool`, arguments).
pub fn tool_call(id: &str, name: &str, arguments: Value) -> Turn {
    calls_turn("", &[(id, name, arguments)])
}

/// Several tool calls in one turn, one batch: (call id, `server__tool`, arguments).
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Turn {
    calls_turn("", calls)
}

/// The running model; it stops with the test.
pub struct ScriptedModel {
    model: test_support::ScriptedModel,
    url: String,
}

impl ScriptedModel {
    pub fn start(turns: Vec<Turn>) -> Result<ScriptedModel, test_support::model::ModelError> {
        let model = test_support::ScriptedModel::start()?;
        for turn in turns {
            model.push_turn(turn);
        }
        let url = model.base_url();
        Ok(ScriptedModel { model, url })
    }

    /// The base URL to put in the app's model settings.
    pub fn base_url(&self) -> &str {
        &self.url
    }

    /// Queues a raw reply (a failure status, say) after the turns given.
    pub fn push(&self, reply: test_support::Reply) {
        self.model.push(reply);
    }

    /// Queues one more turn.
    pub fn push_turn(&self, turn: Turn) {
        self.model.push_turn(turn);
    }

    /// From now on a request that finds no turn queued waits up to
    /// `limit` for the test to push one.
    pub fn await_turns(&self, limit: std::time::Duration) {
        self.model.await_turns(limit);
    }

    /// Waits until `count` chat requests have come in; their bodies.
    pub fn wait_for_requests(
        &self,
        count: usize,
        limit: std::time::Duration,
    ) -> Result<Vec<Value>, test_support::model::ModelError> {
        self.model.wait_for_requests(count, limit)
    }

    /// The chat requests received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.model.requests()
    }
}
