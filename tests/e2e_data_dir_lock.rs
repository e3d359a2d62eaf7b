//! One app per data directory: a second copy started on a directory in use
//! stops at once with a message, before it opens anything, and the first
//! one's waiting card is still there to decide. Another directory starts.

mod support;

use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use bitselect_assistant::logging::APP_LOG_PREFIX;
use serde_json::json;
use support::model::{ScriptedModel, text, tool_call};
use support::{RunningApp, app_binary, configure_model, leftovers, processes, shop_of};

type TestResult = Result<(), Box<dyn Error>>;

const IPHONE: &str = "MG6W4CH/A";
/// Longest a start or an exit may take before the test fails.
const GUARD: Duration = Duration::from_secs(60);
/// Between two looks at a file or a process that cannot be awaited.
const POLL: Duration = Duration::from_millis(50);

/// The app binary started directly on a data directory; stopped on drop,
/// which fails the test if it or anything it started outlives that.
struct Started {
    child: Child,
    stderr: PathBuf,
    mark: String,
}

impl Started {
    fn spawn(data_dir: &Path, stderr: PathBuf) -> Result<Started, Box<dyn Error>> {
        let mark = processes::new_run_mark();
        let child = Command::new(app_binary())
            .arg("--data-dir")
            .arg(data_dir)
            .env(processes::RUN_MARK_VAR, &mark)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr)?)
            .spawn()?;
        Ok(Started {
            child,
            stderr,
            mark,
        })
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Its exit status, once it has exited; an error if it still runs
    /// after the guard.
    fn wait_exit(&mut self) -> Result<ExitStatus, Box<dyn Error>> {
        let deadline = Instant::now() + GUARD;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                return Err(format!("still running after {GUARD:?}: {}", self.stderr()).into());
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SIGTERM, so the app ends as it would when the session ends.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
            let _ = self.child.wait();
        }
        let leaked = leftovers(&self.mark);
        processes::kill(&leaked);
        if !leaked.is_empty() && !std::thread::panicking() {
            panic!("still running after the app was stopped: {leaked:?}");
        }
    }
}

/// The app's log lines in `data_dir/logs` so far.
fn app_log(data_dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(data_dir.join("logs")) else {
        return String::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(APP_LOG_PREFIX))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect()
}

/// Waits until the app on `data_dir` has logged that its core is open.
fn wait_until_core_opened(started: &mut Started, data_dir: &Path) -> TestResult {
    let deadline = Instant::now() + GUARD;
    while !app_log(data_dir).contains("core opened") {
        if let Some(status) = started.child.try_wait()? {
            return Err(format!("the app exited ({status}): {}", started.stderr()).into());
        }
        if Instant::now() > deadline {
            return Err(format!("no \"core opened\" after {GUARD:?}: {}", started.stderr()).into());
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}

fn phones_in_cart(data_dir: &Path) -> Result<i64, Box<dyn Error>> {
    let cart = shop_of(data_dir)?.query_cart()?;
    Ok(cart
        .lines
        .iter()
        .filter(|line| line.sku_code == IPHONE)
        .map(|line| line.quantity)
        .sum())
}

#[test]
fn a_second_app_on_a_data_directory_in_use_stops_and_the_first_ones_card_stays() -> TestResult {
    let data = tempfile::tempdir()?;
    let scratch = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_cart",
            "bitselect__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        ),
        text("已加入购物车。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let phones_before = phones_in_cart(data.path())?;
    let first = RunningApp::launch(data.path())?;
    first.send_message("把 iPhone 17 加入购物车")?;
    first.asking_call()?;
    let log_before = app_log(data.path());

    let mut second = Started::spawn(data.path(), scratch.path().join("second.stderr"))?;
    let status = second.wait_exit()?;
    let message = second.stderr();
    // The README promises exit status 1 to scripts that start the app.
    assert_eq!(
        status.code(),
        Some(1),
        "the second copy exited with {status}"
    );
    assert!(
        message.contains("already using") && message.contains(&data.path().display().to_string()),
        "the second copy says why it stopped: {message}"
    );
    assert_eq!(
        app_log(data.path()),
        log_before,
        "the second copy wrote nothing to the first one's log"
    );

    // The first app still runs, its card still waits, and approving it
    // adds the phone once.
    let call = first.asking_call()?;
    first.decide(&call, "approve")?;
    first.wait_for_text("[data-testid=message-assistant]", "已加入购物车")?;
    assert_eq!(phones_in_cart(data.path())?, phones_before + 1);

    // Another data directory is not in the first one's way.
    let other = tempfile::tempdir()?;
    let mut third = Started::spawn(other.path(), scratch.path().join("third.stderr"))?;
    wait_until_core_opened(&mut third, other.path())?;
    Ok(())
}
