//! A real authorization server (panva's oidc-provider, started by
//! scripts/auth-server/server.mjs under node) on a loopback port, stopped
//! on drop; and a browser's part of a sign-in without a browser: the
//! authorization URL followed through the development login and consent
//! forms, submitted over HTTP, up to the redirect back to the client.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fails the test, not skips it, when the authorization server is not
/// installed.
fn require_oidc_provider() {
    let package = repo_root().join("node_modules/oidc-provider/package.json");
    assert!(
        package.exists(),
        "node_modules/oidc-provider is missing: run `npm ci` in the repository root \
         (the sign-in tests run a real authorization server from it)"
    );
}

/// The authorization server, running until dropped.
pub struct AuthServer {
    pub issuer: String,
    child: Child,
}

impl AuthServer {
    /// Starts it for these resource URLs, with access tokens living
    /// `ttl_secs` and its development login form on (the tests sign in
    /// with it), and waits for its ready line.
    pub async fn start(resources: &[&str], ttl_secs: u32) -> Self {
        Self::spawn(resources, ttl_secs, &[("AUTH_DEV_LOGIN", "1")]).await
    }

    /// Starts it as a deployment would, with no settings beyond the
    /// resources: its development login stays off.
    pub async fn start_as_deployed(resources: &[&str]) -> Self {
        Self::spawn(resources, 600, &[]).await
    }

    async fn spawn(resources: &[&str], ttl_secs: u32, settings: &[(&str, &str)]) -> Self {
        require_oidc_provider();
        let mut child = Command::new("node")
            .arg(repo_root().join("scripts/auth-server/server.mjs"))
            .env_remove("AUTH_DEV_LOGIN")
            .envs(settings.iter().copied())
            .env("AUTH_PORT", "0")
            .env("AUTH_RESOURCES", resources.join(","))
            .env("AUTH_ACCESS_TOKEN_TTL", ttl_secs.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (the sign-in tests need Node.js)");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("read the server's output") {
                if let Some(url) = line.strip_prefix("listening on ") {
                    return url.trim().to_owned();
                }
            }
            panic!("the authorization server exited before it was ready");
        })
        .await
        .expect("the authorization server is ready within 30 s");
        // Keep draining its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            issuer: ready,
            child,
        }
    }

    /// Takes it down (an outage), waiting until its process has ended, so
    /// nothing answers at its address from then on.
    pub async fn stop(&mut self) {
        let _ = self.child.kill().await;
    }
}

/// A browser for one sign-in: no redirects followed by itself, cookies kept
/// by name (the interaction and session cookies are all the flow needs).
struct Browser {
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
}

impl Browser {
    fn new() -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("http client");
        Self {
            http,
            cookies: BTreeMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn keep_cookies(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all(reqwest::header::SET_COOKIE) {
            let text = value.to_str().expect("ascii cookie");
            let pair = text.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() {
                    self.cookies.remove(name.trim());
                } else {
                    self.cookies
                        .insert(name.trim().to_owned(), value.to_owned());
                }
            }
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let response = request
            .header(reqwest::header::COOKIE, self.cookie_header())
            .send()
            .await
            .expect("the authorization server answers");
        self.keep_cookies(&response);
        response
    }
}

/// Where a 3xx points, made absolute against `base`.
fn location(response: &reqwest::Response, base: &str) -> Option<String> {
    let value = response.headers().get(reqwest::header::LOCATION)?;
    let target = value.to_str().expect("ascii location");
    let base = reqwest::Url::parse(base).expect("base URL");
    Some(base.join(target).expect("a URL").to_string())
}

/// The first page a browser lands on from `authorization_url` (after the
/// server's redirects): its status and text.
pub(crate) async fn first_page(authorization_url: &str) -> (reqwest::StatusCode, String) {
    let mut browser = Browser::new();
    let mut next = authorization_url.to_string();
    for _ in 0..12 {
        let response = browser.send(browser.http.get(&next)).await;
        match location(&response, &next) {
            Some(target) => next = target,
            None => {
                let status = response.status();
                return (status, response.text().await.expect("a page"));
            }
        }
    }
    panic!("{authorization_url} redirects without end");
}

/// Follows `authorization_url` as a browser would, signing in as `login`
/// on the development login form (any name becomes `sub`) and consenting,
/// and answers with the URL the server redirects back to: the
/// authorization URL's own `redirect_uri` with its `code` and `state`.
pub async fn log_in(authorization_url: &str, login: &str) -> String {
    let redirect_uri = reqwest::Url::parse(authorization_url)
        .expect("authorization URL")
        .query_pairs()
        .find(|(name, _)| name == "redirect_uri")
        .map(|(_, value)| value.into_owned())
        .expect("the authorization URL names its redirect_uri");
    let mut browser = Browser::new();
    let mut next = authorization_url.to_string();
    for _ in 0..12 {
        let response = browser.send(browser.http.get(&next)).await;
        if let Some(target) = location(&response, &next) {
            if target.starts_with(&redirect_uri) {
                return target;
            }
            next = target;
            continue;
        }
        let status = response.status();
        let page = response.text().await.expect("a page");
        assert!(status.is_success(), "{status} at {next}: {page}");
        // The interaction page: the login form, else the consent form.
        let form: &[(&str, &str)] = if page.contains("name=\"login\"") {
            &[("prompt", "login"), ("login", login), ("password", "any")]
        } else {
            assert!(
                page.contains("value=\"consent\""),
                "unexpected page: {page}"
            );
            &[("prompt", "consent")]
        };
        let submitted = browser.send(browser.http.post(&next).form(form)).await;
        next = location(&submitted, &next).unwrap_or_else(|| {
            panic!(
                "the form at {next} answered {} without a redirect",
                submitted.status()
            )
        });
    }
    panic!("the sign-in did not reach the redirect URI {redirect_uri}");
}
