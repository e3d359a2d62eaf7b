//! The desktop shell: a thin Tauri layer over the agent core.

use tauri::{Builder, Runtime};

/// Builds the app on any runtime, so tests can run it on the mock runtime.
pub fn run_app<R: Runtime>(builder: Builder<R>) -> Builder<R> {
    builder
}

/// Starts the desktop app.
pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let app = run_app(tauri::Builder::default()).run(tauri::generate_context!());
    if let Err(error) = app {
        tracing::error!(%error, "the app stopped with an error");
        std::process::exit(1);
    }
}
