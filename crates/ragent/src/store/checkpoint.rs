//! WAL checkpoints on a thread of their own. Left to itself, SQLite runs
//! one inside whichever commit takes the log past its threshold, and that
//! commit waits while pages are copied and two files are synced: a user's
//! click would wait for it. Here commits only count, and every
//! [`COMMITS_PER_CHECKPOINT`]th wakes a thread that checkpoints on its own
//! connection without holding up the writer.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// About a thousand log pages at some thirty pages a tool round: the size
/// at which SQLite would checkpoint by itself.
pub const COMMITS_PER_CHECKPOINT: u32 = 32;

#[derive(Debug)]
pub struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    commits: AtomicU32,
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
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || {
                while woken.recv().is_ok() {
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
                thread: Some(thread),
                commits: AtomicU32::new(0),
            }),
            Err(error) => {
                tracing::warn!(%error, "no checkpoint thread; commits will checkpoint");
                None
            }
        }
    }

    /// Notes a commit; every [`COMMITS_PER_CHECKPOINT`]th wakes the thread.
    pub fn committed(&self) {
        let count = self.commits.fetch_add(1, Ordering::Relaxed) + 1;
        if count.is_multiple_of(COMMITS_PER_CHECKPOINT)
            && let Some(wake) = &self.wake
        {
            // Full means a wake is already pending: nothing is lost.
            let _ = wake.try_send(());
        }
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
