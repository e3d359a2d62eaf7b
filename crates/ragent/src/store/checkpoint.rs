//! WAL checkpoints, kept off the writer's path. Left to itself, SQLite runs
//! one inside whichever commit takes the log past its threshold, and that
//! commit waits while a thousand pages are copied and two files are synced:
//! a user's click would wait for it. Here the writer only watches the log's
//! length after each commit; every [`WAKE_EVERY_PAGES`] new pages wake a
//! thread that copies them on its own connection without holding it up.
//!
//! Copying alone does not shorten the log: SQLite starts it over only when
//! a commit begins with every page already copied, and while commits keep
//! coming (a run of tool rounds) that moment may never come, so the log
//! would grow without end and every commit would extend the file. So the
//! commit that takes the log past [`RESTART_AT_PAGES`] finishes with a
//! RESTART checkpoint: by then the thread has copied nearly everything, the
//! rest is a few pages and a sync, and the next commit writes the log from
//! its beginning. SQLite refuses a second checkpoint while one runs, so the
//! commit first waits for the thread's copy to end.

use std::path::Path;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;

/// New log pages between two checkpoints on the thread: some twenty tool
/// rounds.
pub const WAKE_EVERY_PAGES: i32 = 256;

/// Log length at which the writer makes the log start over: SQLite's own
/// checkpoint threshold, some four megabytes.
pub const RESTART_AT_PAGES: i32 = 1000;

#[derive(Debug)]
pub struct Checkpointer {
    wake: Option<SyncSender<()>>,
    /// Held by the thread while it copies.
    copying: Arc<Mutex<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread on a connection of its own to `path`; `None` if
    /// that cannot be done, and SQLite keeps checkpointing in commits.
    pub fn start(path: &Path) -> Option<Checkpointer> {
        let conn = match Connection::open(path) {
            Ok(conn) => conn,
            Err(error) => {
                tracing::warn!(%error, "no checkpoint connection; commits will checkpoint");
                return None;
            }
        };
        if let Err(error) = conn.busy_timeout(Duration::from_secs(5)) {
            tracing::warn!(%error, "no busy timeout on the checkpoint connection");
        }
        // One pending wake is enough: a checkpoint copies everything so far.
        let (wake, woken) = sync_channel::<()>(1);
        let copying = Arc::new(Mutex::new(()));
        let copying_on_thread = Arc::clone(&copying);
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    let _copying = copying_on_thread
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    // PASSIVE: copies what it can without waiting for the writer.
                    if let Err(error) =
                        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                    {
                        tracing::warn!(%error, "WAL checkpoint failed");
                    }
                }
            });
        match thread {
            Ok(thread) => Some(Checkpointer {
                wake: Some(wake),
                copying,
                thread: Some(thread),
            }),
            Err(error) => {
                tracing::warn!(%error, "no checkpoint thread; commits will checkpoint");
                None
            }
        }
    }

    /// Keeps the thread from starting a checkpoint while the guard lives
    /// (and waits for one under way to end).
    pub fn hold(&self) -> std::sync::MutexGuard<'_, ()> {
        self.copying.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes over checkpointing from `writer`'s commits. The hook holds a
    /// wake of its own: drop the writer before the checkpointer, or the
    /// thread waits for it forever.
    pub fn watch(&self, writer: &mut Connection) -> rusqlite::Result<()> {
        let Some(wake) = self.wake.clone() else {
            return Ok(());
        };
        // This pragma replaces any log hook, so it goes first.
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        let copying = Arc::clone(&self.copying);
        let mut log = LogWatch::default();
        writer.wal_hook(Some(move |wal: &mut Wal, pages: i32| {
            match log.after_commit(pages) {
                Step::Nothing => {}
                Step::Wake => {
                    // Full means a wake is already pending: nothing is lost.
                    let _ = wake.try_send(());
                }
                Step::Restart => {
                    let _copying = copying.lock().unwrap_or_else(PoisonError::into_inner);
                    // The commit itself has happened: an error here must not
                    // make it look failed, so it is only logged, and the
                    // next commit tries again.
                    if let Err(error) = wal.checkpoint_v2(CheckpointMode::RESTART) {
                        tracing::warn!(%error, pages, "the log could not start over");
                    }
                }
            }
            Ok(())
        }))
    }
}

/// What the writer does after a commit, given the log's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Nothing,
    Wake,
    Restart,
}

/// The log's length at the last wake of the thread.
#[derive(Debug, Default)]
struct LogWatch {
    woken_at: i32,
}

impl LogWatch {
    fn after_commit(&mut self, pages: i32) -> Step {
        if pages >= RESTART_AT_PAGES {
            self.woken_at = 0;
            return Step::Restart;
        }
        if pages < self.woken_at {
            // The log started over.
            self.woken_at = 0;
        }
        if pages - self.woken_at >= WAKE_EVERY_PAGES {
            self.woken_at = pages;
            return Step::Wake;
        }
        Step::Nothing
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Closing the channel ends the thread after its current checkpoint.
        self.wake.take();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the checkpoint thread panicked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_is_woken_every_so_many_new_pages() {
        let mut log = LogWatch::default();
        assert_eq!(log.after_commit(WAKE_EVERY_PAGES - 1), Step::Nothing);
        assert_eq!(log.after_commit(WAKE_EVERY_PAGES + 3), Step::Wake);
        assert_eq!(log.after_commit(2 * WAKE_EVERY_PAGES), Step::Nothing);
        assert_eq!(log.after_commit(2 * WAKE_EVERY_PAGES + 3), Step::Wake);
        // The log started over by itself: counting starts again.
        assert_eq!(log.after_commit(5), Step::Nothing);
        assert_eq!(log.after_commit(WAKE_EVERY_PAGES + 5), Step::Wake);
    }

    #[test]
    fn a_long_log_is_made_to_start_over() {
        let mut log = LogWatch::default();
        assert_eq!(log.after_commit(RESTART_AT_PAGES), Step::Restart);
        assert_eq!(log.after_commit(3), Step::Nothing);
        assert_eq!(log.after_commit(WAKE_EVERY_PAGES + 3), Step::Wake);
    }
}
