//! The pool of the store's PostgreSQL connections. Each connection comes
//! with a small runtime of its own, driven only by the thread that holds
//! the connection: a statement's answer is read by the thread that waits
//! for it and wakes no other. (With one runtime for every connection, each
//! statement crossed to one of its threads and back; under load those
//! wakeups were most of the instance's time in the kernel.)
//!
//! A connection is held by one call at a time, from its first statement to
//! the end of its transaction (its `COMMIT` or `ROLLBACK`, or the end of a
//! read's one statement run on its own), and goes back to the pool only
//! when that ended cleanly. One that the server closed is dropped, and
//! another is opened in its place when a call needs it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio_postgres::{Client, Config, NoTls, Statement};

/// The longest opening a connection may take, its sign-in included.
const OPEN_WITHIN: Duration = Duration::from_secs(10);

/// Why no connection was handed out.
#[derive(Debug)]
pub(super) enum TakeError {
    /// Every connection stayed busy for as long as a call may wait.
    Busy,
    /// A new connection could not be opened.
    Open(String),
}

impl std::fmt::Display for TakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Busy => f.write_str("连接都在用"),
            Self::Open(why) => f.write_str(why),
        }
    }
}

/// One connection to the database, with the runtime that drives it.
pub(super) struct Link {
    client: Client,
    /// Statements prepared on this connection, by the SQL the domain wrote.
    prepared: RefCell<HashMap<String, Arc<Prepared>>>,
    runtime: OwnRuntime,
}

/// A statement prepared on one connection.
pub(super) struct Prepared {
    pub(super) statement: Statement,
    /// A read that began with it went on to other statements.
    leads_on: AtomicBool,
}

impl Prepared {
    /// Whether a read that began with this statement went on to others.
    pub(super) fn leads_on(&self) -> bool {
        self.leads_on.load(Ordering::Relaxed)
    }

    /// Remembers that a read that began with this statement went on to
    /// others.
    pub(super) fn note_leads_on(&self) {
        self.leads_on.store(true, Ordering::Relaxed);
    }
}

/// A runtime dropped without waiting for its tasks: a link may be dropped
/// where blocking is not allowed (a store dropped by an async caller).
struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Link {
    fn open(config: &Config) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("无法启动数据库连接的线程：{e}"))?;
        let client = runtime.block_on(async {
            let (client, connection) = tokio::time::timeout(OPEN_WITHIN, config.connect(NoTls))
                .await
                .map_err(|_| format!("{} 秒内没有连上", OPEN_WITHIN.as_secs()))?
                .map_err(|e| e.to_string())?;
            // Spawned on this link's runtime: it runs whenever the holder
            // waits on the link, and only then.
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "a database connection ended");
                }
            });
            Ok::<_, String>(client)
        })?;
        Ok(Self {
            client,
            prepared: RefCell::new(HashMap::new()),
            runtime: OwnRuntime(Some(runtime)),
        })
    }

    pub(super) fn client(&self) -> &Client {
        &self.client
    }

    /// Runs `future` on this thread, driving the connection meanwhile.
    pub(super) fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        match &self.runtime.0 {
            Some(runtime) => runtime.block_on(future),
            // Some from creation until drop.
            None => unreachable!(),
        }
    }

    /// The statement `sql` prepared on this connection, once: `spell` gives
    /// the text PostgreSQL is sent.
    pub(super) fn prepared(
        &self,
        sql: &str,
        spell: impl FnOnce(&str) -> String,
    ) -> Result<Arc<Prepared>, tokio_postgres::Error> {
        if let Some(prepared) = self.prepared.borrow().get(sql) {
            return Ok(prepared.clone());
        }
        let statement = self.block_on(self.client.prepare(&spell(sql)))?;
        let prepared = Arc::new(Prepared {
            statement,
            leads_on: AtomicBool::new(false),
        });
        self.prepared
            .borrow_mut()
            .insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }

    /// Lets the connection read what the server sent while it sat in the
    /// pool, so that one the server closed meanwhile shows as closed. The
    /// first turn takes in the socket's news, the second runs the
    /// connection on it.
    fn catch_up(&self) {
        self.block_on(async {
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        });
    }
}

/// The pool: up to `size` connections, opened as calls need them.
pub(super) struct Links {
    config: Config,
    size: usize,
    wait: Duration,
    state: Mutex<Pooled>,
    given_back: Condvar,
}

#[derive(Default)]
struct Pooled {
    idle: Vec<Link>,
    /// Connections open, idle or held.
    open: usize,
}

impl Links {
    /// A pool of at most `size` connections to `config`; a call waits
    /// `wait` at most for one.
    pub(super) fn new(config: Config, size: usize, wait: Duration) -> Self {
        Self {
            config,
            size,
            wait,
            state: Mutex::default(),
            given_back: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, Pooled> {
        // The state is a list and a count, whole after any panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection: the one given back last (its statements are the
    /// likeliest prepared), a new one while fewer than `size` are open, or
    /// the first given back within the wait.
    pub(super) fn take(&self) -> Result<Taken<'_>, TakeError> {
        let deadline = Instant::now() + self.wait;
        loop {
            let idle = {
                let mut state = self.state();
                loop {
                    if let Some(link) = state.idle.pop() {
                        break Some(link);
                    }
                    if state.open < self.size {
                        state.open += 1;
                        break None;
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(TakeError::Busy);
                    }
                    state = self
                        .given_back
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            };
            let Some(link) = idle else {
                return match Link::open(&self.config) {
                    Ok(link) => Ok(Taken::of(self, link)),
                    Err(why) => {
                        self.closed_one();
                        Err(TakeError::Open(why))
                    }
                };
            };
            link.catch_up();
            if !link.client.is_closed() {
                return Ok(Taken::of(self, link));
            }
            drop(link);
            self.closed_one();
        }
    }

    fn closed_one(&self) {
        self.state().open -= 1;
        self.given_back.notify_one();
    }

    fn give_back(&self, link: Link) {
        self.state().idle.push(link);
        self.given_back.notify_one();
    }
}

/// A connection held by one call. It goes back to the pool only when the
/// call said its transaction ended ([`Taken::ended`]); dropped otherwise
/// (a panic mid-transaction, a connection that cannot roll back), so no
/// call ever begins inside another's transaction.
pub(super) struct Taken<'a> {
    links: &'a Links,
    link: Option<Link>,
    ended: bool,
}

impl<'a> Taken<'a> {
    fn of(links: &'a Links, link: Link) -> Self {
        Self {
            links,
            link: Some(link),
            ended: false,
        }
    }

    /// The connection is outside any transaction: it may serve another call.
    pub(super) fn ended(&mut self) {
        self.ended = true;
    }
}

impl std::ops::Deref for Taken<'_> {
    type Target = Link;

    fn deref(&self) -> &Link {
        match &self.link {
            Some(link) => link,
            // Some until drop.
            None => unreachable!(),
        }
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let Some(link) = self.link.take() else {
            return;
        };
        if self.ended && !link.client.is_closed() {
            self.links.give_back(link);
        } else {
            drop(link);
            self.links.closed_one();
        }
    }
}
