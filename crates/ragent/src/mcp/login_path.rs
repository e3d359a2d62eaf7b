//! The PATH stdio servers are started with. An app started from a desktop
//! entry gets the session's minimal PATH (`/usr/bin:/bin`…), without the
//! directories a user's shell adds (`~/.local/bin`, nvm's node, cargo…),
//! so `npx` or `uvx` from a pasted configuration would not be found. When
//! the app's PATH looks like that, the login shell is asked for its PATH
//! once (`$SHELL -ilc`), with a time limit, and that is used; any failure
//! leaves the app's PATH as it is.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::OnceCell;

/// How long the login shell may take to say its PATH.
pub const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(3);

/// Directories of a session's default PATH: a PATH of nothing else is
/// minimal.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/usr/games",
    "/usr/local/games",
    "/snap/bin",
];

/// Marks the PATH in the shell's output, which rc files may clutter.
const MARK: &str = "__ragent_path__";

/// The login shell's PATH, asked at most once.
#[derive(Debug)]
pub struct LoginPath {
    shell: Option<PathBuf>,
    current: Option<String>,
    timeout: Duration,
    asked: OnceCell<Option<String>>,
}

impl LoginPath {
    /// From the app's own `SHELL` and `PATH`.
    pub fn from_env() -> LoginPath {
        LoginPath::new(
            std::env::var_os("SHELL").map(PathBuf::from),
            std::env::var("PATH").ok(),
            LOGIN_SHELL_TIMEOUT,
        )
    }

    pub fn new(shell: Option<PathBuf>, current: Option<String>, timeout: Duration) -> LoginPath {
        LoginPath {
            shell,
            current,
            timeout,
            asked: OnceCell::new(),
        }
    }

    /// The PATH to start stdio servers with, or `None` to leave the app's.
    pub async fn path(&self) -> Option<String> {
        if !looks_minimal(self.current.as_deref().unwrap_or("")) {
            return None;
        }
        self.asked
            .get_or_init(|| async {
                let shell = self.shell.as_ref()?;
                let found = ask_shell(shell, self.timeout).await;
                match &found {
                    Some(path) => tracing::info!(%path, "stdio servers get the login shell's PATH"),
                    None => tracing::warn!(shell = %shell.display(), "the login shell did not say its PATH; stdio servers get the app's"),
                }
                found.map(|path| merged(&path, self.current.as_deref().unwrap_or("")))
            })
            .await
            .clone()
    }
}

/// Nothing but a session's default directories.
pub fn looks_minimal(path: &str) -> bool {
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .all(|dir| SYSTEM_DIRS.contains(&dir.trim_end_matches('/')))
}

/// The shell's PATH, then the app's directories it lacks.
fn merged(shell_path: &str, current: &str) -> String {
    let mut dirs: Vec<&str> = shell_path.split(':').filter(|d| !d.is_empty()).collect();
    for dir in current.split(':').filter(|d| !d.is_empty()) {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs.join(":")
}

async fn ask_shell(shell: &PathBuf, timeout: Duration) -> Option<String> {
    let script = format!("printf '{MARK}%s{MARK}' \"$PATH\"");
    let child = tokio::process::Command::new(shell)
        .args(["-ilc", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let output = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (_, rest) = text.split_once(MARK)?;
    let (path, _) = rest.split_once(MARK)?;
    (!path.is_empty()).then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::*;

    /// A shell script standing in for the user's shell: it prints a banner
    /// as rc files do, sets its own PATH and runs the command it is given.
    fn fake_shell(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_desktop_session_path_is_minimal_and_a_terminal_one_is_not() {
        assert!(looks_minimal("/usr/local/bin:/usr/bin:/bin"));
        assert!(looks_minimal("/usr/bin/:/bin:"));
        assert!(looks_minimal(""));
        assert!(!looks_minimal("/home/me/.local/bin:/usr/bin:/bin"));
        assert!(!looks_minimal("/opt/homebrew/bin:/usr/bin"));
    }

    #[tokio::test]
    async fn a_minimal_path_is_replaced_by_the_login_shell_s_once() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("runs");
        let shell = fake_shell(
            dir.path(),
            "login-shell",
            &format!(
                "echo welcome back\necho run >> {}\nPATH=/home/me/.local/bin:/usr/bin\neval \"$2\"",
                counter.display()
            ),
        );
        let login = LoginPath::new(
            Some(shell),
            Some("/usr/bin:/bin".into()),
            Duration::from_secs(5),
        );
        assert_eq!(
            login.path().await.as_deref(),
            Some("/home/me/.local/bin:/usr/bin:/bin")
        );
        assert_eq!(
            login.path().await.as_deref(),
            Some("/home/me/.local/bin:/usr/bin:/bin")
        );
        assert_eq!(std::fs::read_to_string(&counter).unwrap(), "run\n");
    }

    #[tokio::test]
    async fn a_shell_that_hangs_or_fails_leaves_the_app_s_path() {
        let dir = tempfile::tempdir().unwrap();
        let slow = fake_shell(dir.path(), "slow-shell", "sleep 10");
        let login = LoginPath::new(
            Some(slow),
            Some("/usr/bin:/bin".into()),
            Duration::from_millis(200),
        );
        let started = std::time::Instant::now();
        assert_eq!(login.path().await, None);
        assert!(started.elapsed() < Duration::from_secs(5));

        let failing = fake_shell(dir.path(), "failing-shell", "exit 1");
        let login = LoginPath::new(Some(failing), None, Duration::from_secs(5));
        assert_eq!(login.path().await, None);
        let missing = LoginPath::new(
            Some(dir.path().join("no-such-shell")),
            None,
            Duration::from_secs(5),
        );
        assert_eq!(missing.path().await, None);
    }

    #[tokio::test]
    async fn a_terminal_path_is_kept_without_asking_the_shell() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let shell = fake_shell(dir.path(), "shell", &format!("touch {}", marker.display()));
        let login = LoginPath::new(
            Some(shell),
            Some("/home/me/.cargo/bin:/usr/bin".into()),
            Duration::from_secs(5),
        );
        assert_eq!(login.path().await, None);
        assert!(!marker.exists());
    }
}
