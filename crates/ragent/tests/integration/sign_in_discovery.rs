//! Each step of a sign-in's discovery, and each document that should stop
//! it, against a server on a loopback port that answers fixed documents:
//! the 401 names the protected resource metadata, that names the
//! authorization server, whose metadata gives the endpoints, where the app
//! registers itself; the authorization URL carries PKCE, `state`,
//! `resource` and the loopback redirect. Nothing is kept by any of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use ragent::mcp::config::{ServerConfig, ServerTransport};
use ragent::mcp::connect::ConnectError;
use ragent::mcp::sign_in::{self, ServerTokens, SignInError};
use ragent::secrets::{MemorySecrets, SecretStore};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// An answer: status, extra headers, body.
#[derive(Clone)]
struct Answer(u16, Vec<(&'static str, String)>, String);

fn json_answer(body: Value) -> Answer {
    Answer(
        200,
        vec![("content-type", "application/json".into())],
        body.to_string(),
    )
}

/// Fixed documents by `METHOD /path`; 404 for anything else. Keeps the
/// requests it was sent (head line and body).
#[derive(Clone)]
struct Documents {
    base: String,
    routes: Arc<Mutex<HashMap<String, Answer>>>,
    received: Arc<Mutex<Vec<(String, String)>>>,
    /// Each request's head, headers and all, lower-cased.
    heads: Arc<Mutex<Vec<String>>>,
}

impl Documents {
    async fn start() -> Documents {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let docs = Documents {
            base,
            routes: Arc::default(),
            received: Arc::default(),
            heads: Arc::default(),
        };
        let serving = docs.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let docs = serving.clone();
                tokio::spawn(async move {
                    let Some((head, body)) = read_request(&mut stream).await else {
                        return;
                    };
                    docs.heads.lock().unwrap().push(head.to_lowercase());
                    let line = head.lines().next().unwrap_or_default().to_string();
                    let mut parts = line.split(' ');
                    let method = parts.next().unwrap_or_default().to_string();
                    let path = parts.next().unwrap_or_default();
                    let path = path.split('?').next().unwrap_or_default().to_string();
                    docs.received
                        .lock()
                        .unwrap()
                        .push((format!("{method} {path}"), body));
                    let answer = docs
                        .routes
                        .lock()
                        .unwrap()
                        .get(&format!("{method} {path}"))
                        .cloned()
                        .unwrap_or(Answer(404, vec![], "not found".into()));
                    let mut head = format!(
                        "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                        answer.0,
                        answer.2.len()
                    );
                    for (name, value) in &answer.1 {
                        head.push_str(&format!("{name}: {value}\r\n"));
                    }
                    head.push_str("\r\n");
                    let _ = stream.write_all(head.as_bytes()).await;
                    let _ = stream.write_all(answer.2.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        docs
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn answer(&self, route: &str, answer: Answer) {
        self.routes
            .lock()
            .unwrap()
            .insert(route.to_string(), answer);
    }

    fn received(&self, route: &str) -> Vec<String> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|(r, _)| r == route)
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// The MCP endpoint's 401, naming the metadata.
    fn protected(&self) {
        let metadata = self.url("/.well-known/oauth-protected-resource/mcp");
        self.answer(
            "POST /mcp",
            Answer(
                401,
                vec![(
                    "www-authenticate",
                    format!("Bearer resource_metadata=\"{metadata}\""),
                )],
                String::new(),
            ),
        );
    }

    /// Protected resource metadata naming the authorization server at `/as`.
    fn resource_metadata(&self) {
        self.answer(
            "GET /.well-known/oauth-protected-resource/mcp",
            json_answer(json!({
                "resource": self.url("/mcp"),
                "authorization_servers": [self.url("/as")],
                "scopes_supported": ["shop"],
            })),
        );
    }

    fn server_metadata(&self, issuer: &str, registration: bool) {
        let mut metadata = json!({
            "issuer": issuer,
            "authorization_endpoint": self.url("/as/auth"),
            "token_endpoint": self.url("/as/token"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "offline_access", "shop"],
        });
        if registration {
            metadata["registration_endpoint"] = self.url("/as/reg").into();
        }
        self.answer(
            "GET /.well-known/oauth-authorization-server/as",
            json_answer(metadata),
        );
    }

    /// Every document of a sign-in: the 401, the resource metadata, the
    /// authorization server's metadata naming `issuer`, and registration
    /// where `registration` says it is offered.
    fn signing_in_as(&self, issuer: &str, registration: bool) {
        self.protected();
        self.resource_metadata();
        self.server_metadata(issuer, registration);
        if registration {
            self.registration();
        }
    }

    /// A sign-in whose documents are all in order.
    fn signing_in(&self) {
        self.signing_in_as(&self.url("/as"), true);
    }

    fn registration(&self) {
        self.answer(
            "POST /as/reg",
            Answer(
                201,
                vec![("content-type", "application/json".into())],
                json!({"client_id": "registered-client", "redirect_uris": []}).to_string(),
            ),
        );
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<(String, String)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let body = String::from_utf8_lossy(&data[head_end..]).to_string();
    Some((head, body))
}

fn tokens() -> (ServerTokens, Arc<MemorySecrets>) {
    let secrets = Arc::new(MemorySecrets::new());
    (ServerTokens::new("remote", secrets.clone()), secrets)
}

async fn begin_error(docs: &Documents) -> SignInError {
    let (tokens, secrets) = tokens();
    let error = match sign_in::begin(&docs.url("/mcp"), tokens, None).await {
        Ok(_) => panic!("the sign-in began"),
        Err(error) => error,
    };
    assert!(secrets.snapshot().is_empty(), "nothing is kept");
    error
}

fn query(url: &str) -> HashMap<String, String> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

#[tokio::test]
async fn the_401_leads_to_the_metadata_the_server_the_registration_and_an_authorization_url() {
    let docs = Documents::start().await;
    docs.signing_in();
    let (tokens, secrets) = tokens();
    let pending = sign_in::begin(&docs.url("/mcp"), tokens, None)
        .await
        .unwrap();

    let registered: Value = serde_json::from_str(&docs.received("POST /as/reg")[0]).unwrap();
    assert_eq!(registered["redirect_uris"], json!([pending.redirect_uri()]));
    assert_eq!(registered["token_endpoint_auth_method"], "none");
    assert!(
        pending.redirect_uri().starts_with("http://127.0.0.1:")
            && pending.redirect_uri().ends_with("/callback"),
        "{}",
        pending.redirect_uri()
    );

    let url = pending.authorization_url();
    assert!(url.starts_with(&docs.url("/as/auth?")), "{url}");
    let params = query(url);
    assert_eq!(params["response_type"], "code");
    assert_eq!(params["client_id"], "registered-client");
    assert_eq!(params["redirect_uri"], pending.redirect_uri());
    assert_eq!(params["resource"], docs.url("/mcp"));
    assert_eq!(params["code_challenge_method"], "S256");
    assert_eq!(params["code_challenge"].len(), 43, "a SHA-256 challenge");
    assert!(params["state"].len() >= 16, "an unguessable state");
    let scopes: Vec<&str> = params["scope"].split(' ').collect();
    assert!(
        scopes.contains(&"shop") && scopes.contains(&"offline_access"),
        "{scopes:?}"
    );
    assert_eq!(params["prompt"], "consent");
    assert!(
        secrets.snapshot().is_empty(),
        "nothing is kept before the code is exchanged"
    );
}

#[tokio::test]
async fn the_authorization_server_refusing_in_the_redirect_ends_the_sign_in_with_its_words() {
    let docs = Documents::start().await;
    docs.signing_in();
    let (tokens, secrets) = tokens();
    let pending = sign_in::begin(&docs.url("/mcp"), tokens, None)
        .await
        .unwrap();
    let state = query(pending.authorization_url())["state"].clone();
    let redirect = reqwest::Url::parse_with_params(
        pending.redirect_uri(),
        &[
            ("error", "access_denied"),
            ("error_description", "the user said no"),
            ("state", state.as_str()),
        ],
    )
    .unwrap();
    let cancel = CancellationToken::new();
    let (finished, _) = tokio::join!(
        pending.finish(&cancel, std::time::Duration::from_secs(30)),
        reqwest::get(redirect.as_str())
    );
    assert_eq!(
        finished.unwrap_err(),
        SignInError::Refused {
            error: "access_denied".into(),
            description: Some("the user said no".into())
        }
    );
    assert!(secrets.snapshot().is_empty());
}

#[tokio::test]
async fn malformed_protected_resource_metadata_stops_the_sign_in() {
    let docs = Documents::start().await;
    docs.protected();
    docs.answer(
        "GET /.well-known/oauth-protected-resource/mcp",
        Answer(
            200,
            vec![("content-type", "application/json".into())],
            "{\"resource\": ".into(),
        ),
    );
    let error = begin_error(&docs).await;
    assert!(matches!(error, SignInError::Metadata(_)), "{error:?}");
}

#[tokio::test]
async fn metadata_for_another_resource_stops_the_sign_in() {
    let docs = Documents::start().await;
    docs.protected();
    docs.answer(
        "GET /.well-known/oauth-protected-resource/mcp",
        json_answer(json!({
            "resource": "http://elsewhere.test/mcp",
            "authorization_servers": [docs.url("/as")],
        })),
    );
    docs.server_metadata(&docs.url("/as"), true);
    let error = begin_error(&docs).await;
    assert!(matches!(error, SignInError::Metadata(_)), "{error:?}");
}

#[tokio::test]
async fn an_authorization_server_that_names_another_issuer_than_the_metadata_is_refused() {
    let docs = Documents::start().await;
    docs.signing_in_as("http://elsewhere.test/as", true);
    let error = begin_error(&docs).await;
    assert_eq!(
        error,
        SignInError::IssuerMismatch {
            expected: docs.url("/as"),
            received: "http://elsewhere.test/as".into()
        }
    );
    assert!(
        docs.received("POST /as/reg").is_empty(),
        "no registration with it"
    );
}

#[tokio::test]
async fn a_server_that_publishes_no_metadata_is_not_signed_in_to_on_guessed_endpoints() {
    let docs = Documents::start().await;
    docs.answer("POST /mcp", Answer(401, vec![], String::new()));
    let error = begin_error(&docs).await;
    assert!(matches!(error, SignInError::Metadata(_)), "{error:?}");
}

#[tokio::test]
async fn a_sign_in_page_that_is_not_a_web_page_is_refused_before_the_app_registers() {
    for page in [
        "file:///etc/passwd",
        "smb://share.test/x",
        "vscode://vscode.git/clone?url=x",
        "javascript:alert(1)",
        "http://as.elsewhere.test/auth",
    ] {
        let docs = Documents::start().await;
        docs.signing_in();
        docs.answer(
            "GET /.well-known/oauth-authorization-server/as",
            json_answer(json!({
                "issuer": docs.url("/as"),
                "authorization_endpoint": page,
                "token_endpoint": docs.url("/as/token"),
                "registration_endpoint": docs.url("/as/reg"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            })),
        );
        let error = begin_error(&docs).await;
        assert!(
            matches!(error, SignInError::NotAWebPage(_)),
            "{page}: {error:?}"
        );
        assert!(
            docs.received("POST /as/reg").is_empty(),
            "{page}: no registration with it"
        );
    }
}

#[tokio::test]
async fn an_authorization_server_without_registration_needs_a_client_id() {
    let docs = Documents::start().await;
    let own = docs.url("/as");
    docs.signing_in_as(&own, false);
    let error = begin_error(&docs).await;
    assert!(matches!(error, SignInError::Registration(_)), "{error:?}");
    // With a client id given, no registration is needed.
    let (tokens, _) = tokens();
    let pending = sign_in::begin(&docs.url("/mcp"), tokens, Some("given-client"))
        .await
        .unwrap();
    assert_eq!(
        query(pending.authorization_url())["client_id"],
        "given-client"
    );
}

#[tokio::test]
async fn the_client_id_in_a_servers_settings_is_the_one_a_sign_in_uses() {
    let docs = Documents::start().await;
    let own = docs.url("/as");
    docs.signing_in_as(&own, false);
    let mut config =
        ragent::mcp::config::ServerConfig::untrusted(ragent::mcp::config::ServerTransport::Http {
            url: docs.url("/mcp"),
            headers: Default::default(),
        });
    config.oauth_client_id = Some("operator-given".into());
    let mut settings = ragent::settings::Settings::default();
    settings.mcp_servers.insert("docs".into(), config);
    let h = crate::support::Harness::start(crate::support::Setup {
        settings,
        ..crate::support::Setup::bare()
    })
    .await;
    let started = h.agent.begin_sign_in("docs").await.unwrap();
    assert_eq!(
        query(&started.authorization_url)["client_id"],
        "operator-given"
    );
}

#[tokio::test]
async fn a_server_that_lets_the_client_in_needs_no_sign_in() {
    let docs = Documents::start().await;
    docs.answer(
        "POST /mcp",
        json_answer(json!({"jsonrpc": "2.0", "id": 0, "result": {}})),
    );
    let error = begin_error(&docs).await;
    assert_eq!(
        error,
        SignInError::NotRequired {
            url: docs.url("/mcp")
        }
    );
}

#[tokio::test]
async fn a_server_that_does_not_answer_is_unreachable() {
    let closed = test_support::ports::ClosedPort::bind();
    let (tokens, _) = tokens();
    let url = format!("http://127.0.0.1:{}/mcp", closed.port());
    let error = match sign_in::begin(&url, tokens, None).await {
        Ok(_) => panic!("the sign-in began"),
        Err(error) => error,
    };
    assert!(
        matches!(error, SignInError::Unreachable { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_server_over_plain_http_on_another_computer_is_not_signed_in_to() {
    let (tokens, secrets) = tokens();
    let error = match sign_in::begin("http://shop.example.test/mcp", tokens, None).await {
        Ok(_) => panic!("the sign-in began"),
        Err(error) => error,
    };
    assert_eq!(
        error,
        SignInError::NotEncrypted {
            url: "http://shop.example.test/mcp".into()
        }
    );
    assert!(secrets.snapshot().is_empty());
}

/// Tokens kept for the server at `docs`' `/mcp`, as a sign-in to `issuer`
/// left them (`None`: as an older version kept them, without it); the
/// access token expired when `expired`, so a reconnect would refresh it.
fn kept_tokens(docs: &Documents, issuer: Option<&str>, expired: bool) -> Arc<MemorySecrets> {
    let secrets = Arc::new(MemorySecrets::new());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let credentials = json!({
        "client_id": "registered-client",
        "token_response": {
            "access_token": "old-access-token",
            "token_type": "Bearer",
            "expires_in": if expired { 1 } else { 3600 },
            "refresh_token": "old-refresh-token",
        },
        "granted_scopes": ["shop"],
        "token_received_at": if expired { now - 600 } else { now },
        "issuer": issuer,
        "resource": docs.url("/mcp"),
    });
    secrets
        .set("server/remote/oauth", &credentials.to_string())
        .unwrap();
    secrets
}

/// Connects to the server at `docs`' `/mcp` with the tokens in `secrets`.
async fn reconnect(docs: &Documents, secrets: &Arc<MemorySecrets>) -> Result<(), ConnectError> {
    let config = ServerConfig::untrusted(ServerTransport::Http {
        url: docs.url("/mcp"),
        headers: Default::default(),
    });
    let tokens = ServerTokens::new("remote", secrets.clone());
    config
        .connector("remote", None, None, Some(tokens))
        .connect()
        .await
        .map(|_| ())
}

/// Whether any request `docs` received carried one of the old tokens.
fn old_tokens_seen(docs: &Documents) -> Vec<String> {
    let bodies = docs.received.lock().unwrap().clone();
    let heads = docs.heads.lock().unwrap().clone();
    heads
        .into_iter()
        .chain(bodies.into_iter().map(|(_, body)| body))
        .filter(|text| text.contains("old-access-token") || text.contains("old-refresh-token"))
        .collect()
}

#[tokio::test]
async fn tokens_another_authorization_server_issued_are_forgotten_at_reconnect_and_sent_nowhere() {
    let docs = Documents::start().await;
    // The server now names its authorization server at `/as`; the tokens
    // were issued by another one, and their access token has expired.
    docs.signing_in();
    let secrets = kept_tokens(&docs, Some("https://previous-issuer.example"), true);

    let connected = reconnect(&docs, &secrets).await;
    assert!(
        matches!(connected, Err(ConnectError::NeedsSignIn)),
        "{connected:?}"
    );
    assert_eq!(
        docs.received("POST /as/token"),
        Vec::<String>::new(),
        "no refresh at the new issuer"
    );
    assert_eq!(old_tokens_seen(&docs), Vec::<String>::new());
    assert!(secrets.snapshot().is_empty(), "the tokens are forgotten");
}

#[tokio::test]
async fn tokens_kept_without_their_issuer_are_forgotten_at_reconnect_and_sent_nowhere() {
    let docs = Documents::start().await;
    docs.signing_in();
    let secrets = kept_tokens(&docs, None, true);

    let connected = reconnect(&docs, &secrets).await;
    assert!(
        matches!(connected, Err(ConnectError::NeedsSignIn)),
        "{connected:?}"
    );
    assert_eq!(docs.received("POST /as/token"), Vec::<String>::new());
    assert_eq!(old_tokens_seen(&docs), Vec::<String>::new());
    assert!(secrets.snapshot().is_empty(), "the tokens are forgotten");
}

#[tokio::test]
async fn tokens_from_the_issuer_the_server_names_go_with_its_requests() {
    let docs = Documents::start().await;
    docs.signing_in();
    let secrets = kept_tokens(&docs, Some(&docs.url("/as")), false);

    // The fixed server refuses every token; what matters is what was sent.
    let _ = reconnect(&docs, &secrets).await;
    let heads = docs.heads.lock().unwrap().clone();
    assert!(
        heads.iter().any(|head| head.starts_with("post /mcp")
            && head.contains("authorization: bearer old-access-token")),
        "the kept access token went with the request: {heads:?}"
    );
}
