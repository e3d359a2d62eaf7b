//! Where a run of the app keeps its data and writes its logs.
//!
//! By default both are the OS's directories for the app (Tauri's
//! `app_data_dir()` and `app_log_dir()`). With `--data-dir DIR` everything
//! lives under DIR, the logs in `DIR/logs`, so tests and parallel runs on
//! different directories never share a file.

use std::path::{Path, PathBuf};

use tauri::Runtime;
use tauri::path::PathResolver;

use crate::launch_options::LaunchOptions;

/// The log directory inside a data directory given on the command line.
pub const LOGS_IN_DATA_DIR: &str = "logs";

/// The directories of this run, resolved once before the app opens anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppDirs {
    pub data: PathBuf,
    pub logs: PathBuf,
}

impl AppDirs {
    /// Everything under one directory, as with `--data-dir`.
    pub fn under(data_dir: &Path) -> AppDirs {
        AppDirs {
            data: data_dir.to_path_buf(),
            logs: data_dir.join(LOGS_IN_DATA_DIR),
        }
    }

    /// The data directory of this run without a window: the one given on
    /// the command line, else the OS's data directory for the app with
    /// `identifier`, as Tauri's `app_data_dir()` makes it.
    pub fn data_without_window(options: &LaunchOptions, identifier: &str) -> Option<PathBuf> {
        match &options.data_dir {
            Some(dir) => Some(dir.clone()),
            None => dirs::data_dir().map(|dir| dir.join(identifier)),
        }
    }

    pub fn resolve<R: Runtime>(
        options: &LaunchOptions,
        paths: &PathResolver<R>,
    ) -> tauri::Result<AppDirs> {
        match &options.data_dir {
            Some(dir) => Ok(AppDirs::under(dir)),
            None => Ok(AppDirs {
                data: paths.app_data_dir()?,
                logs: paths.app_log_dir()?,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_dir_from_the_command_line_keeps_its_logs_inside_it() {
        let dirs = AppDirs::under(Path::new("/tmp/run-1"));
        assert_eq!(dirs.data, PathBuf::from("/tmp/run-1"));
        assert_eq!(dirs.logs, PathBuf::from("/tmp/run-1/logs"));
    }

    #[test]
    fn the_default_dirs_are_the_os_app_dirs() {
        let app = tauri::test::mock_app();
        let paths = tauri::Manager::path(&app);
        let dirs = AppDirs::resolve(&LaunchOptions::default(), paths).unwrap();
        assert_eq!(dirs.data, paths.app_data_dir().unwrap());
        assert_eq!(dirs.logs, paths.app_log_dir().unwrap());
    }

    #[test]
    fn without_a_window_the_data_dir_is_the_one_tauri_would_resolve() {
        let app = tauri::test::mock_app();
        let identifier = app.config().identifier.clone();
        let paths = tauri::Manager::path(&app);
        assert_eq!(
            AppDirs::data_without_window(&LaunchOptions::default(), &identifier),
            Some(paths.app_data_dir().unwrap())
        );
        let given = LaunchOptions {
            data_dir: Some(PathBuf::from("/tmp/run-2")),
            ..LaunchOptions::default()
        };
        assert_eq!(
            AppDirs::data_without_window(&given, &identifier),
            Some(PathBuf::from("/tmp/run-2"))
        );
    }
}
