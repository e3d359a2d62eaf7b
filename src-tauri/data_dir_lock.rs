//! One app per data directory. A second copy on the same directory would
//! run crash recovery against the first one's live batch, so the directory
//! is locked before anything in it is opened. The lock is the OS's (an
//! exclusive `flock` on `<data-dir>/.lock`, `LockFileEx` on Windows): it
//! goes away with the process however it ends, so no stale file can keep
//! the app from starting.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The file locked inside the data directory.
pub const LOCK_FILE: &str = ".lock";

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
    /// Creates `dir` if needed and locks it, or says that another process
    /// holds it. Never waits.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, DataDirLockError> {
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
            Err(TryLockError::WouldBlock) => Err(DataDirLockError::InUse(dir.to_path_buf())),
            Err(TryLockError::Error(source)) => Err(io(source)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = DataDirLock::acquire(dir.path()).unwrap();
        let second = DataDirLock::acquire(dir.path());
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
}
