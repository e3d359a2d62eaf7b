//! Copies of a SQLite database kept beside it, and the start that finds
//! it damaged: shared by the assistant's database and the shop's.
//!
//! A copy is made with SQLite's online backup (a consistent snapshot while
//! the app runs) into `backups/` next to the database: at a start when the
//! newest copy is a day old or there is none, and before every schema
//! upgrade. The newest [`KEEP`] are kept; like the database they are its
//! owner's alone (they hold the conversations, and the secrets when no
//! keyring answers).
//!
//! At start the database is checked (`PRAGMA quick_check`). A damaged one
//! (truncated, overwritten, not a database at all) is never opened as if
//! it were empty and never deleted: it is moved, with its `-wal` and
//! `-shm`, into `damaged/`, and the newest copy that checks out is put in
//! its place. What was done is kept as a [`DatabaseRestored`] for the app
//! to tell the user: which copy (and from when), or that none was usable
//! and the app starts afresh, and where the damaged file is.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

/// The folder of copies, beside the database.
pub const BACKUP_DIR: &str = "backups";

/// The folder damaged databases are moved to, beside the database.
pub const DAMAGED_DIR: &str = "damaged";

/// How many copies are kept.
pub const KEEP: usize = 7;

/// How old the newest copy may be before a start makes another.
pub const EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// Which database a report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Database {
    /// The assistant's own: conversations, cards, settings.
    Assistant,
    /// The local shop's: its catalogue, cart and orders.
    Shop,
}

/// What a start did about a damaged database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DatabaseRestored {
    pub database: Database,
    /// Where the damaged file was moved.
    pub damaged_kept_at: String,
    /// What SQLite found wrong with it.
    pub problem: String,
    /// When the copy put in its place was made (ms since the Unix epoch);
    /// `None`: no usable copy, the app started with an empty database.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub restored_from: Option<i64>,
}

/// Why a copy could not be made or the damage dealt with.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("cannot keep a copy of the database in {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot copy the database: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BackupError + '_ {
    move |source| BackupError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What is wrong with the database at `path`, if anything: it cannot be
/// opened as a database, or SQLite's quick check finds damage.
pub fn damage(path: &Path) -> Option<String> {
    let conn = match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        Ok(conn) => conn,
        Err(error) => return Some(error.to_string()),
    };
    let verdict: Result<Vec<String>, rusqlite::Error> = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get::<_, String>(0))?
                .collect()
        });
    match verdict {
        Ok(lines) if lines.len() == 1 && lines[0] == "ok" => None,
        Ok(lines) => Some(lines.join("; ")),
        Err(error) => Some(error.to_string()),
    }
}

/// At start, before the database at `path` is opened: a damaged one is
/// moved aside and the newest good copy put in its place.
pub fn restore_if_damaged(
    database: Database,
    path: &Path,
) -> Result<Option<DatabaseRestored>, BackupError> {
    if !path.is_file() || std::fs::metadata(path).map_err(io(path))?.len() == 0 {
        return Ok(None);
    }
    let Some(problem) = damage(path) else {
        return Ok(None);
    };
    tracing::error!(path = %path.display(), %problem, "the database is damaged");
    let kept = keep_damaged(path)?;
    let mut restored_from = None;
    for (copy, taken_at) in copies(path) {
        if let Some(why) = damage(&copy) {
            tracing::warn!(copy = %copy.display(), %why, "a copy is damaged too; trying an older one");
            continue;
        }
        std::fs::copy(&copy, path).map_err(io(path))?;
        private_file(path).map_err(io(path))?;
        restored_from = Some(taken_at);
        tracing::warn!(copy = %copy.display(), taken_at, "the database was restored from a copy");
        break;
    }
    if restored_from.is_none() {
        tracing::warn!("no usable copy of the database: starting with an empty one");
    }
    Ok(Some(DatabaseRestored {
        database,
        damaged_kept_at: kept.display().to_string(),
        problem,
        restored_from,
    }))
}

/// Moves the database at `path` and its companions into `damaged/`, named
/// by the time; returns where the database went.
fn keep_damaged(path: &Path) -> Result<PathBuf, BackupError> {
    let dir = beside(path, DAMAGED_DIR);
    private_dir(&dir)?;
    let kept = dir.join(format!("{}-{}", millis(SystemTime::now()), file_name(path)));
    std::fs::rename(path, &kept).map_err(io(&kept))?;
    for companion in companions(path) {
        if companion.exists() {
            let mut moved = kept.as_os_str().to_owned();
            moved.push(
                companion
                    .to_string_lossy()
                    .trim_start_matches(&*path.to_string_lossy()),
            );
            std::fs::rename(&companion, PathBuf::from(moved)).map_err(io(&companion))?;
        }
    }
    Ok(kept)
}

/// Makes a copy of the database `conn` has open at `path`, labelled
/// `why`; keeps the newest [`KEEP`].
pub fn back_up(conn: &Connection, path: &Path, why: &str) -> Result<PathBuf, BackupError> {
    let dir = beside(path, BACKUP_DIR);
    private_dir(&dir)?;
    let copy = dir.join(format!(
        "{}-{why}-{}",
        millis(SystemTime::now()),
        file_name(path)
    ));
    private_file(&copy).map_err(io(&copy))?;
    conn.backup(
        rusqlite::MAIN_DB,
        &copy,
        None::<fn(rusqlite::backup::Progress)>,
    )?;
    for (old, _) in copies(path).into_iter().skip(KEEP) {
        std::fs::remove_file(&old).map_err(io(&old))?;
    }
    Ok(copy)
}

/// Makes a copy when the newest is older than [`EVERY`] or there is none.
pub fn back_up_if_due(conn: &Connection, path: &Path) -> Result<Option<PathBuf>, BackupError> {
    let now = millis(SystemTime::now());
    let due = copies(path)
        .first()
        .is_none_or(|(_, taken_at)| now - taken_at >= EVERY.as_millis() as i64);
    due.then(|| back_up(conn, path, "daily")).transpose()
}

/// When the next day's copy of the database at `path` is due (ms since
/// the Unix epoch): a day after the newest, or now when there is none.
pub fn next_due(path: &Path) -> i64 {
    copies(path).first().map_or_else(
        || millis(SystemTime::now()),
        |(_, taken_at)| taken_at + EVERY.as_millis() as i64,
    )
}

/// Now, in ms since the Unix epoch, as copies are named.
pub fn now_ms() -> i64 {
    millis(SystemTime::now())
}

/// The copies of the database at `path`, the newest first, each with when
/// it was made.
pub fn copies(path: &Path) -> Vec<(PathBuf, i64)> {
    let suffix = format!("-{}", file_name(path));
    let Ok(entries) = std::fs::read_dir(beside(path, BACKUP_DIR)) else {
        return Vec::new();
    };
    let mut copies: Vec<(PathBuf, i64)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let stem = name.strip_suffix(&suffix)?;
            let taken_at = stem.split('-').next()?.parse().ok()?;
            Some((entry.path(), taken_at))
        })
        .collect();
    copies.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    copies
}

/// Creates `path` empty with mode 0600 if it is missing, or narrows an
/// existing file to 0600: a database and its copies are their owner's
/// alone. SQLite gives the `-wal` and `-shm` the main file's mode.
pub fn private_file(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The `-wal` and `-shm` files SQLite keeps beside a database in WAL mode.
pub fn companions(path: &Path) -> [PathBuf; 2] {
    let with = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    [with("-wal"), with("-shm")]
}

fn beside(path: &Path, dir: &str) -> PathBuf {
    path.parent().unwrap_or(Path::new(".")).join(dir)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "database".to_owned())
}

fn private_dir(dir: &Path) -> Result<(), BackupError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io(dir))?;
    }
    Ok(())
}

fn millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database_with(path: &Path, note: &str) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
            .unwrap();
        conn.execute("INSERT INTO notes VALUES (?1)", [note])
            .unwrap();
        conn
    }

    fn notes(path: &Path) -> Vec<String> {
        let conn = Connection::open(path).unwrap();
        let mut statement = conn
            .prepare("SELECT text FROM notes ORDER BY rowid")
            .unwrap();
        statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn damage_file(path: &Path) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes.truncate(bytes.len() / 2);
        bytes[..16].copy_from_slice(b"not a database!\0");
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_good_database_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("assistant.db");
        drop(database_with(&path, "kept"));
        assert_eq!(damage(&path), None);
        assert_eq!(
            restore_if_damaged(Database::Assistant, &path).unwrap(),
            None
        );
        assert_eq!(notes(&path), ["kept"]);
    }

    #[test]
    fn a_damaged_database_is_kept_aside_and_the_newest_good_copy_takes_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("assistant.db");
        let conn = database_with(&path, "monday");
        back_up(&conn, &path, "daily").unwrap();
        std::thread::sleep(Duration::from_millis(2));
        conn.execute("INSERT INTO notes VALUES ('tuesday')", [])
            .unwrap();
        let tuesday = back_up(&conn, &path, "daily").unwrap();
        conn.execute("INSERT INTO notes VALUES ('wednesday')", [])
            .unwrap();
        drop(conn);
        damage_file(&path);

        let restored = restore_if_damaged(Database::Assistant, &path)
            .unwrap()
            .expect("restored");
        let taken_at = copies(&path)[0].1;
        assert_eq!(copies(&path)[0].0, tuesday);
        assert_eq!(restored.restored_from, Some(taken_at));
        assert_eq!(notes(&path), ["monday", "tuesday"], "the newest copy's");
        let kept = PathBuf::from(&restored.damaged_kept_at);
        assert!(kept.starts_with(dir.path().join(DAMAGED_DIR)));
        assert!(
            damage(&kept).is_some(),
            "the damaged file itself, not deleted"
        );
    }

    #[test]
    fn with_no_good_copy_the_start_is_afresh_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("assistant.db");
        let conn = database_with(&path, "only");
        let copy = back_up(&conn, &path, "daily").unwrap();
        drop(conn);
        damage_file(&copy);
        damage_file(&path);
        let restored = restore_if_damaged(Database::Assistant, &path)
            .unwrap()
            .expect("told");
        assert_eq!(restored.restored_from, None);
        assert!(!path.exists(), "nothing damaged left where the app opens");
    }

    #[test]
    fn only_the_newest_copies_are_kept_and_only_their_owner_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("assistant.db");
        let conn = database_with(&path, "x");
        for _ in 0..KEEP + 3 {
            back_up(&conn, &path, "daily").unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        let kept = copies(&path);
        assert_eq!(kept.len(), KEEP);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&kept[0].0).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(
            back_up_if_due(&conn, &path).unwrap(),
            None,
            "one was made moments ago"
        );
    }
}
