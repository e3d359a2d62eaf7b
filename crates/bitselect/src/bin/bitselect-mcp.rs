//! `bitselect-mcp`: the Bit Select shop as an MCP server, over stdio by
//! default or streamable HTTP with `--http`. Stdout carries only the
//! protocol; logs and the HTTP ready line go to stderr. Built without the
//! `service` feature (the desktop app's own shop) it serves stdio over
//! SQLite only, and says so to `--http` and `--database-url`.

use std::io::IsTerminal;
use std::process::ExitCode;

use std::path::PathBuf;

use bitselect::Shop;
use bitselect::cli::{
    self, Command, Env, Options, SeedUsersOptions, StoreOptions, Transport, USAGE,
};
use bitselect::serve::serve_stdio;
#[cfg(feature = "service")]
use bitselect::serve::{Bind, ServeError, serve_http, serve_http_authenticated};
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

/// The service's allocator (Cargo.toml says why); the desktop app's own
/// shop keeps the system's.
#[cfg(feature = "service")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process, before it has
/// allocated much. mimalloc aligns its arenas to huge pages, so where the
/// kernel backs memory with them always, each stretch an instance touched
/// became 2 MiB: in part 6 of docs/benchmarks.md it listened at 75 MiB
/// and held 212 after the calls; without them 46 and 72. Returns the OS
/// error when the kernel refused, which only costs memory.
#[cfg(all(feature = "service", target_os = "linux"))]
fn without_huge_pages() -> Option<std::io::Error> {
    // SAFETY: PR_SET_THP_DISABLE reads its integer arguments only and
    // changes nothing but this process's page policy.
    let status = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    (status != 0).then(std::io::Error::last_os_error)
}

#[cfg(not(all(feature = "service", target_os = "linux")))]
fn without_huge_pages() -> Option<std::io::Error> {
    None
}

fn main() -> ExitCode {
    let huge_pages_left = without_huge_pages();
    let command = cli::parse(std::env::args_os().skip(1), &Env::from_process());
    match command {
        Ok(Command::Help) => {
            println!("{USAGE}");
            #[cfg(not(feature = "service"))]
            println!(
                "\nThis build is the desktop app's own shop: it serves stdio over SQLite.\n\
                 --http, --database-url and the sign-in options need the service build."
            );
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("bitselect-mcp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(Command::Serve(options)) => serve(*options, huge_pages_left),
        Ok(Command::SeedUsers(options)) => seed_users(options),
        Ok(Command::RotateSigningKey(options)) => rotate_signing_key(options),
        Err(error) => {
            eprintln!("bitselect-mcp: {error}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// What is logged unless `RUST_LOG` says otherwise: the shop's own lines
/// (one per call) and only the MCP library's warnings. At info the library
/// logs three more lines for every stateless HTTP request, one of them the
/// client's whole handshake: noise beside the call's own line.
const DEFAULT_LOGS: &str = "info,rmcp=warn";

fn init_logs() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOGS)),
        )
        .init();
}

/// Opens the shop on the chosen PostgreSQL database, else in the chosen
/// data directory, or says on stderr why not.
fn open_shop(data_dir: Option<PathBuf>, database_url: Option<String>) -> Result<Shop, ExitCode> {
    if let Some(url) = database_url {
        #[cfg(not(feature = "service"))]
        {
            let _ = url;
            eprintln!("bitselect-mcp: {}", without_service("--database-url"));
            return Err(ExitCode::from(2));
        }
        #[cfg(feature = "service")]
        return match Shop::open_postgres(&url) {
            Ok(shop) => {
                tracing::info!(database = %shop.store_description(), "shop opened");
                Ok(shop)
            }
            Err(error) => {
                // The error names the server, never the password.
                eprintln!("bitselect-mcp: cannot open the shop's PostgreSQL database: {error}");
                Err(ExitCode::FAILURE)
            }
        };
    }
    let Some(data_dir) = data_dir.or_else(Shop::default_data_dir) else {
        eprintln!("bitselect-mcp: no user data directory on this system; pass --data-dir DIR");
        return Err(ExitCode::from(2));
    };
    match Shop::open(&data_dir) {
        Ok(shop) => {
            tracing::info!(db = %shop.store_description(), "shop opened");
            Ok(shop)
        }
        Err(error) => {
            eprintln!(
                "bitselect-mcp: cannot open the shop in {}: {error}",
                data_dir.display()
            );
            Err(ExitCode::FAILURE)
        }
    }
}

fn seed_users(options: SeedUsersOptions) -> ExitCode {
    init_logs();
    let shop = match open_shop(options.data_dir, options.database_url) {
        Ok(shop) => shop,
        Err(code) => return code,
    };
    match shop.seed_users(options.count) {
        Ok(seeded) => {
            println!(
                "{}",
                serde_json::json!({ "created": seeded.created, "existing": seeded.existing })
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bitselect-mcp: cannot seed users: {error}");
            ExitCode::FAILURE
        }
    }
}

fn rotate_signing_key(options: StoreOptions) -> ExitCode {
    init_logs();
    let shop = match open_shop(options.data_dir, options.database_url) {
        Ok(shop) => shop,
        Err(code) => return code,
    };
    match shop.rotate_signing_key() {
        Ok(key) => match serde_json::to_string(&key) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("bitselect-mcp: cannot print the new key: {error}");
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            eprintln!("bitselect-mcp: cannot rotate the signing key: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What this build says to an option only the merchant's service build has.
#[cfg(not(feature = "service"))]
fn without_service(option: &str) -> String {
    format!(
        "{option} needs the shop's service build: this one (the desktop app's own shop) \
         serves stdio over SQLite only. Build bitselect-mcp with the `service` feature \
         (cargo's default) for HTTP and PostgreSQL"
    )
}

/// Waits for Ctrl-C or (on Unix) SIGTERM, what a service manager or a
/// container runtime sends to stop a process; returns its name.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => "SIGINT",
                    _ = terminate.recv() => "SIGTERM",
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM; Ctrl-C still stops the shop");
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

/// The listening socket inherited on `fd`, checked to be one.
#[cfg(feature = "service")]
fn inherited(fd: i32) -> Result<Bind, ServeError> {
    use std::os::fd::FromRawFd;
    // SAFETY: `--http fd:N` says the process was started owning a listening
    // TCP socket on N, and nothing else here uses that descriptor; a
    // descriptor that is no TCP socket fails `local_addr` below.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    match listener.local_addr() {
        Ok(_) => Ok(Bind::from(listener)),
        Err(error) => {
            // Not ours to close: give the descriptor back untouched.
            let _ = std::os::fd::IntoRawFd::into_raw_fd(listener);
            Err(ServeError::Inherited { fd, source: error })
        }
    }
}

fn serve(options: Options, huge_pages_left: Option<std::io::Error>) -> ExitCode {
    init_logs();
    if let Some(error) = huge_pages_left {
        tracing::warn!(%error, "transparent huge pages could not be turned off: the shop will hold more memory");
    }
    #[cfg(not(feature = "service"))]
    if !matches!(options.transport, Transport::Stdio) {
        eprintln!("bitselect-mcp: {}", without_service("--http"));
        return ExitCode::from(2);
    }
    let Options {
        transport,
        data_dir,
        database_url,
        http_access,
        auth,
    } = options;
    let shop = match open_shop(data_dir, database_url) {
        Ok(shop) => shop,
        Err(code) => return code,
    };
    let listening = Listening {
        transport,
        http_access,
        auth,
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bitselect-mcp: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = CancellationToken::new();
    let outcome = runtime.block_on(async {
        let on_signal = shutdown.clone();
        tokio::spawn(async move {
            let signal = shutdown_signal().await;
            tracing::info!(signal, "shutting down: finishing the calls in flight");
            on_signal.cancel();
        });
        serve_on(shop, listening, shutdown).await
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bitselect-mcp: {error}");
            ExitCode::FAILURE
        }
    }
}

/// How the shop is reached, from the command line's options. Without the
/// `service` feature only stdio is (anything else was refused before the
/// shop opened), so nothing reads the rest.
#[cfg_attr(not(feature = "service"), allow(dead_code))]
struct Listening {
    transport: Transport,
    http_access: bitselect::HttpAccess,
    auth: Option<bitselect::AuthConfig>,
}

/// Serves the shop over the transport `options` name until `shutdown`.
#[cfg(feature = "service")]
async fn serve_on(
    shop: Shop,
    options: Listening,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    // Where HTTP listens; `None` for stdio.
    let http = match options.transport {
        Transport::Stdio => None,
        Transport::Http(addr) => Some(Bind::from(addr)),
        Transport::HttpInherited(fd) => Some(inherited(fd)?),
    };
    let Some(bind) = http else {
        return stdio(shop, shutdown).await;
    };
    let ready = |bound| {
        eprintln!(
            "bitselect-mcp listening on http://{bound}{}",
            bitselect::MCP_PATH
        )
    };
    match options.auth {
        Some(auth) => {
            serve_http_authenticated(shop, bind, options.http_access, auth, shutdown, ready).await
        }
        None => serve_http(shop, bind, options.http_access, shutdown, ready).await,
    }
}

/// Serves the shop over stdio until `shutdown` (the only transport of a
/// build without the `service` feature, refused earlier otherwise).
#[cfg(not(feature = "service"))]
async fn serve_on(
    shop: Shop,
    _options: Listening,
    shutdown: CancellationToken,
) -> Result<(), bitselect::ServeError> {
    stdio(shop, shutdown).await
}

async fn stdio(shop: Shop, shutdown: CancellationToken) -> Result<(), bitselect::ServeError> {
    serve_stdio(shop, shutdown).await.map(|reason| {
        tracing::info!(?reason, "stdio session ended");
    })
}
