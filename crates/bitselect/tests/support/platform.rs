//! A platform's UCP profile served on loopback (as its publisher would
//! host it), for the shop to fetch when a request names it; stopped on
//! drop.

use std::net::SocketAddr;

use bitselect::ucp::names::UCP_VERSION;
use bitselect::ucp::negotiation::shop_capabilities;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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
        let addr: SocketAddr = listener.local_addr().expect("the bound port");
        let shutdown = CancellationToken::new();
        let app = axum::Router::new().route(
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
