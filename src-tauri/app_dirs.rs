//! Where a run of the app keeps its data and writes its logs.
//!
//! By default both are the OS's directories for the app (Tauri's
//! `app_data_dir()` and `app_log_dir()`). With `--data-dir DIR` everything
//! lives under DIR, the logs in `DIR/logs`, so tests and parallel runs on
//! different directories never share a file.

use std::path::{Path, PathBuf};

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

    /// The directories of this run: the one given on the command line, else
    /// the OS's directories for the app with `identifier`, as Tauri's
    /// `app_data_dir()` and `app_log_dir()` make them. Resolved without
    /// Tauri's app, so that the core can be opened while Tauri starts.
    /// `None` when the OS names no data directory.
    pub fn of_run(options: &LaunchOptions, identifier: &str) -> Option<AppDirs> {
        match &options.data_dir {
            Some(dir) => Some(AppDirs::under(dir)),
            None => Some(AppDirs {
                data: dirs::data_dir()?.join(identifier),
                // Tauri's own layout: `logs` under the local data directory.
                logs: dirs::data_local_dir()?.join(identifier).join("logs"),
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
    fn the_default_dirs_are_the_ones_tauri_would_resolve() {
        let app = tauri::test::mock_app();
        let identifier = app.config().identifier.clone();
        let paths = tauri::Manager::path(&app);
        let dirs = AppDirs::of_run(&LaunchOptions::default(), &identifier).unwrap();
        assert_eq!(dirs.data, paths.app_data_dir().unwrap());
        assert_eq!(dirs.logs, paths.app_log_dir().unwrap());
    }

    #[test]
    fn a_data_dir_given_on_the_command_line_is_used_whatever_the_app() {
        let given = LaunchOptions {
            data_dir: Some(PathBuf::from("/tmp/run-2")),
            ..LaunchOptions::default()
        };
        assert_eq!(
            AppDirs::of_run(&given, "app.example.any"),
            Some(AppDirs::under(Path::new("/tmp/run-2")))
        );
    }
}
