//! This client's side of a connection: how it introduces itself, and what
//! it does with what a server sends unasked. Progress notifications go to
//! the call that asked for them, by the progress token its request carried
//! (rmcp gives each request one); a request for the user's input that an
//! older server makes during a call goes to that call (`asks.rs`), and
//! waits there for the user's answer.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    ProgressNotificationParam, ProgressToken, UrlElicitationCapability,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use serde_json::json;
use tokio::sync::watch;

use super::asks::{CallRoute, CallRoutes, LiveRequest};

/// How this client introduces itself to servers: it can show a form or
/// hand over to a page when a server asks the user for input, and checks
/// a form's answer against its schema before sending it.
pub fn client_config() -> ClientConfig {
    let mut form = FormElicitationCapability::default();
    form.schema_validation = Some(true);
    let mut elicitation = ElicitationCapability::default();
    elicitation.form = Some(form);
    elicitation.url = Some(UrlElicitationCapability::new());
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(elicitation);
    ClientConfig::new(
        capabilities,
        Implementation::new("ragent", env!("CARGO_PKG_VERSION")),
    )
}

/// News for tokens nobody watches yet is kept for this many tokens: a
/// server may answer a request with progress before the caller, which
/// learns the token only once the request is on its way, starts watching.
const UNCLAIMED_TOKENS: usize = 64;

#[derive(Default)]
struct Routes {
    watched: HashMap<ProgressToken, watch::Sender<Option<ProgressNotificationParam>>>,
    /// The latest news of each token not watched yet, oldest first.
    unclaimed: VecDeque<ProgressNotificationParam>,
}

impl Routes {
    fn deliver(&mut self, news: ProgressNotificationParam) {
        if let Some(sender) = self.watched.get(&news.progress_token) {
            // Only the latest news matters: what a chip shows is the last word.
            sender.send_replace(Some(news));
            return;
        }
        self.unclaimed
            .retain(|kept| kept.progress_token != news.progress_token);
        if self.unclaimed.len() == UNCLAIMED_TOKENS {
            self.unclaimed.pop_front();
        }
        self.unclaimed.push_back(news);
    }

    fn claim(&mut self, token: &ProgressToken) -> Option<ProgressNotificationParam> {
        let index = self
            .unclaimed
            .iter()
            .position(|kept| &kept.progress_token == token)?;
        self.unclaimed.remove(index)
    }
}

type SharedRoutes = Arc<Mutex<Routes>>;

fn lock(routes: &SharedRoutes) -> std::sync::MutexGuard<'_, Routes> {
    // Never held across an await, and every change leaves it whole.
    routes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The handler every connection of the hub runs: one per connection.
#[derive(Clone, Default)]
pub struct HubClient {
    routes: SharedRoutes,
    calls: CallRoutes,
}

impl HubClient {
    pub fn new() -> HubClient {
        HubClient::default()
    }

    /// A route for a call about to be sent on this connection, whose time
    /// limit is `limit`: what its server asks the user meanwhile goes there.
    pub fn route_call(&self, limit: std::time::Duration) -> CallRoute {
        self.calls.open(limit)
    }

    /// The progress news that carries `token` (a request's), from any that
    /// came before this call on; dropping the watch forgets the token.
    pub fn watch_progress(&self, token: ProgressToken) -> ProgressWatch {
        let mut routes = lock(&self.routes);
        let earlier = routes.claim(&token);
        let told = earlier.is_some();
        let (sender, mut receiver) = watch::channel(earlier);
        if told {
            receiver.mark_changed();
        }
        routes.watched.insert(token.clone(), sender);
        ProgressWatch {
            token,
            receiver,
            routes: self.routes.clone(),
        }
    }
}

/// One request's progress news, latest first: news that came while the
/// watcher was busy is replaced by what came after it.
pub struct ProgressWatch {
    token: ProgressToken,
    receiver: watch::Receiver<Option<ProgressNotificationParam>>,
    routes: SharedRoutes,
}

impl ProgressWatch {
    /// The next news; `None` once the connection is gone.
    pub async fn next(&mut self) -> Option<ProgressNotificationParam> {
        loop {
            self.receiver.changed().await.ok()?;
            if let Some(news) = self.receiver.borrow_and_update().clone() {
                return Some(news);
            }
        }
    }
}

impl Drop for ProgressWatch {
    fn drop(&mut self) {
        lock(&self.routes).watched.remove(&self.token);
    }
}

impl ClientHandler for HubClient {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        lock(&self.routes).deliver(params);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let origin = context.extensions.get::<InboundStreamOrigin>();
        let destination = match self.calls.destination(origin) {
            Ok(destination) => destination,
            Err(why) => {
                tracing::warn!(%why, "declined a server's request for input");
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            }
        };
        let (live, answered) = LiveRequest::new(
            json!({"method": "elicitation/create", "params": request}),
            destination.limit,
        );
        let Ok(_waiting) = destination.deliver(live) else {
            tracing::warn!("declined a server's request for input: its call had just ended");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        tokio::select! {
            // Dropped unanswered (the run went away): the server is told cancel.
            answer = answered => Ok(answer.unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel))),
            // The server withdrew it; the answer goes nowhere.
            () = context.ct.cancelled() => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn news(n: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token(n), progress)
    }

    #[tokio::test]
    async fn news_that_came_before_the_watch_began_is_its_first() {
        let client = HubClient::new();
        lock(&client.routes).deliver(news(1, 0.5));
        let mut watch = client.watch_progress(token(1));
        assert_eq!(watch.next().await.map(|n| n.progress), Some(0.5));
        lock(&client.routes).deliver(news(1, 0.75));
        assert_eq!(watch.next().await.map(|n| n.progress), Some(0.75));
    }

    #[tokio::test]
    async fn a_busy_watcher_gets_the_latest_news_and_others_tokens_stay_apart() {
        let client = HubClient::new();
        let mut one = client.watch_progress(token(1));
        let mut two = client.watch_progress(token(2));
        for step in 1..=5 {
            lock(&client.routes).deliver(news(1, f64::from(step)));
        }
        lock(&client.routes).deliver(news(2, 9.0));
        assert_eq!(one.next().await.map(|n| n.progress), Some(5.0));
        assert_eq!(two.next().await.map(|n| n.progress), Some(9.0));
    }

    #[test]
    fn a_dropped_watch_forgets_its_token_and_unclaimed_news_stays_bounded() {
        let client = HubClient::new();
        drop(client.watch_progress(token(1)));
        assert!(lock(&client.routes).watched.is_empty());
        for n in 0..(UNCLAIMED_TOKENS as i64 + 10) {
            lock(&client.routes).deliver(news(n, 1.0));
        }
        let routes = lock(&client.routes);
        assert_eq!(routes.unclaimed.len(), UNCLAIMED_TOKENS);
        assert_eq!(
            routes.unclaimed[0].progress_token,
            token(10),
            "the oldest go first"
        );
    }
}
