//! The database files are readable and writable by their owner only: they
//! hold the conversations and, where no keyring answers, the secrets.
//! SQLite gives a database's `-wal` and `-shm` files the main file's mode,
//! so creating the main file with 0600 before SQLite opens it covers all
//! three, whatever the umask.

use std::path::{Path, PathBuf};

/// Creates `path` empty with mode 0600 if it is missing, or narrows an
/// existing file (an older version's) to 0600.
pub fn prepare(path: &Path) -> std::io::Result<()> {
    sqlite_backups::private_file(path)
}

/// Narrows the `-wal` and `-shm` files, which an older version may have
/// left wider than the main file.
pub fn narrow_companions(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for companion in companions(path) {
            match std::fs::set_permissions(&companion, std::fs::Permissions::from_mode(0o600)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The `-wal` and `-shm` files SQLite keeps beside a database in WAL mode.
pub fn companions(path: &Path) -> [PathBuf; 2] {
    sqlite_backups::companions(path)
}
