//! What the settings screens ask of the core: whether the model answers,
//! and how the policy judges each tool under the user's settings.

use super::Agent;
use super::batch::{KnownTool, verdict};
use crate::llm::LlmError;
use crate::llm::openai::OpenAiClient;
use crate::policy::{Verdict, auto_approve_possible};
use crate::protocol::{ModelState, ModelStatus, PolicyVerdict, ToolPolicyView};
use crate::store::kv;

impl Agent {
    /// Whether the configured model endpoint answers with these settings.
    pub async fn check_model(&self) -> ModelStatus {
        if self.inner.model_override.is_some() {
            return status(ModelState::Ok, None);
        }
        let settings = self.inner.settings();
        let checked = match OpenAiClient::new(&settings.model, self.inner.llm_options.clone()) {
            Ok(client) => client.check_reachable().await,
            Err(error) => Err(error),
        };
        match checked {
            Ok(()) => status(ModelState::Ok, None),
            Err(error @ LlmError::NotConfigured) => {
                status(ModelState::NotConfigured, Some(error.to_string()))
            }
            Err(error) => status(ModelState::Unreachable, Some(error.to_string())),
        }
    }

    /// Every tool of every server, with what a call of it gets now. Listing
    /// pins nothing: a definition is pinned when a call first uses it.
    pub async fn tool_policies(&self) -> Vec<ToolPolicyView> {
        let listing = self.inner.tools.list_tools().await;
        let settings = self.inner.settings();
        listing
            .tools
            .into_iter()
            .map(|info| {
                let pinned = self
                    .inner
                    .store
                    .with_conn(|c| kv::pin(c, &info.server, &info.name))
                    .ok()
                    .flatten();
                let changed = pinned.is_some_and(|hash| hash != info.definition_hash);
                let known = KnownTool::new(info, changed);
                let verdict = match verdict(&known, &settings) {
                    Verdict::Allow(_) => PolicyVerdict::Allow,
                    Verdict::Ask => PolicyVerdict::Ask,
                    Verdict::Deny => PolicyVerdict::Deny,
                };
                let auto_approve_allowed = auto_approve_possible(&known.facts(), known.trust());
                let info = known.info;
                let read_only = info.hints.read_only == Some(true);
                // MCP: a write tool is destructive unless it says otherwise.
                let destructive = !read_only && info.hints.destructive.unwrap_or(true);
                ToolPolicyView {
                    user_override: settings.tool_overrides.get(&info.qualified_name).copied(),
                    auto_approve_allowed,
                    moves_money: info.moves_money,
                    qualified_name: info.qualified_name,
                    server: info.server,
                    tool: info.name,
                    title: info.title,
                    read_only,
                    destructive,
                    trusted: info.trusted,
                    definition_changed: changed,
                    verdict,
                }
            })
            .collect()
    }
}

fn status(state: ModelState, message: Option<String>) -> ModelStatus {
    ModelStatus { state, message }
}
