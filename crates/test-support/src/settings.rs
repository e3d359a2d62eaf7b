//! A data directory's settings changed before the app starts, through the
//! core's own settings store, as the app's pages would save them.

use std::path::Path;

use ragent::settings::Settings;
use ragent::{Agent, AgentConfig, AgentError};

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("no runtime to open the core's store: {0}")]
    Runtime(#[source] std::io::Error),
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// Opens the core's database `core_db`, applies `edit` to its settings and
/// saves them. The app must not be running on it.
pub fn edit_settings(
    core_db: &Path,
    edit: impl FnOnce(&mut Settings),
) -> Result<(), SettingsError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SettingsError::Runtime)?;
    runtime.block_on(async {
        let agent = Agent::open(AgentConfig::new(core_db.to_path_buf())).await?;
        let mut settings = agent.settings();
        edit(&mut settings);
        let saved = agent.save_settings(settings).await;
        agent.shutdown().await;
        Ok(saved?)
    })
}
