//! The processes one app run started, found again by a mark in their
//! environment: the app, its shop and WebKit's helpers all inherit it from
//! the driver, and keep it when they are reparented away from it. A test
//! ends by waiting for them to exit; one still alive is a leak.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that marks the processes of one app run.
pub const RUN_MARK_VAR: &str = "BITSELECT_TEST_RUN";

/// A mark no other run of any test binary carries.
pub fn new_run_mark() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A live process, as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub parent: u32,
    /// Its command line, arguments joined by spaces.
    pub command: String,
}

impl std::fmt::Display for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (parent {}): {}", self.pid, self.parent, self.command)
    }
}

/// Every live process whose environment has `RUN_MARK_VAR=mark`. A process
/// that has exited (a zombie) has no environment left and is not listed.
pub fn marked_with(mark: &str) -> Vec<Process> {
    let wanted = format!("{RUN_MARK_VAR}={mark}").into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|var| var == wanted))
        })
        .filter_map(describe)
        .collect()
}

fn describe(pid: u32) -> Option<Process> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let command = cmdline
        .split(|b| *b == 0)
        .filter(|arg| !arg.is_empty())
        .map(String::from_utf8_lossy)
        .collect::<Vec<_>>()
        .join(" ");
    // The parent is the fourth field of stat, after the command in parentheses.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let parent = after_name.split_whitespace().nth(1)?.parse().ok()?;
    Some(Process {
        pid,
        parent,
        command,
    })
}

/// Waits up to `limit` for each process to exit, by its pidfd (the kernel
/// says when it ends; nothing is polled); returns those still alive.
pub fn wait_for_exit(processes: Vec<Process>, limit: Duration) -> Vec<Process> {
    let deadline = Instant::now() + limit;
    processes
        .into_iter()
        .filter(|process| !exits_before(process.pid, deadline))
        .collect()
}

fn exits_before(pid: u32, deadline: Instant) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
    let Ok(fd) = i32::try_from(fd) else {
        return true;
    };
    if fd < 0 {
        // ESRCH: it is gone already.
        return true;
    }
    // SAFETY: fd is a descriptor pidfd_open just returned, owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let millis = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready > 0 {
            return true;
        }
        let interrupted =
            ready < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        if !interrupted || millis == 0 {
            return false;
        }
    }
}

/// Sends SIGKILL to each process (what a test leaked must not outlive it).
pub fn kill(processes: &[Process]) {
    signal(processes, libc::SIGKILL);
}

/// Sends SIGTERM to each process: asks it to end, as a session's end does.
pub fn terminate(processes: &[Process]) {
    signal(processes, libc::SIGTERM);
}

fn signal(processes: &[Process], signal: libc::c_int) {
    for process in processes {
        if let Ok(pid) = libc::pid_t::try_from(process.pid) {
            // SAFETY: kill(2) has no memory-safety effects.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

/// Whether `process` runs `program` (its first argument is that path).
pub fn runs(process: &Process, program: &std::path::Path) -> bool {
    process
        .command
        .split(' ')
        .next()
        .is_some_and(|first| std::path::Path::new(first) == program)
}
