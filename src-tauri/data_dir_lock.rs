//! One app per data directory. A second copy on the same directory would
//! run crash recovery against the first one's live batch, so the directory
//! is locked before anything in it is opened. The lock is the OS's (an
//! exclusive `flock` on `<data-dir>/.lock`, `LockFileEx` on Windows): it
//! goes away with the process however it ends, so no stale file can keep
//! the app from starting. A copy that is still closing (its window gone,
//! its process not yet) is waited for a moment, so closing the app and
//! opening it again at once does not meet a refusal.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// The file locked inside the data directory.
pub const LOCK_FILE: &str = ".lock";

/// How long a start waits for a copy that holds the directory to let go.
pub const CLOSING_GRACE: Duration = Duration::from_secs(5);

/// The name of the thread that waits for the lock, while one waits.
const WAITER_THREAD: &str = "data-dir-lock";

/// Held while the app uses its data directory; dropping it unlocks.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum DataDirLockError {
    #[error(
        "another copy of the app is already using {0}; switch to its window, or start this one with --data-dir set to another directory"
    )]
    InUse(PathBuf),
    #[error("cannot lock the data directory {dir}: {source}")]
    Io {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl DataDirLock {
    /// Creates `dir` if needed and locks it, waiting up to
    /// [`CLOSING_GRACE`] for another process to let go of it.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, DataDirLockError> {
        DataDirLock::acquire_within(dir, CLOSING_GRACE)
    }

    /// Creates `dir` if needed and locks it, or says that another process
    /// still holds it after `grace`.
    pub fn acquire_within(dir: &Path, grace: Duration) -> Result<DataDirLock, DataDirLockError> {
        let io = |source| DataDirLockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        // Never truncated or written: the lock is on the open file, not in it.
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(DataDirLock { _file: file }),
            Err(TryLockError::WouldBlock) => wait_for_lock(file, grace, dir),
            Err(TryLockError::Error(source)) => Err(io(source)),
        }
    }
}

/// Waits on a thread of its own, since std has no lock with a timeout. If
/// the grace runs out the thread stays blocked; should it get the lock
/// later, its send fails and the file, with its lock, is dropped.
fn wait_for_lock(file: File, grace: Duration, dir: &Path) -> Result<DataDirLock, DataDirLockError> {
    let io = |source| DataDirLockError::Io {
        dir: dir.to_path_buf(),
        source,
    };
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name(WAITER_THREAD.into())
        .spawn(move || {
            let locked = file.lock().map(|()| file);
            let _ = sender.send(locked);
        })
        .map_err(io)?;
    match receiver.recv_timeout(grace) {
        Ok(Ok(file)) => Ok(DataDirLock { _file: file }),
        Ok(Err(source)) => Err(io(source)),
        Err(_) => Err(DataDirLockError::InUse(dir.to_path_buf())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = DataDirLock::acquire(dir.path()).unwrap();
        let second = DataDirLock::acquire_within(dir.path(), Duration::from_millis(100));
        assert!(
            matches!(&second, Err(DataDirLockError::InUse(d)) if d == dir.path()),
            "{second:?}"
        );
    }

    #[test]
    fn the_lock_is_free_again_once_its_holder_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        drop(DataDirLock::acquire(dir.path()).unwrap());
        assert!(DataDirLock::acquire(dir.path()).is_ok());
    }

    #[test]
    fn another_directory_is_locked_independently() {
        let one = tempfile::tempdir().unwrap();
        let two = tempfile::tempdir().unwrap();
        let _first = DataDirLock::acquire(one.path()).unwrap();
        assert!(DataDirLock::acquire(two.path()).is_ok());
    }

    #[test]
    fn a_missing_directory_is_created_and_locked() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("new").join("data");
        let _lock = DataDirLock::acquire(&dir).unwrap();
        assert!(dir.join(LOCK_FILE).is_file());
    }

    /// Whether a thread of this process is waiting for a data directory.
    #[cfg(target_os = "linux")]
    fn a_waiter_is_blocked() -> bool {
        std::fs::read_dir("/proc/self/task").unwrap().any(|task| {
            let comm = task.unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|name| name.trim() == WAITER_THREAD)
        })
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_copy_that_lets_go_within_the_grace_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let path = dir.path().to_path_buf();
        let second =
            std::thread::spawn(move || DataDirLock::acquire_within(&path, Duration::from_secs(30)));
        // Let go only once the second start is blocked waiting for the lock.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !a_waiter_is_blocked() {
            assert!(
                std::time::Instant::now() < deadline,
                "the second start never waited"
            );
            std::thread::yield_now();
        }
        drop(first);
        assert!(second.join().unwrap().is_ok());
    }
}
