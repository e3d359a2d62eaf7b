//! Part 5's data directory for the app: fresh for its first launch, then set
//! up as a returning shopper's, whose first-run page saved a model. The
//! model is the bench's scripted one, so the check the app makes at every
//! start (`GET /models`) is answered at once, as a reachable provider's is,
//! and each launch is known to have made it.

use std::path::{Path, PathBuf};

use test_support::ScriptedModel;

use crate::BenchError;

/// The core's database in the app's data directory (the app's
/// `CORE_DB_FILE`). Were it another file, the app would start without a
/// model and [`AppDataDir::expect_checks`] would say so.
const CORE_DB_FILE: &str = "assistant.db";

/// The app's data directory and the model it is set up with.
pub struct AppDataDir {
    dir: tempfile::TempDir,
    model: ScriptedModel,
}

impl AppDataDir {
    /// A fresh data directory (the app sets it up at its first launch), and
    /// the model it will be given.
    pub fn fresh() -> Result<AppDataDir, BenchError> {
        let dir = tempfile::tempdir().map_err(|e| BenchError::io(Path::new("temp dir"), e))?;
        let model = ScriptedModel::start().map_err(|e| BenchError::Setup(e.to_string()))?;
        Ok(AppDataDir { dir, model })
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Saves the model in the core's settings, as the first-run page does,
    /// while the app is not running.
    pub fn configure_model(&self) -> Result<(), BenchError> {
        test_support::settings::edit_settings(&self.dir.path().join(CORE_DB_FILE), |settings| {
            settings.model.base_url = self.model.base_url();
            settings.model.model = "scripted".to_owned();
        })
        .map_err(|e| BenchError::Setup(format!("saving the app's model: {e}")))
    }

    /// Fails unless the app has checked its model `launches` times: each
    /// launch since [`Self::configure_model`] started as a returning
    /// shopper's, not on the first-run page.
    pub fn expect_checks(&self, launches: usize) -> Result<(), BenchError> {
        let checks = self.model.listing_headers().len();
        if checks == launches {
            return Ok(());
        }
        Err(BenchError::Run(format!(
            "the app checked its model {checks} times in {launches} launches with a model set up"
        )))
    }
}
