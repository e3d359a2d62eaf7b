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

/// Several tool calls in one turn, which the app shows on one card.
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

    /// The chat requests received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.model.requests()
    }
}
