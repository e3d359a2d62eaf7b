//! A platform's UCP profile served on loopback (as its publisher would
//! host it), for the shop to fetch when a request names it, and, when
//! asked for, the webhook it takes order events at; stopped on drop.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use bitselect::ucp::names::{ORDER, UCP_VERSION};
use bitselect::ucp::negotiation::shop_capabilities;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_util::sync::CancellationToken;

/// Where a platform made by [`PlatformProfile::with_webhook`] takes its
/// order events.
pub const WEBHOOK_PATH: &str = "/webhooks/orders";

/// One request a platform's webhook received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Every header, names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    }
}

pub struct PlatformProfile {
    /// Where the profile is served.
    pub url: String,
    shutdown: CancellationToken,
}

impl Drop for PlatformProfile {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl PlatformProfile {
    /// A platform with every capability the shop has.
    pub async fn full() -> Self {
        Self::with(&shop_capabilities().collect::<Vec<_>>()).await
    }

    /// A platform with these capabilities, at the shop's version.
    pub async fn with(capabilities: &[&str]) -> Self {
        let mut map = serde_json::Map::new();
        for name in capabilities {
            map.insert((*name).to_owned(), json!([{ "version": UCP_VERSION }]));
        }
        Self::serve(json!({
            "ucp": {
                "version": UCP_VERSION,
                "services": { "dev.ucp.shopping": [{ "version": UCP_VERSION, "transport": "rest" }] },
                "capabilities": map,
                "payment_handlers": {},
            },
        }))
        .await
    }

    /// Serves `document` as the profile.
    pub async fn serve(document: Value) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        Self::serve_on(listener, document, axum::Router::new())
    }

    /// A platform with every capability the shop has, whose order
    /// capability names a webhook on the same server. The webhook answers
    /// 503 to the first `refuse_first` requests and 200 after; every
    /// request it gets arrives on the receiver.
    pub async fn with_webhook(refuse_first: usize) -> (Self, UnboundedReceiver<Received>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr: SocketAddr = listener.local_addr().expect("the bound port");
        let mut capabilities = serde_json::Map::new();
        for name in shop_capabilities() {
            capabilities.insert(name.to_owned(), json!([{ "version": UCP_VERSION }]));
        }
        capabilities.insert(
            ORDER.to_owned(),
            json!([{
                "version": UCP_VERSION,
                "config": { "webhook_url": format!("http://{addr}{WEBHOOK_PATH}") },
            }]),
        );
        let document = json!({
            "ucp": {
                "version": UCP_VERSION,
                "services": { "dev.ucp.shopping": [{ "version": UCP_VERSION, "transport": "rest" }] },
                "capabilities": capabilities,
                "payment_handlers": {},
            },
        });
        let (sent, received) = unbounded_channel();
        let answered = Arc::new(AtomicUsize::new(0));
        let webhook = axum::routing::post(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let refuse = answered.fetch_add(1, Ordering::SeqCst) < refuse_first;
                let _ = sent.send(Received {
                    method: method.to_string(),
                    path: uri.path().to_owned(),
                    headers: headers
                        .iter()
                        .map(|(name, value)| {
                            (
                                name.to_string(),
                                value.to_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect(),
                    body: body.to_vec(),
                });
                async move {
                    if refuse {
                        StatusCode::SERVICE_UNAVAILABLE.into_response()
                    } else {
                        axum::Json(
                            json!({ "ucp": { "version": UCP_VERSION, "status": "success" } }),
                        )
                        .into_response()
                    }
                }
            },
        );
        let routes = axum::Router::new().route(WEBHOOK_PATH, webhook);
        (Self::serve_on(listener, document, routes), received)
    }

    fn serve_on(listener: tokio::net::TcpListener, document: Value, routes: axum::Router) -> Self {
        let addr: SocketAddr = listener.local_addr().expect("the bound port");
        let shutdown = CancellationToken::new();
        let app = routes.route(
            "/profile.json",
            axum::routing::get(move || {
                let document = document.clone();
                async move { axum::Json(document) }
            }),
        );
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
        });
        Self {
            url: format!("http://{addr}/profile.json"),
            shutdown,
        }
    }

    /// The `UCP-Agent` header naming it.
    pub fn agent_header(&self) -> String {
        format!(r#"profile="{}""#, self.url)
    }

    /// An HTTP client that names it on every request.
    pub fn client(&self) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            "UCP-Agent",
            self.agent_header().parse().expect("a header value"),
        );
        reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .expect("a client")
    }

    /// MCP's `meta` naming it.
    pub fn meta(&self) -> Value {
        json!({ "ucp-agent": { "profile": self.url } })
    }
}
