//! The real app killed while an approved order is being placed: the shop
//! has placed it, but its answer never reached the core. Started again on
//! the same data, the app finds the call it left running, asks the shop
//! again with the same idempotency key, and shows the one order honestly.

mod support;

use std::error::Error;
use std::time::{Duration, Instant};

use support::model::{ScriptedModel, text};
use support::processes::Process;
use support::purchase::seed_purchase;
use support::{RunningApp, configure_model, newest_order, order_count};

type TestResult = Result<(), Box<dyn Error>>;

/// Longest the shop may take to do what the test waits for.
const GUARD: Duration = Duration::from_secs(30);
/// Between two looks at a pipe or a database, which cannot be awaited.
const POLL: Duration = Duration::from_millis(20);

fn signal(process: &Process, signal: libc::c_int) -> TestResult {
    let pid = libc::pid_t::try_from(process.pid)?;
    // SAFETY: kill(2) has no memory-safety effects.
    if unsafe { libc::kill(pid, signal) } != 0 {
        return Err(format!(
            "signal {signal} to {process}: {}",
            std::io::Error::last_os_error()
        )
        .into());
    }
    Ok(())
}

/// Whether the kernel has stopped `process` (state `T` in /proc).
fn is_stopped(process: &Process) -> Result<bool, Box<dyn Error>> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", process.pid))?;
    // The state follows the command name, which is in parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    Ok(state == Some("T"))
}

/// Stops `process` and waits until it is stopped: a signal is delivered
/// when the process is next scheduled, and until then it may still read
/// the request the test means to hold in its pipe.
fn stop(process: &Process) -> TestResult {
    signal(process, libc::SIGSTOP)?;
    wait_until("the process to stop", || is_stopped(process))
}

/// The pipe that is `fd` of `process`, opened again from our side.
fn pipe_of(process: &Process, fd: u32) -> Result<std::fs::File, Box<dyn Error>> {
    use std::os::unix::fs::OpenOptionsExt;
    Ok(std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/{}/fd/{fd}", process.pid))?)
}

/// How many bytes wait unread in the pipe that is `fd` of `process`.
fn unread_bytes(process: &Process, fd: u32) -> Result<i32, Box<dyn Error>> {
    use std::os::fd::AsRawFd;
    let pipe = pipe_of(process, fd)?;
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int into `unread`, on a descriptor we own.
    if unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut unread) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(unread)
}

/// What waits unread in the pipe that is `fd` of `process`, copied with
/// tee(2) so its reader still reads all of it.
fn peek(process: &Process, fd: u32) -> Result<String, Box<dyn Error>> {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let input = pipe_of(process, fd)?;
    let mut ends = [0; 2];
    // SAFETY: pipe2 fills two descriptors, owned right after.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: both are descriptors pipe2 just created.
    let (copy_out, copy_in) =
        unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    // SAFETY: tee(2) between two pipe descriptors we hold.
    let copied = unsafe {
        libc::tee(
            input.as_raw_fd(),
            copy_in.as_raw_fd(),
            64 * 1024,
            libc::SPLICE_F_NONBLOCK,
        )
    };
    if copied < 0 {
        let error = std::io::Error::last_os_error();
        // Nothing in the pipe to copy.
        if error.kind() == std::io::ErrorKind::WouldBlock {
            return Ok(String::new());
        }
        return Err(error.into());
    }
    drop(copy_in);
    let mut text = String::new();
    std::fs::File::from(copy_out).read_to_string(&mut text)?;
    Ok(text)
}

/// Whether the shop has read everything it was sent and its answers wait,
/// whole, in the app's input. A message is written in more than one piece
/// when it is long: a shop stopped between two pieces would leave the app
/// waiting for the rest, and the app would send nothing more.
fn answered_in_full(shop: &Process) -> Result<bool, Box<dyn Error>> {
    if unread_bytes(shop, 0)? != 0 {
        return Ok(false);
    }
    let answers = peek(shop, 1)?;
    Ok(!answers.is_empty() && answers.ends_with('\n'))
}

/// Stops the shop once its answers wait whole in the app's input; a shop
/// found mid-message when stopped is let go on until it is not.
fn stop_once_answered(shop: &Process) -> TestResult {
    loop {
        wait_until("the shop's whole answer", || answered_in_full(shop))?;
        stop(shop)?;
        if answered_in_full(shop)? {
            return Ok(());
        }
        signal(shop, libc::SIGCONT)?;
    }
}

/// Processes the test holds still, let go when it ends whichever way, so a
/// failed wait reports itself instead of leaving a stopped shop behind.
struct Held<'a>(&'a [&'a Process]);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        for process in self.0 {
            // Gone already (killed) is fine.
            let _ = signal(process, libc::SIGCONT);
        }
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> Result<bool, Box<dyn Error>>) -> TestResult {
    let deadline = Instant::now() + GUARD;
    while !done()? {
        if Instant::now() > deadline {
            let error = format!("still waiting after {GUARD:?} for {what}");
            // Said here too: ending the app after a failure may fail as
            // well, and that failure would be the only one reported.
            eprintln!("{error}");
            return Err(error.into());
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}

fn one_of<'a>(processes: &'a [Process], program: &str) -> Result<&'a Process, Box<dyn Error>> {
    let mut found = processes.iter().filter(|p| {
        p.command
            .split(' ')
            .next()
            .is_some_and(|first| first.ends_with(program))
    });
    match (found.next(), found.next()) {
        (Some(one), None) => Ok(one),
        _ => Err(format!("not exactly one {program} among {processes:?}").into()),
    }
}

#[test]
fn an_app_killed_while_an_approved_order_runs_finds_one_order_and_says_so_after_a_restart()
-> TestResult {
    let data = tempfile::tempdir()?;
    let mut turns = seed_purchase();
    turns.push(text("订单已提交。"));
    let model = ScriptedModel::start(turns)?;
    configure_model(data.path(), model.base_url())?;

    let app = RunningApp::launch(data.path())?;
    app.send_message("帮我买一台 iPhone 17 256GB 黑色，用满 5000 减 300 的券")?;
    let cart_call = app.asking_call()?;
    app.decide(&cart_call, "approve")?;
    let order_call = app.asking_call()?;
    let order_call_id = app
        .session
        .attribute(&order_call, "data-call-id")?
        .ok_or("a call without its id")?;
    let before = order_count(data.path())?;
    let started = app.processes();
    let assistant = one_of(&started, "bitselect-assistant")?.clone();
    let shop = one_of(&started, "bitselect-mcp")?.clone();

    // The shop is held still and lets through, one at a time with the app
    // held, what the core asks before the write (the preview it checks the
    // approval against), until the create_order request itself waits.
    let held = [&assistant, &shop];
    let let_go = Held(&held);
    stop(&shop)?;
    let approve = app.session.find_in(&order_call, "[data-testid=approve]")?;
    app.session.click(&approve)?;
    loop {
        wait_until("a request in the shop's input", || {
            Ok(unread_bytes(&shop, 0)? > 0)
        })?;
        if peek(&shop, 0)?.contains(r#""name":"create_order""#) {
            break;
        }
        stop(&assistant)?;
        signal(&shop, libc::SIGCONT)?;
        stop_once_answered(&shop)?;
        signal(&assistant, libc::SIGCONT)?;
    }
    // Now the app is held and the shop runs the write: the order is placed
    // and its answer waits in a pipe the app never reads.
    stop(&assistant)?;
    signal(&shop, libc::SIGCONT)?;
    wait_until("the order in the shop", || {
        Ok(order_count(data.path())? == before + 1)
    })?;
    wait_until("the shop's answer in the app's input", || {
        answered_in_full(&shop)
    })?;
    signal(&shop, libc::SIGKILL)?;
    signal(&assistant, libc::SIGKILL)?;
    // Both are gone: nothing to let go, and their ids may be reused.
    std::mem::forget(let_go);
    // Ending the session finds the app gone; WebKit's processes follow it.
    drop(app);

    let app = RunningApp::launch(data.path())?;
    let order_line =
        format!("[data-testid=card-call][data-call-id=\"{order_call_id}\"][data-status=succeeded]");
    app.wait_for_element(&order_line)?;
    assert_eq!(
        order_count(data.path())?,
        before + 1,
        "asked again with the same key: still one order"
    );
    let newest = newest_order(data.path())?;
    let order_no = newest["orderNo"]
        .as_str()
        .ok_or("an order without its number")?;
    let shown = app.session.execute(
        "return document.querySelector(arguments[0]).textContent;",
        serde_json::json!([order_line]),
    )?;
    let shown = shown.as_str().unwrap_or_default();
    assert!(
        shown.contains(order_no),
        "the card shows the order the shop placed ({order_no}): {shown}"
    );
    assert_eq!(
        app.session
            .count("[data-testid=card-call][data-status=asking]")?,
        0,
        "nothing asks to be approved again"
    );
    Ok(())
}
