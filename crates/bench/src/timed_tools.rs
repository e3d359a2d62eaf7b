//! The agent's real MCP hub, wrapped to time what the client sees: each
//! tool call (sent to result back) and each tool listing. These times are
//! the tool's share of a round; the rest of the round is the model's or
//! the agent's own.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use ragent::mcp::{
    CallListener, CallOutcome, McpError, ServerEntry, ServerStatus, ToolInvocation, ToolListing,
    ToolSource,
};

/// One timed operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    pub started: Instant,
    pub took: Duration,
    /// The tool's name, or empty for a listing.
    pub tool: String,
    /// The call's idempotency key (our call id), when it carried one.
    pub key: Option<String>,
}

#[derive(Default)]
struct Log {
    calls: Vec<Timed>,
    listings: Vec<Timed>,
}

pub struct TimedTools {
    inner: Arc<dyn ToolSource>,
    log: Mutex<Log>,
}

impl TimedTools {
    pub fn new(inner: Arc<dyn ToolSource>) -> Self {
        TimedTools {
            inner,
            log: Mutex::new(Log::default()),
        }
    }

    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Tool calls and listings so far; forgets them.
    pub fn take(&self) -> (Vec<Timed>, Vec<Timed>) {
        let mut log = self.log();
        (
            std::mem::take(&mut log.calls),
            std::mem::take(&mut log.listings),
        )
    }
}

impl ToolSource for TimedTools {
    fn configure(&self, servers: Vec<ServerEntry>) -> BoxFuture<'_, ()> {
        self.inner.configure(servers)
    }

    fn list_tools(&self) -> BoxFuture<'_, ToolListing> {
        Box::pin(async move {
            let started = Instant::now();
            let listing = self.inner.list_tools().await;
            let took = started.elapsed();
            self.log().listings.push(Timed {
                started,
                took,
                tool: String::new(),
                key: None,
            });
            listing
        })
    }

    fn call_tool<'a>(
        &'a self,
        call: ToolInvocation,
        listener: &'a dyn CallListener,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        Box::pin(async move {
            let tool = call.tool.clone();
            let key = call.idempotency_key.clone();
            let started = Instant::now();
            let outcome = self.inner.call_tool(call, listener).await;
            let took = started.elapsed();
            self.log().calls.push(Timed {
                started,
                took,
                tool,
                key,
            });
            outcome
        })
    }

    fn honours_idempotency_keys<'a>(
        &'a self,
        server: &'a str,
    ) -> BoxFuture<'a, Result<bool, McpError>> {
        self.inner.honours_idempotency_keys(server)
    }

    fn status(&self) -> BoxFuture<'_, Vec<ServerStatus>> {
        self.inner.status()
    }

    fn disconnect<'a>(&'a self, server: &'a str) -> BoxFuture<'a, ()> {
        self.inner.disconnect(server)
    }
}
