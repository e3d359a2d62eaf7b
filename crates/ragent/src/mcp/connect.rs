//! How a connection to a server is made. Stdio and streamable HTTP come
//! from the configuration; anything else (an in-process server over a
//! duplex pipe in tests) implements [`Connect`] itself.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use rmcp::transport::IntoTransport;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, AuthorizationMetadataSource};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncBufReadExt;

use super::client::HubClient;
use super::config::{ServerConfig, ServerTransport};
use super::env_refs::{expand, process_env};
use super::login_path::LoginPath;
use super::secret_args::{hidden_in_url, hide_values};
use super::sign_in::ServerTokens;
use super::stdio::ChildProcess;
use crate::hashing::hash_json;

/// A live client session with a server.
pub type McpClient = RunningService<RoleClient, HubClient>;

/// A connection and, for a child process, its process id.
pub struct Connected {
    pub client: McpClient,
    pub pid: Option<u32>,
}

/// Why a connection was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The server answered 401: the user must sign in first.
    #[error("the server asks to sign in")]
    NeedsSignIn,
    #[error("{0}")]
    Failed(String),
}

impl From<String> for ConnectError {
    fn from(message: String) -> Self {
        ConnectError::Failed(message)
    }
}

/// Makes connections to one server; called again to restart it.
pub trait Connect: Send + Sync {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>>;
    /// Equal identities reach the same server the same way, so a
    /// reconfiguration keeps the running connection.
    fn identity(&self) -> String;
    /// For logs: never includes secrets.
    fn describe(&self) -> String;
}

/// The protocol revision asked for first: its `tools/call` may answer
/// `input_required`, which is how a server asks the user mid-call.
pub const PREFERRED_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The revision spoken with a server that refuses `server/discover`.
pub const LEGACY_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// Opens a client session: `server/discover` for [`PREFERRED_PROTOCOL`],
/// and `initialize` for [`LEGACY_PROTOCOL`] at once when the server
/// answers that it does not know it.
pub async fn start_client<T, E, A>(transport: T) -> Result<McpClient, ConnectError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![PREFERRED_PROTOCOL],
        legacy_version: Some(LEGACY_PROTOCOL),
    };
    HubClient::new()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(initialize_error)
}

/// A server's stderr log beyond this size is moved to `<file>.1` (replacing
/// the one before) when the server is next started, so each server keeps
/// at most about twice this.
pub const STDERR_LOG_ROLL_BYTES: u64 = 4 * 1024 * 1024;

/// The file a stdio server's stderr is appended to: `mcp-<server>.log`.
/// Server names are letters, digits, '-' and '_', so they are safe here.
pub fn stderr_log_path(log_dir: &Path, server: &str) -> PathBuf {
    log_dir.join(format!("mcp-{server}.log"))
}

impl ServerConfig {
    /// With a `log_dir`, a stdio server's stderr goes to its own file there;
    /// with a `login_path`, it is started with the login shell's PATH when
    /// the app's is minimal; with `tokens`, an HTTP server's requests carry
    /// the user's sign-in.
    pub fn connector(
        &self,
        name: &str,
        log_dir: Option<&Path>,
        login_path: Option<&Arc<LoginPath>>,
        tokens: Option<ServerTokens>,
    ) -> Arc<dyn Connect> {
        let identity = serde_json::to_value(&self.transport)
            .map(|v| hash_json(&v))
            .unwrap_or_default();
        match &self.transport {
            ServerTransport::Stdio { command, args, env } => Arc::new(StdioConnector {
                name: name.to_string(),
                command: command.clone(),
                args: args.clone(),
                env: env.clone().into_iter().collect(),
                identity,
                stderr_log: log_dir.map(|dir| stderr_log_path(dir, name)),
                login_path: login_path.cloned(),
            }),
            ServerTransport::Http { url, headers } => Arc::new(HttpConnector {
                url: url.clone(),
                headers: headers.clone().into_iter().collect(),
                identity,
                tokens,
            }),
        }
    }
}

/// `text` with its `${env:NAME}` filled in from the app's environment, or
/// why not, naming where the reference was (`what`) and the variable.
fn filled(text: &str, what: &str) -> Result<String, String> {
    expand(text, process_env).map_err(|unset| format!("{what}: {unset}"))
}

/// A server run as a child process speaking MCP on stdin/stdout.
pub struct StdioConnector {
    name: String,
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    identity: String,
    /// Where the child's stderr is appended; without one its lines are
    /// logged at debug level.
    stderr_log: Option<PathBuf>,
    /// Gives the PATH to start it with, when the app's is not enough.
    login_path: Option<Arc<LoginPath>>,
}

impl StdioConnector {
    pub fn new(name: &str, command: &str, args: Vec<String>, env: Vec<(String, String)>) -> Self {
        let identity = hash_json(&serde_json::json!([command, args, env]));
        StdioConnector {
            name: name.to_string(),
            command: command.to_string(),
            args,
            env,
            identity,
            stderr_log: None,
            login_path: None,
        }
    }

    /// Appends the server's stderr to `mcp-<name>.log` in `log_dir`.
    pub fn with_stderr_log(mut self, log_dir: &Path) -> Self {
        self.stderr_log = Some(stderr_log_path(log_dir, &self.name));
        self
    }
}

/// Opens a server's stderr log for appending, first moving a full one
/// aside.
fn open_stderr_log(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > STDERR_LOG_ROLL_BYTES) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        std::fs::rename(path, old)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

impl Connect for StdioConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(async move {
            let args = self
                .args
                .iter()
                .map(|arg| filled(arg, "an argument"))
                .collect::<Result<Vec<_>, _>>()?;
            let env = self
                .env
                .iter()
                .map(|(name, value)| Ok((name, filled(value, &format!("env {name}"))?)))
                .collect::<Result<Vec<_>, String>>()?;
            let mut command = tokio::process::Command::new(&self.command);
            // Set first, so a PATH in the server's own env still wins; the
            // program itself is also looked up along it.
            if let Some(login) = &self.login_path
                && let Some(path) = login.path().await
            {
                command.env("PATH", path);
            }
            command.args(args).envs(env);
            // The child writes its stderr straight into its file; no pipe to drain.
            let stderr_target = match &self.stderr_log {
                Some(path) => Stdio::from(
                    open_stderr_log(path).map_err(|e| format!("{}: {e}", path.display()))?,
                ),
                None => Stdio::piped(),
            };
            let (transport, stderr) = ChildProcess::spawn(command, stderr_target)
                .map_err(|e| format!("{}: {e}", self.command))?;
            let pid = transport.id();
            if let Some(stderr) = stderr {
                // The server's log goes to ours; an unread pipe would block it.
                let name = self.name.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::debug!(server = %name, "{line}");
                    }
                });
            }
            let client = start_client(transport).await?;
            Ok(Connected { client, pid })
        })
    }

    fn identity(&self) -> String {
        format!("stdio:{}", self.identity)
    }

    fn describe(&self) -> String {
        format!("stdio {}", self.command)
    }
}

/// A server reached over streamable HTTP.
pub struct HttpConnector {
    url: String,
    headers: Vec<(String, String)>,
    identity: String,
    /// Where the user's sign-in to it is kept; without, requests go bare.
    tokens: Option<ServerTokens>,
}

/// A failed initialization, a 401 told apart.
fn initialize_error(error: ClientInitializeError) -> ConnectError {
    if error.is_authorization_required() {
        ConnectError::NeedsSignIn
    } else {
        ConnectError::Failed(error.to_string())
    }
}

impl HttpConnector {
    /// The stored sign-in's access token goes with each request, refreshed
    /// when it is about to expire or the server refuses it; with none, the
    /// server's 401 comes back as [`ConnectError::NeedsSignIn`].
    async fn serve_signed_in(
        &self,
        tokens: &ServerTokens,
        config: StreamableHttpClientTransportConfig,
    ) -> Result<McpClient, ConnectError> {
        let failed = |e: rmcp::transport::auth::AuthError| ConnectError::Failed(e.to_string());
        let mut manager = AuthorizationManager::new(config.uri.as_ref())
            .await
            .map_err(failed)?;
        manager.set_credential_store(tokens.clone());
        let signed_in = tokens
            .stored()
            .await
            .map_err(|e| ConnectError::Failed(e.to_string()))?
            .is_some_and(|stored| stored.token_response.is_some());
        if signed_in {
            // The authorization server is found again (for a refresh) as at
            // sign-in: endpoints guessed from the URL are no evidence, and
            // no token goes to them; the server is asked without one.
            let resolution = manager.resolve_metadata().await.map_err(failed)?;
            if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
                tracing::warn!(url = %hidden_in_url(&config.uri), "no sign-in metadata published; the stored sign-in is not sent");
                return start_client(StreamableHttpClientTransport::from_config(config)).await;
            }
            // Tokens another authorization server issued go nowhere: not
            // to this one's token endpoint, not to the server.
            let issuer = resolution.metadata.issuer.clone();
            let kept = tokens
                .issued_by(issuer.as_deref())
                .await
                .map_err(|e| ConnectError::Failed(e.to_string()))?;
            if !kept {
                return start_client(StreamableHttpClientTransport::from_config(config)).await;
            }
            manager.set_metadata(resolution.metadata);
            manager.initialize_from_store().await.map_err(failed)?;
        }
        // An expired token is refreshed here, before the transport starts,
        // so a refresh that fails for another reason than a sign-in being
        // needed (the authorization server down) fails the start with it.
        match manager.get_access_token().await {
            Ok(_) | Err(rmcp::transport::auth::AuthError::AuthorizationRequired) => {}
            Err(error) => return Err(failed(error)),
        }
        let client = AuthClient::new(reqwest::Client::new(), manager);
        start_client(StreamableHttpClientTransport::with_client(client, config)).await
    }
}

impl Connect for HttpConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(async move {
            let url = filled(&self.url, "the URL")?;
            let mut headers = HashMap::new();
            for (name, value) in &self.headers {
                let value = filled(value, &format!("header {name}"))?;
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("bad header name {name:?}"))?;
                let value = HeaderValue::from_str(&value)
                    .map_err(|_| format!("bad value for header {name}"))?;
                headers.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(headers);
            let started = match &self.tokens {
                // The tokens kept for this very address, if any.
                Some(tokens) => self.serve_signed_in(&tokens.clone().at(&url), config).await,
                None => start_client(StreamableHttpClientTransport::from_config(config)).await,
            };
            // The HTTP library's messages quote the URL, secrets and all.
            let client = started.map_err(|error| match error {
                ConnectError::Failed(message) => ConnectError::Failed(hide_values(&message, &url)),
                other => other,
            })?;
            Ok(Connected { client, pid: None })
        })
    }

    fn identity(&self) -> String {
        format!("http:{}", self.identity)
    }

    fn describe(&self) -> String {
        format!("http {}", hidden_in_url(&self.url))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[tokio::test]
    async fn a_server_that_cannot_be_reached_is_described_without_the_token_in_its_url() {
        let closed = test_support::ports::ClosedPort::bind();
        let config = ServerConfig::untrusted(ServerTransport::Http {
            url: format!("http://127.0.0.1:{}/mcp?token=s3cret-tok", closed.port()),
            headers: BTreeMap::new(),
        });
        let connector = config.connector("remote", None, None, None);
        assert!(!connector.describe().contains("s3cret-tok"));
        let error = match connector.connect().await {
            Ok(_) => panic!("a closed port answered"),
            Err(error) => error.to_string(),
        };
        assert!(
            !error.is_empty() && !error.contains("s3cret-tok"),
            "{error}"
        );
    }
}
