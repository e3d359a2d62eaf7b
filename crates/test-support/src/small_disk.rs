//! A small filesystem of its own (tmpfs) that a test can fill to the last
//! byte and free again: a data directory on a full disk. Mounting needs
//! root, as CI runs; elsewhere [`SmallDisk::mount`] says why it cannot.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// The filler's name inside the mount.
const FILLER: &str = "filler";

#[derive(Debug, thiserror::Error)]
pub enum SmallDiskError {
    #[error("mounting a filesystem needs root (CI runs as root)")]
    NotRoot,
    #[error("mount failed: {0}")]
    Mount(String),
    #[error("filling the disk failed: {0}")]
    Fill(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A tmpfs of a fixed size mounted on a temporary directory; unmounted
/// when dropped.
pub struct SmallDisk {
    dir: TempDir,
}

impl SmallDisk {
    pub fn mount(megabytes: u32) -> Result<SmallDisk, SmallDiskError> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(SmallDiskError::NotRoot);
        }
        let dir = tempfile::tempdir()?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={megabytes}m,mode=0700"))
            .arg("tmpfs")
            .arg(dir.path())
            .output()?;
        if !out.status.success() {
            return Err(SmallDiskError::Mount(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(SmallDisk { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Takes every free byte: the next write that needs a new block of this
    /// filesystem fails with "no space left on device". Returns the bytes
    /// taken.
    ///
    /// The filler is written by a process of its own (`dd`): were it
    /// written here, a child that another thread of the test forks
    /// meanwhile would hold a copy of its descriptor until that child
    /// execs, and a `free` in that moment would give nothing back.
    pub fn fill(&self) -> Result<u64, SmallDiskError> {
        let out = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", self.filler().display()))
            .args(["bs=64K", "oflag=append", "conv=notrunc"])
            .env("LC_ALL", "C")
            .output()?;
        // dd stops at the first failed write, which here must be ENOSPC.
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() || !stderr.contains("No space left on device") {
            return Err(SmallDiskError::Fill(stderr.trim().to_string()));
        }
        let left = self.available()?;
        if left != 0 {
            return Err(SmallDiskError::Fill(format!("{left} bytes still free")));
        }
        Ok(std::fs::metadata(self.filler())?.len())
    }

    /// Gives back all the filler took.
    pub fn free(&self) -> Result<(), SmallDiskError> {
        match std::fs::remove_file(self.filler()) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error.into()),
            _ => Ok(()),
        }
    }

    /// The bytes still free on the disk.
    pub fn available(&self) -> Result<u64, SmallDiskError> {
        let path = std::ffi::CString::new(self.dir.path().as_os_str().as_encoded_bytes())
            .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidInput, error))?;
        // SAFETY: statvfs only writes into the struct it is given, which
        // is all plain integers and valid zeroed.
        let stats = unsafe {
            let mut stats: libc::statvfs = std::mem::zeroed();
            if libc::statvfs(path.as_ptr(), &mut stats) != 0 {
                return Err(std::io::Error::last_os_error().into());
            }
            stats
        };
        Ok(stats.f_bfree as u64 * stats.f_frsize as u64)
    }

    fn filler(&self) -> PathBuf {
        self.dir.path().join(FILLER)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: a process of the test may still hold a file open.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[test]
    fn freed_space_is_back_at_once_while_another_thread_forks_children() {
        let disk = match SmallDisk::mount(4) {
            Err(SmallDiskError::NotRoot) => return eprintln!("skipped: mounting needs root"),
            mounted => mounted.unwrap(),
        };
        let empty = disk.available().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        // A child with a pre_exec hook is forked, not spawned: it holds
        // copies of this process's descriptors until it execs.
        let forker = std::thread::spawn({
            let done = Arc::clone(&done);
            move || {
                while !done.load(Ordering::Relaxed) {
                    let mut child = Command::new("true");
                    // SAFETY: the hook makes no call at all.
                    unsafe { child.pre_exec(|| Ok(())) };
                    child.status().unwrap();
                }
            }
        });
        for _ in 0..30 {
            assert!(disk.fill().unwrap() > 0);
            assert_eq!(disk.available().unwrap(), 0, "full");
            disk.free().unwrap();
            assert_eq!(disk.available().unwrap(), empty, "all of it back");
        }
        done.store(true, Ordering::Relaxed);
        forker.join().unwrap();
    }
}
