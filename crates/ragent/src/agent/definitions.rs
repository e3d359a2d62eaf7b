//! A tool whose definition changed since it was pinned: what changed, and
//! the user accepting the new definition. Accepting trusts a definition,
//! not a call: a call already on a card still waits for its own decision.

use serde_json::Value;

use crate::agent::Agent;
use crate::error::AgentError;
use crate::mcp::ToolInfo;
use crate::mcp::pin;
use crate::protocol::DefinitionChange;
use crate::store::{StoreError, audit, kv};

impl Agent {
    /// How the tool's listed definition differs from its pin, or `None`
    /// when it does not (or was never pinned).
    pub async fn tool_definition_change(
        &self,
        qualified_name: &str,
    ) -> Result<Option<DefinitionChange>, AgentError> {
        let tool = self.listed_tool(qualified_name).await?;
        self.inner.store.with_conn(|c| change_of(c, &tool))
    }

    /// Pins the tool's current definition, which must be the one the user
    /// was shown (`new_hash`), and audits it with the hashes before and
    /// after. From then on its calls are judged by the policy as any other.
    pub async fn accept_tool_definition(
        &self,
        qualified_name: &str,
        new_hash: &str,
    ) -> Result<(), AgentError> {
        let tool = self.listed_tool(qualified_name).await?;
        if tool.definition_hash != new_hash {
            return Err(AgentError::DefinitionChangedAgain {
                qualified_name: qualified_name.to_string(),
            });
        }
        let now = self.inner.now();
        self.inner.store.with_tx(|tx| {
            let old_hash = kv::pin(tx, &tool.server, &tool.name)?;
            if old_hash.as_deref() == Some(new_hash) {
                return Ok::<_, AgentError>(());
            }
            pin::accept(tx, &tool, now)?;
            audit::record_definition_accepted(
                tx,
                &tool.server,
                &tool.name,
                old_hash.as_deref().unwrap_or_default(),
                new_hash,
                now,
            )?;
            Ok(())
        })
    }

    async fn listed_tool(&self, qualified_name: &str) -> Result<ToolInfo, AgentError> {
        self.inner
            .tools
            .list_tools()
            .await
            .tools
            .into_iter()
            .find(|t| t.qualified_name == qualified_name)
            .ok_or_else(|| AgentError::UnknownTool(qualified_name.to_string()))
    }
}

fn change_of(
    conn: &rusqlite::Connection,
    tool: &ToolInfo,
) -> Result<Option<DefinitionChange>, AgentError> {
    let Some((old_hash, old_text)) = kv::pinned_definition(conn, &tool.server, &tool.name)? else {
        return Ok(None);
    };
    if old_hash == tool.definition_hash {
        return Ok(None);
    }
    let old: Value = serde_json::from_str(&old_text).map_err(StoreError::from)?;
    let (old, new) = (
        pin::definition_view(&old),
        pin::definition_view(&tool.definition),
    );
    Ok(Some(DefinitionChange {
        qualified_name: tool.qualified_name.clone(),
        old_hash,
        new_hash: tool.definition_hash.clone(),
        changed: pin::changed_fields(&old, &new),
        old,
        new,
    }))
}
