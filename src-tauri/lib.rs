//! The desktop shell: a thin Tauri layer over the agent core. It opens the
//! core on the app's data directory with the shop as its built-in server,
//! exposes the core through commands, and forwards the core's events.

mod app_dirs;
mod browser;
mod commands;
mod data_dir_lock;
mod events;
mod launch_options;
pub mod logging;
mod logs_folder;
mod shop_server;
mod start_state;
mod waiting_notice;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ragent::runtime::CoreRuntime;
use ragent::secrets::SecretsBackend;
use ragent::ucp::evidence_report;
use ragent::{Agent, AgentConfig};
use tauri::async_runtime::JoinHandle;
use tauri::{App, AppHandle, Builder, Manager, RunEvent, Runtime, WebviewWindowBuilder};

pub use app_dirs::AppDirs;
pub use data_dir_lock::{DataDirLock, DataDirLockError};
use events::PageEvents;
pub use events::forward_to_page;
pub use launch_options::{LaunchOptions, LaunchOptionsError, ReportFormat};
pub use shop_server::SHOP_SERVER_NAME;
pub use start_state::StartState;

/// The core's database inside the data directory.
pub const CORE_DB_FILE: &str = "assistant.db";
/// The shop's data directory inside the app's.
pub const SHOP_DIR: &str = "shop";
/// The local shop's database file in [`SHOP_DIR`] (the shop names it so).
pub const SHOP_DB_FILE: &str = "shop.db";
/// The app's one window, as tauri.conf.json describes it (`"create": false`:
/// it is made once the core has opened, [`open_main_window`]).
pub const MAIN_WINDOW: &str = "main";
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
    #[error(
        "cannot tell where to keep the app's data: the system names no data directory; start the app with --data-dir DIR"
    )]
    NoDataDir,
    #[error("the core's opening did not finish: {0}")]
    CoreOpening(tauri::Error),
    #[error("cannot open the app's window: {0}")]
    Window(#[from] tauri::Error),
    #[error(transparent)]
    Locked(#[from] DataDirLockError),
    #[error("tauri.conf.json describes no window \"{MAIN_WINDOW}\"")]
    NoMainWindow,
}

/// Opens the core on `dirs.data`: its database, and the shop server started
/// from `shop_binary` with its own data beside it. MCP servers write their
/// stderr to files in `dirs.logs`.
pub async fn open_core(dirs: &AppDirs, shop_binary: &Path) -> Result<Agent, StartError> {
    let data_dir = &dirs.data;
    let mut config = AgentConfig::new(data_dir.join(CORE_DB_FILE));
    config.secrets = SecretsBackend::KeyringOrDatabase {
        service: KEYRING_SERVICE.into(),
    };
    config.builtin_servers = vec![shop_server::entry(
        shop_binary,
        &data_dir.join(SHOP_DIR),
        &dirs.logs,
    )];
    // Checked, and restored from its newest copy if damaged, before the
    // shop starts; the shop makes the copies.
    config.shop_database = Some(data_dir.join(SHOP_DIR).join(SHOP_DB_FILE));
    config.log_dir = Some(dirs.logs.clone());
    // The user may move the shop online (settings); it keeps its name and trust.
    config.online_shop = Some(SHOP_SERVER_NAME.to_owned());
    // Started from a desktop entry, the app lacks the shell's PATH that
    // servers such as `npx` or `uvx` are found on.
    config.login_shell_path = true;
    Ok(Agent::open(config).await?)
}

/// Resolves the app's directories and locks the data directory before
/// anything in it is opened: a second copy of the app on the same directory
/// stops here. The lock must be held as long as the app.
pub fn claim_dirs(
    options: &LaunchOptions,
    identifier: &str,
) -> Result<(AppDirs, DataDirLock), StartError> {
    let dirs = AppDirs::of_run(options, identifier).ok_or(StartError::NoDataDir)?;
    let lock = DataDirLock::acquire(&dirs.data)?;
    Ok((dirs, lock))
}

/// The core as it is being opened on the core's thread, begun before Tauri
/// sets up its windowing so that both go on at once; the app's setup takes
/// it (docs/benchmarks.md, part 5).
pub struct OpeningCore(Mutex<Option<JoinHandle<Result<Agent, StartError>>>>);

impl OpeningCore {
    /// Begins opening the core in `dirs`, with the shop found beside this
    /// executable, on the runtime `tauri::async_runtime` was set to.
    pub fn begin(dirs: AppDirs) -> OpeningCore {
        let opening = tauri::async_runtime::spawn(async move {
            let shop_binary = shop_server::locate()?;
            open_core(&dirs, &shop_binary).await
        });
        OpeningCore(Mutex::new(Some(opening)))
    }

    fn take(&self) -> Option<JoinHandle<Result<Agent, StartError>>> {
        self.0.lock().ok()?.take()
    }
}

/// Registers every command of the list in command_list.rs, and names them
/// in [`COMMANDS`]: the handlers and the permissions come from one list.
macro_rules! app_commands {
    ($($name:ident),* $(,)?) => {
        /// The commands the page may call, as the handler registers them.
        pub const COMMANDS: &[&str] = &[$(stringify!($name)),*];

        fn command_handler<R: Runtime>()
        -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$(commands::$name),*]
        }
    };
}
include!("command_list.rs");

/// The app's configuration, capabilities and page, for any runtime, so
/// tests on the mock runtime get the same permissions as the app.
pub fn context<R: Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}

/// What the app does on the event loop's events: when it exits, the core
/// stops every run and waits for its task to end, instead of leaving runs
/// to die with the process mid-step. What they stored stays, and the next
/// start recovers it as after a crash.
pub fn on_run_event<R: Runtime>(app: &AppHandle<R>, event: RunEvent) {
    if let RunEvent::Exit = event
        && let Some(agent) = app.try_state::<Agent>()
    {
        tauri::async_runtime::block_on(agent.shutdown());
        tracing::info!("core shut down");
    }
}

/// Builds the app on any runtime, so tests can run it on the mock runtime.
/// Its setup takes the core [`OpeningCore`] began opening and makes the
/// window.
pub fn run_app<R: Runtime>(builder: Builder<R>) -> Builder<R> {
    builder
        // The page opens no link itself (the core opens pages through the
        // shell), so the opener's click handler script is left out of it.
        .plugin(
            tauri_plugin_opener::Builder::new()
                .open_js_links_on_click(false)
                .build(),
        )
        .manage(PageEvents::default())
        .invoke_handler(command_handler())
        .setup(move |app| {
            let opening = app
                .try_state::<OpeningCore>()
                .and_then(|opening| opening.take())
                .ok_or("the core was not being opened when the app started")?;
            let agent =
                tauri::async_runtime::block_on(opening).map_err(StartError::CoreOpening)??;
            tracing::info!("core opened");
            tauri::async_runtime::spawn(forward_to_page(app.handle().clone(), &agent));
            let start = StartState::read(&agent);
            app.manage(agent);
            open_main_window(app, start)?;
            Ok(())
        })
}

/// Makes the app's window, handing its page the first screen's state: the
/// page then asks for it only if it is missing (a failed read, a reload).
fn open_main_window<R: Runtime>(
    app: &App<R>,
    start: Result<StartState, ragent::AgentError>,
) -> Result<(), StartError> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|window| window.label == MAIN_WINDOW)
        .ok_or(StartError::NoMainWindow)?;
    let mut window = WebviewWindowBuilder::from_config(app.handle(), config)?;
    match start.map(|state| state.script()) {
        Ok(Ok(script)) => window = window.initialization_script(script),
        Ok(Err(error)) => {
            tracing::warn!(%error, "the first screen's state could not be written; the page asks for it")
        }
        Err(error) => {
            tracing::warn!(%error, "the first screen's state could not be read; the page asks for it")
        }
    }
    window.build()?;
    Ok(())
}

/// `--verify-mandates`: the kept checkout mandates checked again offline,
/// read-only (the app may be open on the same directory), and reported on
/// the terminal; the exit status says whether every check held.
fn verify_mandates(options: &LaunchOptions, format: ReportFormat) -> i32 {
    let identifier = context::<tauri::Wry>().config().identifier.clone();
    let Some(AppDirs { data, .. }) = AppDirs::of_run(options, &identifier) else {
        eprintln!("bitselect-assistant: no data directory: pass --data-dir DIR");
        return i32::from(evidence_report::UNREADABLE);
    };
    let status = evidence_report::verify_mandates(
        &data.join(CORE_DB_FILE),
        format == ReportFormat::Json,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    i32::from(status)
}

/// Starts the desktop app.
pub fn run() {
    let options = match LaunchOptions::parse(std::env::args_os().skip(1)) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("bitselect-assistant: {error}");
            std::process::exit(2);
        }
    };
    if let Some(format) = options.verify_mandates {
        std::process::exit(verify_mandates(&options, format));
    }
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
    let context = context();
    let (dirs, lock) = match claim_dirs(&options, &context.config().identifier) {
        Ok(claimed) => claimed,
        Err(error) => {
            eprintln!("bitselect-assistant: {error}");
            std::process::exit(1);
        }
    };
    // Only after the lock: a refused second copy writes nothing, not even logs.
    if let Err(error) = logging::init(&dirs.logs, logging::filter_from_env()) {
        eprintln!("bitselect-assistant: logging to stderr only: {error}");
        logging::init_stderr_only(logging::filter_from_env());
    }
    tracing::info!(data_dir = %dirs.data.display(), logs = %dirs.logs.display(), "app directories");
    let opening = OpeningCore::begin(dirs.clone());
    let app = match run_app(tauri::Builder::default()).build(context) {
        Ok(app) => app,
        Err(error) => {
            eprintln!("bitselect-assistant: cannot start: {error}");
            std::process::exit(1);
        }
    };
    app.manage(lock);
    app.manage(DataDir(dirs.data.clone()));
    app.manage(dirs);
    app.manage(opening);
    app.run(on_run_event);
    drop(core);
}
