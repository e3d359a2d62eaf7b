//! Part 5: the desktop app's start-up and memory, beside a bare Tauri window
//! built with the same toolchain and profile (examples/bare-window).
//!
//! Each launch goes through tauri-driver, as the end-to-end tests do, but
//! the driver's own cost is left out: start-up runs from the app process's
//! start (its start time in /proc) to the `interactive` mark its page sets
//! after the first frame the user can act in (performance.timeOrigin plus
//! the mark, read through WebDriver afterwards). Memory is the resident set
//! of the app and every process below it (WebKit's web and network
//! processes, the shop server), read from /proc once the page has settled.

use std::path::{Path, PathBuf};
use std::time::Duration;

use app_driver::{Session, TauriDriver};
use serde_json::json;

use crate::BenchError;
use crate::app_data_dir::AppDataDir;
use crate::results::{Part, Row, load_row};

/// How long the page may settle after its first interactive frame before
/// memory is read: WebKit keeps allocating for a moment after the paint.
const SETTLE: Duration = Duration::from_secs(3);

/// Waits for the page's `interactive` mark and answers its epoch time in ms.
const WAIT_FOR_MARK: &str = r#"
const done = arguments[arguments.length - 1];
const read = () => {
  const mark = performance.getEntriesByName("interactive")[0];
  return mark ? performance.timeOrigin + mark.startTime : null;
};
const now = read();
if (now !== null) { done(now); return; }
new PerformanceObserver((_, observer) => {
  const at = read();
  if (at !== null) { observer.disconnect(); done(at); }
}).observe({ type: "mark", buffered: true });
"#;

/// What one launch measured.
#[derive(Debug, Clone)]
pub struct Launch {
    /// From process start to the first interactive paint.
    pub start_ms: f64,
    /// Resident set summed over the process tree, in KiB.
    pub rss_kib: u64,
    /// Each process of the tree: name and resident set in KiB.
    pub processes: Vec<(String, u64)>,
}

/// A program to launch: the app or the bare window.
pub struct Subject {
    pub name: &'static str,
    pub binary: PathBuf,
    pub args: Vec<String>,
}

/// Launches `subject` once through tauri-driver and measures it.
pub fn launch_once(subject: &Subject) -> Result<Launch, BenchError> {
    let driver = TauriDriver::start().map_err(|e| BenchError::Setup(e.to_string()))?;
    let session = Session::start(
        driver.url(),
        &subject.binary.display().to_string(),
        &subject.args,
    )
    .map_err(|e| BenchError::Run(format!("{}: {e}", subject.name)))?;
    let ready_epoch_ms = session
        .execute_async(WAIT_FOR_MARK, json!([]))
        .map_err(|e| {
            BenchError::Run(format!(
                "{}: waiting for the interactive mark: {e}",
                subject.name
            ))
        })?
        .as_f64()
        .ok_or_else(|| BenchError::Run(format!("{}: the mark was not a time", subject.name)))?;
    let pid = process_below(driver.pid(), &subject.binary)?;
    let started_epoch_ms = process_start_epoch_ms(pid)?;
    std::thread::sleep(SETTLE);
    let processes = process_tree(pid)
        .into_iter()
        .map(|child| Ok((process_name(child)?, rss_kib(child)?)))
        .collect::<Result<Vec<_>, BenchError>>()?;
    let _ = session.close();
    drop(driver);
    Ok(Launch {
        start_ms: ready_epoch_ms - started_epoch_ms,
        rss_kib: processes.iter().map(|(_, kib)| kib).sum(),
        processes,
    })
}

/// The process running `binary` somewhere below `ancestor`.
fn process_below(ancestor: u32, binary: &Path) -> Result<u32, BenchError> {
    let wanted = binary
        .canonicalize()
        .map_err(|e| BenchError::io(binary, e))?;
    process_tree(ancestor)
        .into_iter()
        .find(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .map(|exe| exe == wanted)
                .unwrap_or(false)
        })
        .ok_or_else(|| {
            BenchError::Run(format!(
                "no process of {} below {ancestor}",
                wanted.display()
            ))
        })
}

/// `root` and every process below it.
fn process_tree(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(parent) =
                stat_fields(pid).and_then(|f| f.get(1).and_then(|p| p.parse().ok()))
            {
                parents.push((pid, parent));
            }
        }
    }
    let mut tree = vec![root];
    let mut index = 0;
    while index < tree.len() {
        let parent = tree[index];
        tree.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    tree
}

/// The fields of /proc/<pid>/stat after the command name (which may hold
/// spaces): state, ppid, ... so field n of proc(5) is index n - 3.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    Some(after_name.split(' ').map(str::to_owned).collect())
}

fn process_name(pid: u32) -> Result<String, BenchError> {
    let path = PathBuf::from(format!("/proc/{pid}/comm"));
    std::fs::read_to_string(&path)
        .map(|name| name.trim().to_owned())
        .map_err(|e| BenchError::io(&path, e))
}

fn rss_kib(pid: u32) -> Result<u64, BenchError> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let status = std::fs::read_to_string(&path).map_err(|e| BenchError::io(&path, e))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| BenchError::Run(format!("no VmRSS in {}", path.display())))
}

/// When `pid` started, in ms since the epoch: its start time in clock ticks
/// since boot (proc(5) field 22), placed on the wall clock through the
/// boot-time clock read now. Ticks are 10 ms on Linux.
fn process_start_epoch_ms(pid: u32) -> Result<f64, BenchError> {
    let fields = stat_fields(pid).ok_or_else(|| BenchError::Run(format!("no /proc/{pid}/stat")))?;
    let ticks: f64 = fields
        .get(22 - 3)
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| BenchError::Run(format!("no start time in /proc/{pid}/stat")))?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut boot = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut boot) };
    let now_epoch_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| BenchError::Run(e.to_string()))?
        .as_secs_f64()
        * 1000.0;
    let since_boot_ms = boot.tv_sec as f64 * 1000.0 + boot.tv_nsec as f64 / 1e6;
    Ok(now_epoch_ms - since_boot_ms + ticks / per_second * 1000.0)
}

/// The middle value (nearest rank, as `stats::summarize`).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(f64::NAN)
}

/// Both subjects, `launches` times each, alternating, after one launch of
/// each kept out of the medians. The app's (reported as its first start)
/// is on its fresh data directory `data`: it sets the directory up and
/// shows its first-run page. Then `data` is given a model, as that page
/// would save one, so the launches measured are a returning shopper's.
pub fn run(
    app: &Subject,
    bare: &Subject,
    data: &AppDataDir,
    launches: usize,
) -> Result<Part, BenchError> {
    let first_app = launch_once(app)?;
    data.configure_model()?;
    launch_once(bare)?;
    let mut app_runs = Vec::new();
    let mut bare_runs = Vec::new();
    for launch in 1..=launches {
        app_runs.push(launch_once(app)?);
        data.expect_checks(launch)?;
        bare_runs.push(launch_once(bare)?);
    }
    let mut part = part(&first_app, &app_runs, &bare_runs);
    part.rows.push(load_row());
    Ok(part)
}

fn part(first_app: &Launch, app: &[Launch], bare: &[Launch]) -> Part {
    let start = |runs: &[Launch]| median(&runs.iter().map(|r| r.start_ms).collect::<Vec<_>>());
    let rss = |runs: &[Launch]| median(&runs.iter().map(|r| r.rss_kib as f64).collect::<Vec<_>>());
    let (app_start, bare_start) = (start(app), start(bare));
    let (app_rss, bare_rss) = (rss(app), rss(bare));
    let start_ratio = app_start / bare_start;
    let rss_ratio = app_rss / bare_rss;
    let list = |launch: Option<&Launch>| {
        launch
            .map(|l| {
                l.processes
                    .iter()
                    .map(|(name, kib)| format!("{name} {:.0} MiB", *kib as f64 / 1024.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let n = app.len();
    Part {
        part: "app".into(),
        title: "5. The app: start-up and memory beside a bare Tauri window".into(),
        rows: vec![
            Row::judged(
                "app start, launch to first interactive paint (median)",
                format!("{app_start:.0} ms"),
                "≤ 1500 ms",
                app_start <= 1500.0,
                format!(
                    "{n} launches on a data directory set up with a model (a returning shopper's); process start time has 10 ms ticks"
                ),
            ),
            Row::info(
                "app first start on a fresh data directory",
                format!("{:.0} ms", first_app.start_ms),
                "one launch: creates the core's database and shows the first-run page (the shop starts, and seeds its own, on the first tool call)",
            ),
            Row::info(
                "bare window start (median)",
                format!("{bare_start:.0} ms"),
                format!("{n} launches of examples/bare-window"),
            ),
            Row::judged(
                "start ratio app / bare",
                format!("{start_ratio:.2}x"),
                "≤ 1.1x",
                start_ratio <= 1.1,
                "the two medians above",
            ),
            Row::info(
                "app RSS, all processes (median)",
                format!("{:.0} MiB", app_rss / 1024.0),
                list(app.first()),
            ),
            Row::info(
                "bare window RSS, all processes (median)",
                format!("{:.0} MiB", bare_rss / 1024.0),
                list(bare.first()),
            ),
            Row::judged(
                "RSS ratio app / bare",
                format!("{rss_ratio:.2}x"),
                "≤ 1.1x",
                rss_ratio <= 1.1,
                format!(
                    "read {} s after the first interactive paint",
                    SETTLE.as_secs()
                ),
            ),
        ],
    }
}
