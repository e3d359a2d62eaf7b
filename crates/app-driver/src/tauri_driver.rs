//! tauri-driver as a child process on reserved loopback ports.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::ports::ReservedPort;

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error(
        "tauri-driver was not found on PATH or in ~/.cargo/bin; install it with `cargo install tauri-driver --locked` (scripts/setup does)"
    )]
    NotInstalled,
    #[error(
        "no display: end-to-end tests open real windows; run them under `xvfb-run -a` (scripts/test does)"
    )]
    NoDisplay,
    #[error("could not start tauri-driver: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("tauri-driver exited before it listened on port {port} ({status})")]
    Exited {
        port: u16,
        status: std::process::ExitStatus,
    },
    #[error("tauri-driver did not become ready on port {port} within {seconds} s")]
    NotReady { port: u16, seconds: u64 },
}

/// A running tauri-driver; stopped with SIGTERM on drop so that it also stops
/// WebKitWebDriver (SIGKILL would leave that holding its port).
pub struct TauriDriver {
    child: Child,
    url: String,
    /// Released once `drop` has stopped the driver.
    _ports: [ReservedPort; 2],
}

impl TauriDriver {
    pub fn start() -> Result<TauriDriver, DriverError> {
        TauriDriver::start_with_env(&[])
    }

    /// Starts the driver with these environment variables changed; the app
    /// it launches inherits them (as an app started from a desktop entry
    /// gets the session's environment).
    pub fn start_with_env(env: &[(&str, &std::ffi::OsStr)]) -> Result<TauriDriver, DriverError> {
        if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
            return Err(DriverError::NoDisplay);
        }
        let program = locate().ok_or(DriverError::NotInstalled)?;
        // tauri-driver takes port numbers, not sockets: they are reserved
        // where no other process is handed them (see `ports`).
        let port = ReservedPort::reserve().map_err(DriverError::Spawn)?;
        let native_port = ReservedPort::reserve().map_err(DriverError::Spawn)?;
        let child = Command::new(program)
            .args([
                "--port",
                &port.port().to_string(),
                "--native-port",
                &native_port.port().to_string(),
            ])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(DriverError::Spawn)?;
        let listening = port.port();
        let mut driver = TauriDriver {
            child,
            url: format!("http://127.0.0.1:{listening}"),
            _ports: [port, native_port],
        };
        driver.wait_ready(listening)?;
        Ok(driver)
    }

    /// The process id of tauri-driver; the app it launches runs below it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// tauri-driver reports nothing when it is listening, so ask its status
    /// endpoint until it answers.
    fn wait_ready(&mut self, port: u16) -> Result<(), DriverError> {
        let limit = Duration::from_secs(20);
        let started = Instant::now();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .map_err(|_| DriverError::NotReady { port, seconds: 0 })?;
        while started.elapsed() < limit {
            if client.get(format!("{}/status", self.url)).send().is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(DriverError::Exited { port, status });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(DriverError::NotReady {
            port,
            seconds: limit.as_secs(),
        })
    }
}

impl Drop for TauriDriver {
    fn drop(&mut self) {
        // Once reaped, its pid may be another process's.
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on our own child's pid has no memory-safety effects.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let _ = self.child.wait();
    }
}

fn locate() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("tauri-driver"))
            .find(|candidate| candidate.is_file())
    });
    on_path.or_else(|| {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))?;
        let candidate = cargo_home.join("bin").join("tauri-driver");
        candidate.is_file().then_some(candidate)
    })
}
