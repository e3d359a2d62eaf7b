//! Faults between the agent and its servers, put in by wrapping the real
//! hub: the app dying right after a call reached its server, an answer
//! lost on the way back, or the disk filling up while a call was out.

use std::sync::Arc;

use futures::future::BoxFuture;
use ragent::mcp::{
    CallListener, CallOutcome, McpError, ServerEntry, ServerStatus, ToolInvocation, ToolListing,
    ToolSource,
};
use tokio::sync::Notify;

use super::WrapTools;

/// Faults between the agent and its servers.
pub enum Fault {
    /// The app dies right after a call of `tool` reached its server: the
    /// server does the work, the answer is never stored.
    HangAfterSend {
        tool: &'static str,
        sent: Arc<Notify>,
    },
    /// The connection breaks after the first call reached its server,
    /// while the app keeps running: that answer is lost on the way back.
    /// With `only`, the first call of that tool.
    LoseFirstAnswer {
        only: Option<&'static str>,
        lost: std::sync::Mutex<bool>,
    },
    /// The disk fills up the moment the first call of `tool` has done its
    /// work at the server, before its answer is back.
    FillDiskAfter {
        tool: &'static str,
        disk: Arc<test_support::small_disk::SmallDisk>,
        filled: std::sync::atomic::AtomicBool,
    },
}

pub struct Faulty {
    inner: Arc<dyn ToolSource>,
    fault: Fault,
}

impl ToolSource for Faulty {
    fn configure(&self, servers: Vec<ServerEntry>) -> BoxFuture<'_, ()> {
        self.inner.configure(servers)
    }

    fn list_tools(&self) -> BoxFuture<'_, ToolListing> {
        self.inner.list_tools()
    }

    fn call_tool<'a>(
        &'a self,
        call: ToolInvocation,
        listener: &'a dyn CallListener,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        Box::pin(async move {
            match &self.fault {
                Fault::HangAfterSend { tool, sent } if call.tool == *tool => {
                    let done = self.inner.call_tool(call, listener).await;
                    assert!(done.is_ok(), "the server did the work: {done:?}");
                    sent.notify_one();
                    futures::future::pending().await
                }
                Fault::LoseFirstAnswer { only, lost }
                    if only.is_none_or(|tool| call.tool == tool) =>
                {
                    let server = call.server.clone();
                    let answer = self.inner.call_tool(call, listener).await;
                    let mut lost = lost.lock().unwrap();
                    if *lost {
                        return answer;
                    }
                    *lost = true;
                    Err(McpError::Stopped {
                        server,
                        message: "connection reset".into(),
                    })
                }
                Fault::FillDiskAfter { tool, disk, filled } if call.tool == *tool => {
                    let answer = self.inner.call_tool(call, listener).await;
                    if !filled.swap(true, std::sync::atomic::Ordering::SeqCst) {
                        disk.fill().unwrap();
                    }
                    answer
                }
                Fault::HangAfterSend { .. }
                | Fault::LoseFirstAnswer { .. }
                | Fault::FillDiskAfter { .. } => self.inner.call_tool(call, listener).await,
            }
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

pub fn faulty(fault: Fault) -> WrapTools {
    Box::new(move |inner| Arc::new(Faulty { inner, fault }))
}

pub fn crashing(tool: &'static str, sent: Arc<Notify>) -> WrapTools {
    faulty(Fault::HangAfterSend { tool, sent })
}
