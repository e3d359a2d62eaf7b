//! A small filesystem of its own (tmpfs) that a test can fill to the last
//! byte and free again: a data directory on a full disk. Mounting needs
//! root, as CI runs; elsewhere [`SmallDisk::mount`] says why it cannot.

use std::io::Write;
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
    pub fn fill(&self) -> Result<u64, SmallDiskError> {
        let mut filler = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.filler())?;
        let mut taken = 0;
        // Large blocks first, then single bytes for what a block left.
        for block in [1 << 16, 1] {
            let bytes = vec![0u8; block];
            loop {
                match filler.write_all(&bytes).and_then(|()| filler.flush()) {
                    Ok(()) => taken += block as u64,
                    Err(error) if error.raw_os_error() == Some(libc::ENOSPC) => break,
                    Err(error) => return Err(error.into()),
                }
            }
        }
        Ok(taken)
    }

    /// Gives back all the filler took.
    pub fn free(&self) -> Result<(), SmallDiskError> {
        match std::fs::remove_file(self.filler()) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error.into()),
            _ => Ok(()),
        }
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
