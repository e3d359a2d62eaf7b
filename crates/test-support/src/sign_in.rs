//! A shopper's sign-in without a browser, as the test client the
//! authorization server (scripts/auth-server) has registered: the
//! authorization-code flow with PKCE, its login and consent forms submitted
//! over HTTP ([`crate::oauth::log_in`]), and the code exchanged for tokens.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The launcher's pre-registered public client.
pub const TEST_CLIENT: &str = "bitselect-test";
/// Its registered redirect is `http://127.0.0.1/callback`; a native client's
/// loopback redirect may name any port.
pub const REDIRECT_URI: &str = "http://127.0.0.1:53682/callback";

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
    let authorize = authorization_url(issuer, resource, &challenge, state);
    let redirect = crate::oauth::log_in(authorize.as_str(), login).await;
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

/// The test client's authorization request for `resource`, as a browser
/// is sent to it.
pub fn authorization_url(
    issuer: &str,
    resource: &str,
    challenge: &str,
    state: &str,
) -> reqwest::Url {
    reqwest::Url::parse_with_params(
        &format!("{issuer}/auth"),
        &[
            ("client_id", TEST_CLIENT),
            ("response_type", "code"),
            ("redirect_uri", REDIRECT_URI),
            ("scope", "openid offline_access"),
            // Required for offline_access (a refresh token), OIDC Core §11.
            ("prompt", "consent"),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
            ("state", state),
            ("resource", resource),
        ],
    )
    .expect("authorization URL")
}

/// The page a browser reaches from the test client's authorization
/// request: the login form, when the server offers one.
pub async fn login_page(issuer: &str, resource: &str) -> (reqwest::StatusCode, String) {
    let (_, challenge) = pkce();
    crate::oauth::first_page(authorization_url(issuer, resource, &challenge, "state").as_str())
        .await
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
