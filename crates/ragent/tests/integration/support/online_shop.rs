//! The shop served over HTTP in process as an OAuth protected resource,
//! behind the real authorization server (oidc-provider): its MCP endpoint
//! and its commerce service (`/ucp/mcp`) both signed in to. Stopped on drop.

use test_support::oauth::AuthServer;
use tokio_util::sync::CancellationToken;

pub struct OnlineShop {
    pub auth: AuthServer,
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    /// The MCP endpoint, `<origin>/mcp`.
    pub resource: String,
    _dir: tempfile::TempDir,
    shutdown: CancellationToken,
}

impl Drop for OnlineShop {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl OnlineShop {
    pub async fn start() -> OnlineShop {
        // The port is held from here on: the resource URLs name it.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let resource = format!("{origin}{}", bitselect::MCP_PATH);
        let commerce = format!("{origin}{}", bitselect::ucp::names::UCP_MCP_PATH);
        let auth = AuthServer::start(&[&resource, &commerce], 600).await;
        let dir = tempfile::tempdir().unwrap();
        let shop = bitselect::Shop::open(dir.path()).unwrap();
        let config = bitselect::AuthConfig::new(&auth.issuer, &resource).unwrap();
        let shutdown = CancellationToken::new();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(bitselect::serve_http_authenticated(
            shop,
            listener,
            bitselect::HttpAccess::default(),
            config,
            shutdown.clone(),
            move |bound| {
                let _ = ready_tx.send(bound);
            },
        ));
        ready_rx.await.unwrap();
        OnlineShop {
            auth,
            origin,
            resource,
            _dir: dir,
            shutdown,
        }
    }
}
