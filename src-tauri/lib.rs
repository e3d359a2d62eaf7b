//! The desktop shell: a thin Tauri layer over the agent core. It opens the
//! core on the app's data directory with the shop as its built-in server,
//! exposes the core through commands, and forwards the core's events.

mod commands;
mod events;
mod launch_options;
mod shop_server;

use std::path::{Path, PathBuf};

use ragent::runtime::CoreRuntime;
use ragent::secrets::SecretsBackend;
use ragent::{Agent, AgentConfig};
use tauri::{Builder, Manager, Runtime};

pub use launch_options::{LaunchOptions, LaunchOptionsError};
pub use shop_server::SHOP_SERVER_NAME;

/// The core's database inside the data directory.
pub const CORE_DB_FILE: &str = "assistant.db";
/// The shop's data directory inside the app's.
pub const SHOP_DIR: &str = "shop";
/// The service name of the app's entries in the OS keyring.
pub const KEYRING_SERVICE: &str = "app.bitselect.assistant";

/// Where this run of the app keeps its databases.
pub struct DataDir(pub PathBuf);

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    ShopServer(#[from] shop_server::ShopServerError),
    #[error("cannot open the assistant's data: {0}")]
    Core(#[from] ragent::AgentError),
}

/// Opens the core on `data_dir`: its database, and the shop server started
/// from `shop_binary` with its own data beside it.
pub async fn open_core(data_dir: &Path, shop_binary: &Path) -> Result<Agent, StartError> {
    let mut config = AgentConfig::new(data_dir.join(CORE_DB_FILE));
    config.secrets = SecretsBackend::KeyringOrDatabase {
        service: KEYRING_SERVICE.into(),
    };
    config.builtin_servers = vec![shop_server::entry(shop_binary, &data_dir.join(SHOP_DIR))];
    Ok(Agent::open(config).await?)
}

/// Builds the app on any runtime, so tests can run it on the mock runtime.
pub fn run_app<R: Runtime>(builder: Builder<R>, options: LaunchOptions) -> Builder<R> {
    builder
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(tauri::generate_handler![
            commands::send_message,
            commands::respond_confirmation,
            commands::cancel_run,
            commands::list_sessions,
            commands::create_session,
            commands::open_session,
            commands::rename_session,
            commands::delete_session,
            commands::get_settings,
            commands::save_settings,
            commands::check_model,
            commands::list_tools,
            commands::list_audit,
            commands::tool_definition_change,
            commands::accept_tool_definition,
        ])
        .setup(move |app| {
            let data_dir = match &options.data_dir {
                Some(dir) => dir.clone(),
                None => app.path().app_data_dir()?,
            };
            std::fs::create_dir_all(&data_dir)?;
            tracing::info!(data_dir = %data_dir.display(), "app data directory");
            let shop_binary = shop_server::locate()?;
            let agent = tauri::async_runtime::block_on(open_core(&data_dir, &shop_binary))?;
            tauri::async_runtime::spawn(events::forward(app.handle().clone(), agent.clone()));
            app.manage(agent);
            app.manage(DataDir(data_dir));
            Ok(())
        })
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
    let options = match LaunchOptions::parse(std::env::args_os().skip(1)) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("bitselect-assistant: {error}");
            std::process::exit(2);
        }
    };
    // The core, the commands and the event forwarding all run on one
    // thread of their own (see `ragent::runtime`); the windows keep the
    // main thread. It lives as long as the app.
    let core = match CoreRuntime::start() {
        Ok(core) => core,
        Err(error) => {
            eprintln!("bitselect-assistant: cannot start the core's thread: {error}");
            std::process::exit(1);
        }
    };
    tauri::async_runtime::set(core.handle().clone());
    let app = run_app(tauri::Builder::default(), options).run(tauri::generate_context!());
    if let Err(error) = app {
        tracing::error!(%error, "the app stopped with an error");
        std::process::exit(1);
    }
    drop(core);
}
