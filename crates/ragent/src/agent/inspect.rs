//! What the settings screens ask of the core: whether the model answers,
//! which models the provider being edited lists, and how the policy judges
//! each tool under the user's settings.

use crate::AgentError;
use crate::agent::Agent;
use crate::agent::judge::verdict;
use crate::agent::tools::KnownTool;
use crate::llm::LlmError;
use crate::llm::models::{self, ModelInfo};
use crate::llm::openai::OpenAiClient;
use crate::policy::{Trust, Verdict};
use crate::protocol::{ModelState, ModelStatus, PolicyVerdict, ToolPolicyView};
use crate::settings_view::ModelEdit;
use crate::store::kv;

impl Agent {
    /// Whether the configured model endpoint answers with these settings.
    pub async fn check_model(&self) -> ModelStatus {
        if self.inner.model_override.is_some() {
            return status(ModelState::Ok, None);
        }
        if let Some(missing) = self.model_not_set_up() {
            return missing;
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

    /// The model check's answer when it needs no one asked: no model is
    /// set up (the first run). `None` when one is, or a test's model
    /// stands in; only [`Agent::check_model`] then says whether it answers.
    pub fn model_not_set_up(&self) -> Option<ModelStatus> {
        if self.inner.model_override.is_some()
            || OpenAiClient::is_set_up(&self.inner.settings().model)
        {
            return None;
        }
        Some(status(
            ModelState::NotConfigured,
            Some(LlmError::NotConfigured.to_string()),
        ))
    }

    /// The models the provider lists, asked with the model settings being
    /// edited (a kept key or header is the stored one), before anything is
    /// saved. Nothing is stored.
    pub async fn list_models(&self, edit: ModelEdit) -> Result<Vec<ModelInfo>, AgentError> {
        let model = edit.apply(&self.inner.settings().model)?;
        model.validate()?;
        let timeout = self.inner.llm_options.list_models_timeout;
        Ok(models::list_models(&model, timeout).await?)
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
                let facts = known.facts;
                let info = known.info;
                ToolPolicyView {
                    user_override: settings.tool_overrides.get(&info.qualified_name).copied(),
                    auto_approve_allowed: facts.auto_approve_possible(),
                    moves_money: facts.moves_money,
                    group: facts.group(info.changes_cart),
                    qualified_name: info.qualified_name,
                    server: info.server,
                    tool: info.name,
                    title: info.title,
                    read_only: facts.declares_read_only(),
                    destructive: facts.declares_destructive(),
                    trusted: facts.trust == Trust::Trusted,
                    definition_changed: facts.definition_changed,
                    verdict,
                }
            })
            .collect()
    }
}

fn status(state: ModelState, message: Option<String>) -> ModelStatus {
    ModelStatus { state, message }
}
