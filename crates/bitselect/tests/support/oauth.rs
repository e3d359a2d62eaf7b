//! A real authorization server (panva's oidc-provider, started by
//! scripts/auth-server/server.mjs under node) and the shop served over HTTP
//! as its protected resource, both on loopback ports and stopped on drop;
//! and a sign-in without a browser: the authorization-code flow with PKCE,
//! its login and consent forms submitted over HTTP (`test_support::oauth`).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bitselect::{AuthConfig, serve_http_authenticated};
use serde::Deserialize;
use sha2::{Digest, Sha256};
pub use test_support::oauth::AuthServer;
use test_support::oauth::free_port;
use tokio_util::sync::CancellationToken;

use super::{TestShop, TestStore, open_shop_on};

/// The launcher's pre-registered public client.
pub const TEST_CLIENT: &str = "bitselect-test";
/// Its registered redirect is `http://127.0.0.1/callback`; a native client's
/// loopback redirect may name any port.
pub const REDIRECT_URI: &str = "http://127.0.0.1:53682/callback";

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
}

impl Default for StackOptions {
    fn default() -> Self {
        Self {
            token_ttl_secs: 600,
            leeway_secs: bitselect::auth::config::DEFAULT_LEEWAY_SECS,
            other_resources: Vec::new(),
            store: TestStore::Sqlite,
        }
    }
}

impl Stack {
    pub async fn start(options: StackOptions) -> Self {
        let port = free_port();
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
            SocketAddr::from(([127, 0, 0, 1], port)),
            false,
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

/// What the token endpoint answered.
#[derive(Debug, Clone, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub token_type: String,
    pub expires_in: u64,
    pub scope: Option<String>,
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let mut random = [0u8; 32];
    aws_lc_rs::rand::fill(&mut random).expect("random bytes");
    let verifier = URL_SAFE_NO_PAD.encode(random);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// Signs `login` in at `issuer` as the test client and gets tokens for
/// `resource`: the authorization request, the login form (any name becomes
/// `sub`), the consent form, the redirect's code, and its exchange with the
/// PKCE verifier.
pub async fn sign_in(issuer: &str, login: &str, resource: &str) -> Tokens {
    let (verifier, challenge) = pkce();
    let state = "state-of-the-test";
    let authorize = reqwest::Url::parse_with_params(
        &format!("{issuer}/auth"),
        &[
            ("client_id", TEST_CLIENT),
            ("response_type", "code"),
            ("redirect_uri", REDIRECT_URI),
            ("scope", "openid offline_access"),
            // Required for offline_access (a refresh token), OIDC Core §11.
            ("prompt", "consent"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", state),
            ("resource", resource),
        ],
    )
    .expect("authorization URL");
    let redirect = test_support::oauth::log_in(authorize.as_str(), login).await;
    let code = code_from(&redirect, state);
    let response = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", TEST_CLIENT),
            ("code_verifier", verifier.as_str()),
            ("resource", resource),
        ])
        .send()
        .await
        .expect("the token endpoint answers");
    token_answer(response).await
}

/// Exchanges a refresh token for new tokens for `resource`.
pub async fn refresh(issuer: &str, refresh_token: &str, resource: &str) -> Tokens {
    let response = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", TEST_CLIENT),
            ("resource", resource),
        ])
        .send()
        .await
        .expect("the token endpoint answers");
    token_answer(response).await
}

async fn token_answer(response: reqwest::Response) -> Tokens {
    let status = response.status();
    let body = response.text().await.expect("a body");
    assert!(
        status.is_success(),
        "the token endpoint answered {status}: {body}"
    );
    serde_json::from_str(&body).expect("a token response")
}

fn code_from(redirect: &str, state: &str) -> String {
    let url = reqwest::Url::parse(redirect).expect("redirect URL");
    let params: BTreeMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(
        params.get("state").map(String::as_str),
        Some(state),
        "{redirect}"
    );
    params
        .get("code")
        .cloned()
        .unwrap_or_else(|| panic!("no code in {redirect}"))
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
