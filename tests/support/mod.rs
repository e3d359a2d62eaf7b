//! What the end-to-end tests share: the driver, a WebDriver session on the
//! built app, and a data directory of its own for every app run.

#![allow(dead_code)] // each test binary uses a different part of this

pub mod driver;
pub mod webdriver;

use std::path::{Path, PathBuf};

pub use driver::TauriDriver;
pub use webdriver::Session;

/// The app binary cargo built for these tests.
pub fn app_binary() -> &'static str {
    env!("CARGO_BIN_EXE_bitselect-assistant")
}

/// The app running in a window of its own, on its own data directory.
pub struct RunningApp {
    pub session: Session,
    pub data_dir: PathBuf,
    // Dropped after the session: the app must close before the driver stops.
    _driver: TauriDriver,
}

impl RunningApp {
    pub fn launch(data_dir: &Path) -> Result<RunningApp, Box<dyn std::error::Error>> {
        let driver = TauriDriver::start()?;
        let args = vec!["--data-dir".to_owned(), data_dir.display().to_string()];
        let session = Session::start(driver.url(), app_binary(), &args)?;
        Ok(RunningApp {
            session,
            data_dir: data_dir.to_path_buf(),
            _driver: driver,
        })
    }

    /// Writes a screenshot under tests/artifacts/ and returns its path.
    pub fn save_screenshot(&self, name: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/artifacts");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, self.session.screenshot()?)?;
        Ok(path)
    }
}
