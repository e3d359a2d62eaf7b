//! The registry of running MCP servers. A server is started on first use
//! and started again on the next use after it stopped; tools are looked up
//! by exact `(server, tool)`, never by a bare tool name.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

// The tokio clock: a paused test moves it.
use tokio::time::Instant;

use futures::future::{BoxFuture, join_all};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotificationParam, ClientRequest, MetaObject, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, RwLock};

use super::asks::CallRoute;
use super::client::ProgressWatch;
use super::connect::{ConnectError, McpClient};
use super::pin::merchant_tool;
use super::seen_tools::SeenTools;
use super::{
    CallAnswer, CallListener, CallOutcome, IDEMPOTENCY_KEY, InputRequired, McpError, ServerEntry,
    ServerPaused, ServerProblem, ServerStatus, SignInStatus, ToolInfo, ToolInvocation, ToolListing,
    ToolOutput, ToolSource,
};
use crate::protocol::CallProgress;
use crate::ucp::binding::with_meta;

/// Time limits for servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubOptions {
    pub start_timeout: Duration,
    pub list_timeout: Duration,
    pub call_timeout: Duration,
    /// After a failed start, uses within this time fail at once instead of
    /// waiting for the server again (a broken server must not slow every
    /// turn); it doubles with each failed start in a row, up to
    /// [`MAX_START_PAUSE`].
    pub retry_start_after: Duration,
}

/// The longest pause between two starts of a server that keeps failing.
pub const MAX_START_PAUSE: Duration = Duration::from_secs(300);

/// A server that stops sooner than this after its start stopped "soon":
/// stops like that in a row pause its next start as failed starts do. One
/// that ran longer is started again at once.
pub const STEADY_AFTER: Duration = Duration::from_secs(60);

/// The pause after the `failed`-th failed start in a row.
fn start_pause(base: Duration, failed: u32) -> Duration {
    let doublings = failed.saturating_sub(1).min(16);
    base.saturating_mul(1 << doublings)
        .min(MAX_START_PAUSE.max(base))
}

impl Default for HubOptions {
    fn default() -> Self {
        HubOptions {
            start_timeout: Duration::from_secs(30),
            list_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
            retry_start_after: Duration::from_secs(15),
        }
    }
}

struct Live {
    client: McpClient,
    pid: Option<u32>,
    honours_keys: bool,
    started: Instant,
}

impl Live {
    fn is_up(&self) -> bool {
        !self.client.is_closed() && !self.client.peer().is_transport_closed()
    }
}

/// No start is tried before `until`: the server failed `failures` times in
/// a row, the last time for `problem`.
struct Pause {
    until: Instant,
    failures: u32,
    problem: String,
}

#[derive(Default)]
struct SlotState {
    live: Option<Arc<Live>>,
    restarts: u32,
    /// Set when a request found the connection broken; the next use
    /// restarts the server and says why.
    broken: Option<String>,
    /// Why the server stopped, told once it is started again.
    stopped: Option<String>,
    /// After failed starts, or stops soon after starting.
    pause: Option<Pause>,
    /// Failed starts since the server last started.
    failed_starts: u32,
    /// Stops in a row, each within [`STEADY_AFTER`] of its start.
    stops_soon: u32,
    /// The last start was answered with "sign in first".
    needs_sign_in: bool,
}

impl SlotState {
    /// A start failed: no other is tried until a pause that doubles with
    /// each failure in a row, so a server that exits at start is not
    /// started again on every use.
    fn hold_after_failed_start(&mut self, options: &HubOptions, message: &str) {
        self.failed_starts = self.failed_starts.saturating_add(1);
        self.pause_for(options, self.failed_starts, message);
        tracing::warn!(failed_starts = self.failed_starts, %message, "MCP server failed to start");
    }

    /// The running server stopped after running for `ran`. The first stop
    /// is restarted at once; a server that keeps stopping soon after its
    /// start waits as one that keeps failing to start does, so a server
    /// that dies on every call is not restarted on every use.
    fn note_stop(&mut self, options: &HubOptions, ran: Duration, reason: String) {
        self.stops_soon = if ran < STEADY_AFTER {
            self.stops_soon.saturating_add(1)
        } else {
            1
        };
        if self.stops_soon > 1 {
            self.pause_for(options, self.stops_soon - 1, &reason);
        }
        tracing::warn!(stops_soon = self.stops_soon, ran_s = ran.as_secs(), %reason,
                       "MCP server stopped");
        self.stopped = Some(reason);
    }

    fn pause_for(&mut self, options: &HubOptions, failures: u32, problem: &str) {
        let pause = start_pause(options.retry_start_after, failures);
        self.pause = Some(Pause {
            until: Instant::now() + pause,
            failures,
            problem: problem.to_owned(),
        });
    }

    /// Whole seconds until the next start may be tried, while paused.
    fn next_try_in(&self) -> Option<u64> {
        let pause = self.pause.as_ref()?;
        let left = pause.until.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| left.as_secs_f64().ceil() as u64)
    }
}

struct Slot {
    entry: ServerEntry,
    state: Mutex<SlotState>,
    /// The server's tools as last listed: an unchanged definition's view
    /// is not worked out again every turn.
    seen: SeenTools,
}

impl Slot {
    /// A live connection, starting the server if it is not running. The
    /// second value says why it had to be started again, if it had.
    async fn live(&self, options: &HubOptions) -> Result<(Arc<Live>, Option<String>), McpError> {
        let mut state = self.state.lock().await;
        let broken = state.broken.take();
        if let Some(live) = state.live.take() {
            if live.is_up() && broken.is_none() {
                state.live = Some(live.clone());
                return Ok((live, None));
            }
            live.client.cancellation_token().cancel();
            let reason = broken.unwrap_or_else(|| "the server had stopped".to_string());
            state.note_stop(options, live.started.elapsed(), reason);
        }
        let name = self.entry.name.clone();
        if let (Some(pause), Some(retry_in_secs)) = (&state.pause, state.next_try_in()) {
            return Err(McpError::Paused {
                server: name,
                failures: pause.failures,
                retry_in_secs,
                problem: pause.problem.clone(),
            });
        }
        let connected =
            match tokio::time::timeout(options.start_timeout, self.entry.connector.connect()).await
            {
                Ok(Ok(connected)) => connected,
                // Not a failure to hold against the server: once the user
                // has signed in, the next use connects at once.
                Ok(Err(ConnectError::NeedsSignIn)) => {
                    state.needs_sign_in = true;
                    return Err(McpError::NeedsSignIn { server: name });
                }
                Ok(Err(ConnectError::Failed(message))) => {
                    state.hold_after_failed_start(options, &message);
                    return Err(McpError::Start {
                        server: name,
                        message,
                    });
                }
                Err(_) => {
                    let message = format!("no answer within {} s", options.start_timeout.as_secs());
                    state.hold_after_failed_start(options, &message);
                    return Err(McpError::Start {
                        server: name,
                        message,
                    });
                }
            };
        state.pause = None;
        state.failed_starts = 0;
        state.needs_sign_in = false;
        let restart_reason = state.stopped.take();
        let honours_keys = connected
            .client
            .peer()
            .peer_info()
            .and_then(|info| info.capabilities.experimental.clone())
            .is_some_and(|experimental| experimental.contains_key(IDEMPOTENCY_KEY));
        let live = Arc::new(Live {
            client: connected.client,
            pid: connected.pid,
            honours_keys,
            started: Instant::now(),
        });
        if let Some(reason) = &restart_reason {
            state.restarts += 1;
            tracing::warn!(server = %name, %reason, "restarted MCP server");
        } else {
            tracing::info!(server = %name, honours_keys, "started MCP server");
        }
        state.live = Some(live.clone());
        Ok((live, restart_reason))
    }

    async fn mark_broken(&self, reason: String) {
        self.state.lock().await.broken = Some(reason);
    }

    async fn shut_down(&self) {
        let mut state = self.state.lock().await;
        state.needs_sign_in = false;
        if let Some(live) = state.live.take() {
            live.client.cancellation_token().cancel();
        }
    }
}

/// Real MCP servers behind the [`ToolSource`] interface.
pub struct McpHub {
    slots: RwLock<BTreeMap<String, Arc<Slot>>>,
    options: HubOptions,
}

impl McpHub {
    pub fn new(options: HubOptions) -> Self {
        McpHub {
            slots: RwLock::new(BTreeMap::new()),
            options,
        }
    }

    async fn slot(&self, server: &str) -> Result<Arc<Slot>, McpError> {
        self.slots
            .read()
            .await
            .get(server)
            .cloned()
            .ok_or_else(|| McpError::UnknownServer(server.to_string()))
    }

    async fn list_server(
        &self,
        slot: &Slot,
    ) -> Result<(Vec<ToolInfo>, Option<String>, Vec<String>), McpError> {
        let server = slot.entry.name.clone();
        let (live, restarted) = slot.live(&self.options).await?;
        let listed = tokio::time::timeout(
            self.options.list_timeout,
            live.client.peer().list_all_tools(),
        )
        .await;
        let tools = match listed {
            Err(_) => {
                return Err(McpError::Timeout {
                    server,
                    seconds: self.options.list_timeout.as_secs(),
                });
            }
            Ok(Err(e)) => {
                slot.mark_broken(e.to_string()).await;
                return Err(McpError::Stopped {
                    server,
                    message: e.to_string(),
                });
            }
            Ok(Ok(tools)) => tools,
        };
        let mut infos = Vec::new();
        let mut skipped = Vec::new();
        for mut info in slot.seen.views(&server, slot.entry.trusted, tools) {
            if let Some(binding) = &slot.entry.ucp {
                info = merchant_tool(info, binding);
            }
            if is_model_safe_name(&info.qualified_name) {
                infos.push(info);
            } else {
                skipped.push(info.qualified_name);
            }
        }
        Ok((infos, restarted, skipped))
    }

    async fn call(
        &self,
        call: ToolInvocation,
        listener: &dyn CallListener,
    ) -> Result<CallOutcome, McpError> {
        let slot = self.slot(&call.server).await?;
        let (live, restarted) = slot.live(&self.options).await?;
        let arguments = match &slot.entry.ucp {
            Some(binding) => with_meta(call.arguments, binding, call.idempotency_key.as_deref()),
            None => call.arguments,
        };
        let mut params = CallToolRequestParams::new(call.tool.clone()).with_arguments(arguments);
        if let Some(key) = call.idempotency_key {
            let mut meta = Map::new();
            meta.insert(IDEMPOTENCY_KEY.to_string(), Value::String(key));
            params.meta = Some(RequestMetaObject(MetaObject(meta)));
        }
        if let Some(retry) = call.retry {
            params.input_responses = Some(retry.responses.into_iter().collect());
            params.request_state = retry.request_state;
        }
        let server = call.server;
        let limit = slot.entry.call_timeout.unwrap_or(self.options.call_timeout);
        let answer = send_call(&live, params, limit, listener).await;
        match answer {
            Err(ServiceError::Timeout { .. }) => Err(McpError::Timeout {
                server,
                seconds: limit.as_secs(),
            }),
            Ok(CallToolResponse::Complete(result)) => Ok(CallOutcome {
                answer: CallAnswer::Done(render_result(&result)),
                restarted,
            }),
            Ok(CallToolResponse::InputRequired(required)) => Ok(CallOutcome {
                answer: CallAnswer::InputRequired(InputRequired {
                    requests: serde_json::to_value(&required.input_requests).unwrap_or(Value::Null),
                    request_state: required.request_state,
                }),
                restarted,
            }),
            Ok(_) => Err(McpError::Refused {
                server,
                message: "the server answered with a task, which this app does not follow".into(),
            }),
            // A JSON-RPC error is the server refusing the request (unknown
            // tool, invalid params): it answered, so nothing is in doubt.
            Err(ServiceError::McpError(error)) => Err(McpError::Refused {
                server,
                message: error.message.to_string(),
            }),
            Err(e) => {
                slot.mark_broken(e.to_string()).await;
                Err(McpError::Stopped {
                    server,
                    message: e.to_string(),
                })
            }
        }
    }
}

impl Default for McpHub {
    fn default() -> Self {
        McpHub::new(HubOptions::default())
    }
}

/// Sends a `tools/call` and waits for its result, the server's own time
/// at most `limit` (time a request of its server waits for the user does
/// not count; when the limit passes, the server is told the request is
/// cancelled), meanwhile passing on what the server tells of its progress
/// and what it asks the user. rmcp gives every request a progress token of
/// its own, known once the request is on its way (news that beats it is
/// kept for it), and news after the result is dropped. A request for input
/// may come as soon as the call is out, so the call's route is open first.
async fn send_call(
    live: &Live,
    params: CallToolRequestParams,
    limit: Duration,
    listener: &dyn CallListener,
) -> Result<CallToolResponse, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let route = live.client.service().route_call(limit);
    let handle = live
        .client
        .peer()
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    route.bind(handle.id.clone());
    let (peer, id) = (handle.peer.clone(), handle.id.clone());
    let watch = live
        .client
        .service()
        .watch_progress(handle.progress_token.clone());
    // One round only: a request for input in the result goes to the user,
    // who may answer after the app was closed and opened again.
    let Some(answer) = told_news(handle.await_response(), watch, route, limit, listener).await
    else {
        let cancelled = CancelledNotificationParam::new(Some(id), Some("request timeout".into()));
        let _ = peer.notify_cancelled(cancelled).await;
        return Err(ServiceError::Timeout { timeout: limit });
    };
    match answer? {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Waits for `call`, meanwhile passing on what its server tells of its
/// progress and what it asks the user; `None` when its time ran out.
async fn told_news<T>(
    call: impl Future<Output = T>,
    mut watch: ProgressWatch,
    mut route: CallRoute,
    limit: Duration,
    listener: &dyn CallListener,
) -> Option<T> {
    let out_of_time = route.out_of_time(limit);
    tokio::pin!(call, out_of_time);
    let mut connected = true;
    loop {
        tokio::select! {
            done = &mut call => return Some(done),
            () = &mut out_of_time => return None,
            news = watch.next(), if connected => match news {
                Some(news) => listener.progress(CallProgress {
                    progress: news.progress,
                    total: news.total,
                    message: news
                        .message
                        .map(|m| m.chars().take(CallProgress::MESSAGE_CHARS).collect()),
                }),
                None => connected = false,
            },
            Some(request) = route.next() => listener.asks(request),
        }
    }
}

/// OpenAI-compatible APIs accept function names of 1-64 characters from
/// `[A-Za-z0-9_-]`; a tool outside that cannot be offered to the model.
fn is_model_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A result as one text: the text blocks, or the structured content when
/// there is no text.
pub(crate) fn render_result(result: &CallToolResult) -> ToolOutput {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    let text = if texts.is_empty() {
        result
            .structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    } else {
        texts.join("\n")
    };
    ToolOutput {
        text,
        structured: result.structured_content.clone(),
        is_error: result.is_error.unwrap_or(false),
    }
}

impl ToolSource for McpHub {
    fn configure(&self, servers: Vec<ServerEntry>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut slots = self.slots.write().await;
            let mut next = BTreeMap::new();
            for entry in servers {
                let keep = slots.get(&entry.name).filter(|slot| {
                    slot.entry.connector.identity() == entry.connector.identity()
                        && slot.entry.trusted == entry.trusted
                        && slot.entry.call_timeout == entry.call_timeout
                });
                let slot = match keep {
                    Some(slot) => slot.clone(),
                    None => Arc::new(Slot {
                        entry: entry.clone(),
                        state: Mutex::new(SlotState::default()),
                        seen: SeenTools::default(),
                    }),
                };
                next.insert(entry.name.clone(), slot);
            }
            let old = std::mem::replace(&mut *slots, next);
            drop(slots);
            for (name, slot) in old {
                let still_used = self
                    .slots
                    .read()
                    .await
                    .get(&name)
                    .is_some_and(|s| Arc::ptr_eq(s, &slot));
                if !still_used {
                    slot.shut_down().await;
                }
            }
        })
    }

    fn list_tools(&self) -> BoxFuture<'_, ToolListing> {
        Box::pin(async move {
            let slots: Vec<Arc<Slot>> = self.slots.read().await.values().cloned().collect();
            let results = join_all(slots.iter().map(|slot| async move {
                let first = self.list_server(slot).await;
                // A server found broken is started again once.
                match first {
                    Err(McpError::Stopped { .. }) => self.list_server(slot).await,
                    other => other,
                }
            }))
            .await;
            let mut listing = ToolListing::default();
            for (slot, result) in slots.iter().zip(results) {
                let server = slot.entry.name.clone();
                match result {
                    Ok((tools, restarted, skipped)) => {
                        listing.tools.extend(tools);
                        if let Some(message) = restarted {
                            listing.restarted.push(ServerProblem {
                                server: server.clone(),
                                message,
                            });
                        }
                        for name in skipped {
                            listing.failures.push(ServerProblem {
                                server: server.clone(),
                                message: format!(
                                    "tool {name} has a name the model API cannot take"
                                ),
                            });
                        }
                    }
                    Err(McpError::NeedsSignIn { server }) => listing.needs_sign_in.push(server),
                    Err(McpError::Paused {
                        server,
                        failures,
                        retry_in_secs,
                        problem,
                    }) => listing.paused.push(ServerPaused {
                        server,
                        failures,
                        retry_in_secs,
                        problem,
                    }),
                    Err(e) => listing.failures.push(ServerProblem {
                        server,
                        message: e.to_string(),
                    }),
                }
            }
            listing
        })
    }

    fn call_tool<'a>(
        &'a self,
        call: ToolInvocation,
        listener: &'a dyn CallListener,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        Box::pin(self.call(call, listener))
    }

    fn honours_idempotency_keys<'a>(
        &'a self,
        server: &'a str,
    ) -> BoxFuture<'a, Result<bool, McpError>> {
        Box::pin(async move {
            let slot = self.slot(server).await?;
            let (live, _) = slot.live(&self.options).await?;
            Ok(live.honours_keys)
        })
    }

    fn disconnect<'a>(&'a self, server: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Ok(slot) = self.slot(server).await {
                slot.shut_down().await;
            }
        })
    }

    fn status(&self) -> BoxFuture<'_, Vec<ServerStatus>> {
        Box::pin(async move {
            let slots: Vec<Arc<Slot>> = self.slots.read().await.values().cloned().collect();
            let mut out = Vec::new();
            for slot in slots {
                let state = slot.state.lock().await;
                let live = state.live.as_ref().filter(|l| l.is_up());
                // A server that has run steadily since has put its stops behind it.
                let steady = live.is_some_and(|l| l.started.elapsed() >= STEADY_AFTER);
                let retry_in_secs = state.next_try_in();
                out.push(ServerStatus {
                    name: slot.entry.name.clone(),
                    trusted: slot.entry.trusted,
                    connected: live.is_some(),
                    pid: live.and_then(|l| l.pid),
                    restarts: state.restarts,
                    failed_starts: state.failed_starts,
                    stops_soon: if steady { 0 } else { state.stops_soon },
                    retry_in_secs,
                    problem: state
                        .pause
                        .as_ref()
                        .filter(|_| retry_in_secs.is_some())
                        .map(|pause| pause.problem.clone()),
                    honours_idempotency_keys: live.map(|l| l.honours_keys),
                    sign_in: state.needs_sign_in.then_some(SignInStatus::Required),
                });
            }
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::mcp::{Connect, Connected, PageOrigins, UNWATCHED};

    /// A server whose command does not exist.
    struct Missing(AtomicU32);

    impl Connect for Missing {
        fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Err("no such file or directory".to_string().into()) })
        }

        fn identity(&self) -> String {
            "missing".into()
        }

        fn describe(&self) -> String {
            "missing".into()
        }
    }

    async fn hub_with_missing(retry_start_after: Duration) -> (McpHub, Arc<Missing>) {
        let hub = McpHub::new(HubOptions {
            retry_start_after,
            ..HubOptions::default()
        });
        let missing = Arc::new(Missing(AtomicU32::new(0)));
        hub.configure(vec![ServerEntry {
            name: "gone".into(),
            trusted: false,
            call_timeout: None,
            pages: PageOrigins::none(),
            ucp: None,
            connector: missing.clone(),
        }])
        .await;
        (hub, missing)
    }

    #[tokio::test]
    async fn a_server_that_fails_to_start_is_reported_and_not_retried_at_once() {
        let (hub, missing) = hub_with_missing(Duration::from_secs(60)).await;
        for _ in 0..3 {
            let listing = hub.list_tools().await;
            assert!(listing.tools.is_empty());
            let problems: Vec<String> = (listing.failures.iter().map(|f| f.message.clone()))
                .chain(listing.paused.iter().map(|p| p.problem.clone()))
                .collect();
            assert_eq!(problems.len(), 1);
            assert!(problems[0].contains("no such file"), "{problems:?}");
        }
        assert_eq!(missing.0.load(Ordering::SeqCst), 1);
        let call = hub
            .call_tool(
                ToolInvocation {
                    server: "gone".into(),
                    tool: "x".into(),
                    arguments: Map::new(),
                    idempotency_key: None,
                    retry: None,
                },
                UNWATCHED,
            )
            .await;
        assert!(
            matches!(call, Err(McpError::Paused { failures: 1, .. })),
            "{call:?}"
        );
        let unknown = hub.honours_idempotency_keys("nowhere").await;
        assert_eq!(unknown, Err(McpError::UnknownServer("nowhere".into())));

        let (hub, missing) = hub_with_missing(Duration::ZERO).await;
        hub.list_tools().await;
        hub.list_tools().await;
        assert_eq!(
            missing.0.load(Ordering::SeqCst),
            2,
            "tried again once the pause is over"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_keeps_failing_to_start_is_tried_ever_less_often() {
        let base = Duration::from_secs(10);
        let (hub, missing) = hub_with_missing(base).await;
        let tries = || missing.0.load(Ordering::SeqCst);
        hub.list_tools().await;
        assert_eq!(tries(), 1);
        // Each pause is twice the one before: 10 s, 20 s, 40 s.
        for (pause, tries_after) in [(10, 2), (20, 3), (40, 4)] {
            tokio::time::advance(Duration::from_secs(pause) - Duration::from_millis(1)).await;
            hub.list_tools().await;
            assert_eq!(tries(), tries_after - 1, "not before {pause} s");
            tokio::time::advance(Duration::from_millis(1)).await;
            hub.list_tools().await;
            assert_eq!(tries(), tries_after, "at {pause} s");
        }
        let status = hub.status().await;
        assert_eq!(status[0].failed_starts, 4);
        assert_eq!(status[0].retry_in_secs, Some(80));
        assert_eq!(
            status[0].problem.as_deref(),
            Some("no such file or directory")
        );
        let listing = hub.list_tools().await;
        assert_eq!(
            listing.paused,
            [ServerPaused {
                server: "gone".into(),
                failures: 4,
                retry_in_secs: 80,
                problem: "no such file or directory".into(),
            }]
        );
        assert_eq!(
            start_pause(base, 40),
            MAX_START_PAUSE,
            "never more than five minutes"
        );
    }

    /// A stdio server of an older protocol revision (it refuses
    /// `server/discover`) that answers `initialize` (after writing its
    /// `TOKEN` to `$OUT`) and then never answers again.
    const SILENT_AFTER_START: &str = r#"
read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
case "$line" in *'"server/discover"'*)
  printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id"
  read -r line
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p');;
esac
version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}}\n' "$id" "$version"
printf '%s' "$TOKEN" > "$OUT"
exec sleep 30
"#;

    #[tokio::test]
    async fn a_server_s_own_call_timeout_replaces_the_default_and_its_env_references_are_filled_in()
    {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("token");
        let connector = crate::mcp::connect::StdioConnector::new(
            "silent",
            "sh",
            vec!["-c".into(), SILENT_AFTER_START.into()],
            vec![
                ("TOKEN".into(), "home=${env:HOME}".into()),
                ("OUT".into(), out.display().to_string()),
            ],
        );
        let hub = McpHub::default();
        hub.configure(vec![ServerEntry {
            name: "silent".into(),
            trusted: false,
            connector: Arc::new(connector),
            call_timeout: Some(Duration::from_secs(1)),
            pages: PageOrigins::none(),
            ucp: None,
        }])
        .await;
        let started = Instant::now();
        let call = hub
            .call_tool(
                ToolInvocation {
                    server: "silent".into(),
                    tool: "wait".into(),
                    arguments: Map::new(),
                    idempotency_key: None,
                    retry: None,
                },
                UNWATCHED,
            )
            .await;
        assert_eq!(
            call,
            Err(McpError::Timeout {
                server: "silent".into(),
                seconds: 1
            })
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not the default 120 s"
        );
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("home={home}")
        );
    }

    #[tokio::test]
    async fn a_reference_to_an_unset_variable_fails_the_start_naming_the_variable() {
        let connector = crate::mcp::connect::StdioConnector::new(
            "needs-key",
            "sh",
            vec![],
            vec![("API_KEY".into(), "${env:RAGENT_TEST_NEVER_SET_7F3A}".into())],
        );
        let error = match connector.connect().await {
            Ok(_) => panic!("started without its variable"),
            Err(error) => error,
        };
        assert_eq!(
            error,
            ConnectError::Failed(
                "env API_KEY: the environment variable RAGENT_TEST_NEVER_SET_7F3A is not set"
                    .into()
            )
        );
    }

    #[test]
    fn only_names_a_model_api_accepts_are_offered() {
        assert!(is_model_safe_name("shop__search_product"));
        assert!(!is_model_safe_name("shop__search.product"));
        assert!(!is_model_safe_name(&"x".repeat(65)));
    }
}
