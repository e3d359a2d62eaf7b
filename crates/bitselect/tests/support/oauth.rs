//! A real authorization server (panva's oidc-provider, started by
//! scripts/auth-server/server.mjs under node) and the shop served over HTTP
//! as its protected resource, both on loopback ports and stopped on drop;
//! a sign-in without a browser is `test_support::sign_in`.

use std::net::SocketAddr;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bitselect::origins::AllowedOrigins;
use bitselect::{AuthConfig, serve_http_authenticated};
pub use test_support::oauth::AuthServer;
use tokio_util::sync::CancellationToken;

use super::{TestShop, TestStore, open_shop_on};

/// The shop as a protected resource of a fresh authorization server.
pub struct Stack {
    pub auth: AuthServer,
    pub shop: TestShop,
    pub addr: SocketAddr,
    /// The shop's resource URL, `http://ADDR/mcp`.
    pub resource: String,
    shutdown: CancellationToken,
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// How a [`Stack`] is set up.
pub struct StackOptions {
    pub token_ttl_secs: u32,
    pub leeway_secs: u64,
    /// Other resources the authorization server issues tokens for.
    pub other_resources: Vec<String>,
    /// Where the shop keeps its data.
    pub store: TestStore,
    /// The web origins whose pages the shop serves (`--allowed-origin`).
    pub allowed_origins: Vec<&'static str>,
}

impl Default for StackOptions {
    fn default() -> Self {
        Self {
            token_ttl_secs: 600,
            leeway_secs: bitselect::auth::config::DEFAULT_LEEWAY_SECS,
            other_resources: Vec::new(),
            store: TestStore::Sqlite,
            allowed_origins: Vec::new(),
        }
    }
}

impl Stack {
    pub async fn start(options: StackOptions) -> Self {
        // The port is held from here on: the resource URL names it.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
        let port = listener.local_addr().expect("the bound port").port();
        let resource = format!("http://127.0.0.1:{port}{}", bitselect::MCP_PATH);
        let mut resources = vec![resource.as_str()];
        resources.extend(options.other_resources.iter().map(String::as_str));
        let auth = AuthServer::start(&resources, options.token_ttl_secs).await;

        // Opening a PostgreSQL store blocks on a runtime of its own.
        let store = options.store;
        let shop = tokio::task::spawn_blocking(move || open_shop_on(store))
            .await
            .expect("the shop opens");
        let config = AuthConfig::new(&auth.issuer, &resource)
            .expect("valid URLs")
            .with_leeway(options.leeway_secs);
        let shutdown = CancellationToken::new();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(serve_http_authenticated(
            shop.shop.clone(),
            listener,
            bitselect::HttpAccess {
                allow_remote: false,
                allowed_origins: AllowedOrigins::new(&options.allowed_origins)
                    .expect("valid origins"),
            },
            config,
            shutdown.clone(),
            move |bound| {
                let _ = ready_tx.send(bound);
            },
        ));
        let addr = ready_rx.await.expect("the shop listens");
        Self {
            auth,
            shop,
            addr,
            resource,
            shutdown,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// A JWT's header and claims, read without checking anything.
pub fn jwt_parts(token: &str) -> (serde_json::Value, serde_json::Value) {
    let mut parts = token.split('.');
    let mut next = || {
        let part = parts.next().expect("a JWT part");
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("base64url")).expect("JSON")
    };
    (next(), next())
}

/// A token with this header and these claims, signed ES256 with a P-256 key
/// made here: one the authorization server never had.
pub fn forge(header: &serde_json::Value, claims: &serde_json::Value) -> String {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(
        &ECDSA_P256_SHA256_FIXED_SIGNING,
        &aws_lc_rs::rand::SystemRandom::new(),
    )
    .expect("a key of our own");
    let key = jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_ref());
    let mut jwt_header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    jwt_header.kid = header["kid"].as_str().map(str::to_owned);
    jwt_header.typ = header["typ"].as_str().map(str::to_owned);
    jsonwebtoken::encode(&jwt_header, claims, &key).expect("signed")
}
