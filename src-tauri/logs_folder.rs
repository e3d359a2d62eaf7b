//! Opens the log directory in the OS's file manager, for "open logs
//! folder" in the settings.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use ragent::protocol::{ErrorCode, ErrorInfo};
use serde::{Serialize, Serializer};

#[derive(Debug, thiserror::Error)]
pub enum OpenFolderError {
    #[error("cannot create the logs folder {dir}: {source}")]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start {opener} to open {dir}: {source}")]
    Spawn {
        opener: &'static str,
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{opener} could not open {dir} (exit status {status})")]
    Refused {
        opener: &'static str,
        dir: PathBuf,
        status: std::process::ExitStatus,
    },
}

/// Reaches the page as `{ code, message }`, like the core's errors.
impl Serialize for OpenFolderError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ErrorInfo::new(ErrorCode::Internal, self.to_string()).serialize(serializer)
    }
}

/// The program that opens a folder (or an address) the way the user's
/// desktop does.
#[cfg(target_os = "macos")]
pub(crate) const OPENER: &str = "open";
#[cfg(target_os = "windows")]
pub(crate) const OPENER: &str = "explorer";
#[cfg(not(any(target_os = "macos", target_os = "windows")))]
pub(crate) const OPENER: &str = "xdg-open";

/// Opens `dir` (created first, so a fresh install has one to show).
pub async fn open(dir: &Path) -> Result<(), OpenFolderError> {
    open_with(OPENER, dir).await
}

async fn open_with(opener: &'static str, dir: &Path) -> Result<(), OpenFolderError> {
    std::fs::create_dir_all(dir).map_err(|source| OpenFolderError::Create {
        dir: dir.to_path_buf(),
        source,
    })?;
    let status = tokio::process::Command::new(opener)
        .arg(OsStr::new(dir))
        .status()
        .await
        .map_err(|source| OpenFolderError::Spawn {
            opener,
            dir: dir.to_path_buf(),
            source,
        })?;
    // Explorer answers 1 even when it opened the folder.
    if status.success() || cfg!(target_os = "windows") {
        Ok(())
    } else {
        Err(OpenFolderError::Refused {
            opener,
            dir: dir.to_path_buf(),
            status,
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_folder_is_created_and_handed_to_the_opener() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("logs");
        // `true` stands in for the desktop's opener: it accepts any path.
        open_with("true", &dir).await.unwrap();
        assert!(dir.is_dir());
    }

    #[tokio::test]
    async fn an_opener_that_fails_is_reported_with_the_folder() {
        let root = tempfile::tempdir().unwrap();
        let error = open_with("false", root.path()).await.unwrap_err();
        assert!(
            matches!(&error, OpenFolderError::Refused { dir, .. } if dir == root.path()),
            "{error}"
        );
        let json = serde_json::to_value(&error).unwrap();
        assert_eq!(json["code"], "internal");
    }
}
