//! A private PostgreSQL cluster for one test binary, from the
//! distribution's `postgresql` package: initdb into a temporary directory,
//! the server listening only on a Unix socket in that directory (no TCP
//! port that another process could take first), run as `nobody` when the tests run as root (PostgreSQL refuses root).
//! Each test gets a database of its own, dropped when the test is done;
//! the seeded ones are copies of a template seeded once (by the caller's
//! seeding), so a test starts in milliseconds. Copying a database writes
//! all of it to the write-ahead log, so the server checkpoints every 64 MB
//! of log rather than the default 1 GB: the cluster's disk use stays near
//! what the tests' databases hold.
//!
//! A watchdog shell, whose stdin is a pipe this process never closes,
//! stops the server and removes the directory when the test binary exits,
//! however it exits.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// What to tell someone whose machine lacks PostgreSQL.
const MISSING: &str = "PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/postgres); \
                       run scripts/setup, which installs Debian's `postgresql` package";

/// The database every seeded test database is copied from.
const TEMPLATE: &str = "shop_template";

pub struct Cluster {
    bin: PathBuf,
    /// The cluster's data directory.
    data: PathBuf,
    /// The directory of its socket.
    socket_dir: PathBuf,
    /// The options the server runs with, and where it logs.
    server_options: String,
    log: PathBuf,
    /// The account the cluster runs as (when the tests run as root).
    account: Option<(u32, u32)>,
    /// Holds the watchdog's stdin open for as long as this process lives.
    _watchdog: Mutex<(Child, ChildStdin)>,
    template_seeded: Mutex<bool>,
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
static NEXT_DATABASE: AtomicU32 = AtomicU32::new(1);

/// The test binary's cluster, started on first use.
pub fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(Cluster::start)
}

/// The newest installed PostgreSQL's binaries.
fn bin_dir() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .unwrap_or_else(|_| panic!("{MISSING}"))
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().unwrap_or_else(|| panic!("{MISSING}")).1
}

/// `nobody`'s uid and gid, from /etc/passwd.
fn nobody() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"nobody"))
                .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))
                .flatten()
        })
        .expect("the tests run as root and need the `nobody` account to run PostgreSQL as")
}

impl Cluster {
    fn start() -> Self {
        let bin = bin_dir();
        let running_as_root = std::fs::metadata("/proc/self").expect("/proc/self").uid() == 0;
        let account = running_as_root.then(nobody);
        let dir = tempfile::Builder::new()
            .prefix("bitselect-pg-")
            .tempdir()
            .expect("temp dir");
        if let Some((uid, gid)) = account {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("hand the dir to nobody");
        }
        // The watchdog owns the directory from here on, before anything can
        // fail: a cluster that never started is removed too.
        let watchdog = watchdog(&bin, dir.path(), account);
        let dir = dir.keep();
        let data = dir.join("data");
        let cluster = |program: &str| {
            let mut command = Command::new(bin.join(program));
            if let Some((uid, gid)) = account {
                command.uid(uid).gid(gid);
            }
            command
        };
        run(cluster("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--locale=C.UTF-8", "--no-sync", "--no-instructions"]));
        let log = dir.join("server.log");
        let server_options = format!(
            "-k {} -c listen_addresses= -c max_connections=300 \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
             -c max_wal_size=64MB -c min_wal_size=32MB",
            dir.display()
        );
        let started = cluster("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .args(["-o", &server_options, "-w", "start"])
            .output()
            .unwrap_or_else(|error| panic!("pg_ctl: {error}. {MISSING}"));
        assert!(
            started.status.success(),
            "pg_ctl start failed: {}{}{}",
            String::from_utf8_lossy(&started.stdout),
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Self {
            bin,
            data,
            server_options,
            log,
            account,
            socket_dir: dir,
            _watchdog: Mutex::new(watchdog),
            template_seeded: Mutex::new(false),
        }
    }

    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@/{database}?host={}",
            self.socket_dir.display()
        )
    }

    /// The server's Unix socket, for a way to it of a test's own.
    pub fn socket(&self) -> PathBuf {
        self.socket_dir.join(".s.PGSQL.5432")
    }

    /// `database`'s URL through a TCP port on this machine that leads to
    /// the server (a [`crate::slow_link::SlowLink`], say).
    pub fn url_through(&self, addr: std::net::SocketAddr, database: &str) -> String {
        format!("postgres://postgres@{addr}/{database}")
    }

    /// The psql binary of this cluster, for a session a test holds open.
    pub fn psql_binary(&self) -> PathBuf {
        self.bin.join("psql")
    }

    /// Runs SQL on `database` through psql; panics if it fails.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        self.try_psql(database, sql)
            .unwrap_or_else(|error| panic!("psql {sql:?}: {error}"))
    }

    /// Runs SQL on `database` through psql: what it printed, or why it
    /// failed.
    fn try_psql(&self, database: &str, sql: &str) -> Result<String, String> {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"])
            .arg("-d")
            .arg(self.url(database))
            .arg("-c")
            .arg(sql)
            .output()
            .map_err(|error| format!("cannot run psql: {error}"))?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// A new, empty database.
    pub fn empty_database(&'static self) -> Database {
        let name = next_name();
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        Database {
            cluster: self,
            name,
        }
    }

    /// A new database holding what `seed` wrote into the template (given
    /// its URL) the first time: every caller in one test binary seeds alike.
    pub fn seeded_database(&'static self, seed: impl FnOnce(&str)) -> Database {
        let mut seeded = self
            .template_seeded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !*seeded {
            self.psql("postgres", &format!("CREATE DATABASE {TEMPLATE}"));
            seed(&self.url(TEMPLATE));
            *seeded = true;
        }
        let name = next_name();
        // Copying waits (up to 5 s) for the template's last sessions to end.
        self.psql(
            "postgres",
            &format!("CREATE DATABASE {name} TEMPLATE {TEMPLATE}"),
        );
        Database {
            cluster: self,
            name,
        }
    }

    /// Restarts the server as an administrator would (`pg_ctl restart -m
    /// fast`): every session is ended, transactions in flight roll back,
    /// and the server is back once this returns. Only for a test binary
    /// whose other tests do not mind: the cluster is the binary's.
    pub fn restart(&self) {
        let mut command = Command::new(self.bin.join("pg_ctl"));
        if let Some((uid, gid)) = self.account {
            command.uid(uid).gid(gid);
        }
        run(command
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&self.log)
            .args(["-m", "fast", "-o", &self.server_options, "-w", "restart"]));
    }

    /// The server's (postmaster's) process id, from its pid file: the
    /// sessions' processes are its children.
    pub fn server_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }
}

/// A test's database, dropped with it: a binary's hundred tests would
/// otherwise keep a hundred copies of the shop (about 11 MB each) on the
/// disk until the binary exits. Reads as its name.
pub struct Database {
    cluster: &'static Cluster,
    name: String,
}

impl std::ops::Deref for Database {
    type Target = str;

    fn deref(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // FORCE ends the sessions a test's shop still holds open. A drop
        // that fails leaves only disk space, taken back when the binary
        // exits, so it is said and not raised (this may run in a panic).
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(error) = self.cluster.try_psql("postgres", &sql) {
            eprintln!("database {} not dropped: {}", self.name, error.trim());
        }
    }
}

/// Stops the server and removes `dir` once our end of its stdin closes: at
/// the latest when this process exits, however it exits. It runs in a
/// process group of its own, so an interrupt sent to the test's group
/// (Ctrl+C) does not stop it before it has cleaned up.
fn watchdog(bin: &Path, dir: &Path, account: Option<(u32, u32)>) -> (Child, ChildStdin) {
    let mut watchdog = Command::new("sh");
    watchdog
        .arg("-c")
        .arg(
            r#"cat >/dev/null
if [ -f "$2/data/postmaster.pid" ]; then "$1/pg_ctl" -D "$2/data" -m fast -w stop >/dev/null 2>&1; fi
rm -rf "$2""#,
        )
        .arg("watchdog")
        .arg(bin)
        .arg(dir)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some((uid, gid)) = account {
        watchdog.uid(uid).gid(gid);
    }
    let mut child = watchdog.spawn().expect("start the cluster's watchdog");
    let stdin = child.stdin.take().expect("watchdog stdin");
    (child, stdin)
}

fn next_name() -> String {
    format!(
        "shop_{}_{}",
        std::process::id(),
        NEXT_DATABASE.fetch_add(1, Ordering::Relaxed)
    )
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{:?}: {error}. {MISSING}", command.get_program()));
    assert!(
        output.status.success(),
        "{:?} failed: {}{}",
        command.get_program(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
