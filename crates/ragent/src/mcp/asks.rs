//! Requests a server makes on the connection while a call runs: MCP
//! `elicitation/create` from servers of revisions before 2026-07-28, which
//! ask the user that way instead of answering `input_required`. Such a
//! request lives on the connection; the server waits for its answer.
//!
//! Every call out on a connection holds a [`CallRoute`] from before it is
//! sent until it ends. A request goes to the call it names (streamable HTTP
//! tells which request's stream it came on) or else to the only call
//! running; with no call running, or several and none named, it is
//! declined.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ElicitResult, ElicitationAction, RequestId};
use rmcp::service::InboundStreamOrigin;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

/// A server's request for the user's input, waiting on its connection.
/// Dropped unanswered, the server is told `cancel`.
#[derive(Debug)]
pub struct LiveRequest {
    /// `{"method": "elicitation/create", "params": …}` as received.
    pub request: Value,
    /// How long it may wait for the user: the call's own time limit.
    pub waits_at_most: Duration,
    answer: oneshot::Sender<ElicitResult>,
}

impl LiveRequest {
    /// A request and the receiver its answer reaches (for tests of what
    /// the connection's handler sends).
    pub fn new(request: Value, waits_at_most: Duration) -> (Self, oneshot::Receiver<ElicitResult>) {
        let (answer, answered) = oneshot::channel();
        (
            LiveRequest {
                request,
                waits_at_most,
                answer,
            },
            answered,
        )
    }

    /// Sends `response` (`{"action": …, "content": …}`, as the app checked
    /// it) to the server. False when it is not one, or the server no longer
    /// waits.
    pub fn answer(self, response: &Value) -> bool {
        match serde_json::from_value::<ElicitResult>(response.clone()) {
            Ok(result) => self.answer.send(result).is_ok(),
            Err(error) => {
                tracing::warn!(%error, "an answer to a server's request for input is not one");
                false
            }
        }
    }

    pub fn decline(self) {
        let _ = self
            .answer
            .send(ElicitResult::new(ElicitationAction::Decline));
    }

    pub fn cancel(self) {
        let _ = self
            .answer
            .send(ElicitResult::new(ElicitationAction::Cancel));
    }
}

struct Route {
    id: u64,
    /// The `tools/call` request's id, once it is on its way.
    request: Option<RequestId>,
    limit: Duration,
    asks: mpsc::UnboundedSender<LiveRequest>,
    /// How many of its requests wait for the user now.
    waiting: Arc<watch::Sender<usize>>,
}

#[derive(Default)]
struct Routes {
    next: u64,
    routes: Vec<Route>,
}

type SharedRoutes = Arc<Mutex<Routes>>;

fn lock(routes: &SharedRoutes) -> std::sync::MutexGuard<'_, Routes> {
    // Never held across an await, and every change leaves it whole.
    routes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The calls running on one connection.
#[derive(Clone, Default)]
pub struct CallRoutes {
    routes: SharedRoutes,
}

/// Why a request went to no call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unrouted {
    #[error("no call of this server is running")]
    NoCall,
    #[error("several calls of this server are running and the request names none")]
    Ambiguous,
}

/// Where a request goes: its call's queue, and the count of its call's
/// requests that wait for the user.
pub struct Destination {
    pub limit: Duration,
    asks: mpsc::UnboundedSender<LiveRequest>,
    waiting: Arc<watch::Sender<usize>>,
}

impl Destination {
    /// Hands the request to its call; gives it back when the call is gone.
    pub fn deliver(&self, request: LiveRequest) -> Result<WaitingForUser, LiveRequest> {
        self.asks.send(request).map_err(|unsent| unsent.0)?;
        self.waiting.send_modify(|n| *n += 1);
        Ok(WaitingForUser {
            waiting: self.waiting.clone(),
        })
    }
}

/// Held while a request waits for the user: the call's time limit does
/// not run meanwhile.
pub struct WaitingForUser {
    waiting: Arc<watch::Sender<usize>>,
}

impl Drop for WaitingForUser {
    fn drop(&mut self) {
        self.waiting.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl CallRoutes {
    /// A route for a call about to be sent, with `limit` its time limit.
    pub fn open(&self, limit: Duration) -> CallRoute {
        let (asks, receiver) = mpsc::unbounded_channel();
        let (waiting, waiting_rx) = watch::channel(0);
        let mut routes = lock(&self.routes);
        routes.next += 1;
        let id = routes.next;
        routes.routes.push(Route {
            id,
            request: None,
            limit,
            asks,
            waiting: Arc::new(waiting),
        });
        CallRoute {
            id,
            routes: self.routes.clone(),
            asks: receiver,
            waiting: waiting_rx,
        }
    }

    /// The call a request that came on `origin` belongs to.
    pub fn destination(
        &self,
        origin: Option<&InboundStreamOrigin>,
    ) -> Result<Destination, Unrouted> {
        let routes = lock(&self.routes);
        let named = match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => routes
                .routes
                .iter()
                .find(|route| route.request.as_ref() == Some(id)),
            _ => None,
        };
        let route = match named {
            Some(route) => route,
            None => match routes.routes.as_slice() {
                [] => return Err(Unrouted::NoCall),
                [only] => only,
                _ => return Err(Unrouted::Ambiguous),
            },
        };
        Ok(Destination {
            limit: route.limit,
            asks: route.asks.clone(),
            waiting: route.waiting.clone(),
        })
    }
}

/// A call's claim on the requests its server makes while it runs; the
/// route closes when this is dropped.
pub struct CallRoute {
    id: u64,
    routes: SharedRoutes,
    asks: mpsc::UnboundedReceiver<LiveRequest>,
    waiting: watch::Receiver<usize>,
}

impl CallRoute {
    /// Names the call's request, so a request that names it finds it.
    pub fn bind(&self, request: RequestId) {
        if let Some(route) = lock(&self.routes)
            .routes
            .iter_mut()
            .find(|r| r.id == self.id)
        {
            route.request = Some(request);
        }
    }

    /// The next request the call's server makes.
    pub async fn next(&mut self) -> Option<LiveRequest> {
        self.asks.recv().await
    }

    /// Ends when the call has used `limit` of time not spent waiting for
    /// the user.
    pub fn out_of_time(&self, limit: Duration) -> impl Future<Output = ()> + use<> {
        let mut waiting = self.waiting.clone();
        async move {
            let mut left = limit;
            loop {
                if *waiting.borrow_and_update() > 0 {
                    if waiting.changed().await.is_err() {
                        return std::future::pending().await;
                    }
                    continue;
                }
                let started = tokio::time::Instant::now();
                tokio::select! {
                    () = tokio::time::sleep(left) => return,
                    changed = waiting.changed() => {
                        left = left.saturating_sub(started.elapsed());
                        if changed.is_err() {
                            return std::future::pending().await;
                        }
                    }
                }
            }
        }
    }
}

impl Drop for CallRoute {
    fn drop(&mut self) {
        lock(&self.routes).routes.retain(|r| r.id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;
    use serde_json::json;

    use super::*;

    fn request() -> (LiveRequest, oneshot::Receiver<ElicitResult>) {
        LiveRequest::new(
            json!({"method": "elicitation/create"}),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn a_request_goes_to_the_only_call_or_the_one_it_names_and_else_nowhere() {
        let routes = CallRoutes::default();
        assert!(matches!(routes.destination(None), Err(Unrouted::NoCall)));
        let first = routes.open(Duration::from_secs(1));
        assert!(routes.destination(None).is_ok());
        let second = routes.open(Duration::from_secs(2));
        assert!(matches!(routes.destination(None), Err(Unrouted::Ambiguous)));
        second.bind(RequestId::Number(7));
        let named = InboundStreamOrigin::OutboundRequest(NumberOrString::Number(7));
        let to = routes.destination(Some(&named)).unwrap();
        assert_eq!(to.limit, Duration::from_secs(2));
        drop(second);
        drop(first);
        assert!(matches!(routes.destination(None), Err(Unrouted::NoCall)));
    }

    #[tokio::test]
    async fn a_delivered_request_reaches_its_call_and_one_dropped_unanswered_is_cancelled() {
        let routes = CallRoutes::default();
        let mut route = routes.open(Duration::from_secs(1));
        let (live, answered) = request();
        let _waiting = routes.destination(None).unwrap().deliver(live).unwrap();
        let received = route.next().await.unwrap();
        drop(received);
        assert!(
            answered.await.is_err(),
            "the handler then tells the server cancel"
        );
        drop(route);
        let (live, _) = request();
        let to = routes.open(Duration::from_secs(1));
        let destination = routes.destination(None).unwrap();
        drop(to);
        assert!(destination.deliver(live).is_err(), "the call is gone");
    }

    #[tokio::test(start_paused = true)]
    async fn the_call_s_time_does_not_run_while_the_user_is_asked() {
        let routes = CallRoutes::default();
        let route = routes.open(Duration::from_secs(10));
        let out = route.out_of_time(Duration::from_secs(10));
        tokio::pin!(out);
        let started = tokio::time::Instant::now();
        tokio::select! {
            () = &mut out => panic!("ran out before its time"),
            () = tokio::time::sleep(Duration::from_secs(4)) => {}
        }
        let (live, _answered) = request();
        let waiting = routes.destination(None).unwrap().deliver(live).unwrap();
        tokio::select! {
            () = &mut out => panic!("ran out while the user was asked"),
            () = tokio::time::sleep(Duration::from_secs(60)) => {}
        }
        drop(waiting);
        (&mut out).await;
        let spent = started.elapsed();
        assert!(
            spent >= Duration::from_secs(70) && spent < Duration::from_secs(71),
            "{spent:?}"
        );
    }
}
