//! The desktop shell: a thin Tauri layer over the agent core.

mod launch_options;

use std::path::PathBuf;

use tauri::{Builder, Manager, Runtime};

pub use launch_options::{LaunchOptions, LaunchOptionsError};

/// Builds the app on any runtime, so tests can run it on the mock runtime.
pub fn run_app<R: Runtime>(builder: Builder<R>, options: LaunchOptions) -> Builder<R> {
    builder.setup(move |app| {
        let data_dir = match &options.data_dir {
            Some(dir) => dir.clone(),
            None => app.path().app_data_dir()?,
        };
        std::fs::create_dir_all(&data_dir)?;
        tracing::info!(data_dir = %data_dir.display(), "app data directory");
        app.manage(DataDir(data_dir));
        Ok(())
    })
}

/// Where this run of the app keeps its databases.
pub struct DataDir(pub PathBuf);

/// Starts the desktop app.
pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let options = match LaunchOptions::parse(std::env::args_os().skip(1)) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("bitselect-assistant: {error}");
            std::process::exit(2);
        }
    };
    let app = run_app(tauri::Builder::default(), options).run(tauri::generate_context!());
    if let Err(error) = app {
        tracing::error!(%error, "the app stopped with an error");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_keeps_its_data_in_the_directory_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("nested/data");
        let mut app = run_app(
            tauri::test::mock_builder(),
            LaunchOptions {
                data_dir: Some(data_dir.clone()),
            },
        )
        .build(tauri::test::mock_context(tauri::test::noop_assets()))
        .unwrap();
        // One turn of the event loop runs the setup hook.
        #[allow(deprecated)]
        app.run_iteration(|_, _| {});
        assert_eq!(app.state::<DataDir>().0, data_dir);
        assert!(data_dir.is_dir());
    }
}
