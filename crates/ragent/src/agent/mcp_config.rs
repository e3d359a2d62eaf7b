//! Bringing MCP servers over from other clients and writing them out
//! (`mcp::import`, `mcp::export`). A preview saves nothing; applying adds
//! every planned server in one settings save, so an import is stored whole
//! or not at all.

use crate::agent::Agent;
use crate::error::AgentError;
use crate::mcp::env_refs::process_env;
use crate::mcp::export::{McpExport, export};
use crate::mcp::import::{Import, ImportPreview, ImportProblem, plan};
use crate::settings_view::SettingsView;

impl Agent {
    /// What importing `text` would add, or why it cannot be imported.
    pub fn preview_mcp_import(&self, text: &str) -> ImportPreview {
        ImportPreview::of(self.plan_import(text))
    }

    /// Adds the servers of `text`, provided they are still the ones the
    /// preview with this `fingerprint` showed (same names, same renames).
    pub async fn apply_mcp_import(
        &self,
        text: &str,
        fingerprint: &str,
    ) -> Result<SettingsView, AgentError> {
        let import = self.plan_import(text).map_err(AgentError::ImportRefused)?;
        if import.plan.fingerprint != fingerprint {
            return Err(AgentError::ImportChanged);
        }
        let mut settings = self.inner.settings();
        settings.mcp_servers.extend(import.servers);
        self.save_settings(settings).await?;
        tracing::info!(servers = import.plan.servers.len(), "MCP servers imported");
        Ok(self.settings_view())
    }

    /// The user's servers in the `{"mcpServers": …}` shape, secrets left out.
    pub fn export_mcp_config(&self) -> McpExport {
        export(&self.inner.settings().mcp_servers)
    }

    fn plan_import(&self, text: &str) -> Result<Import, Vec<ImportProblem>> {
        plan(
            text,
            &self.inner.builtin_names(),
            &self.inner.settings().mcp_servers,
            |name| process_env(name).is_some(),
        )
    }
}
