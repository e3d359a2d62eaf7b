//! MCP server configuration in the standard `mcpServers` JSON shape, plus a
//! `trusted` flag per server. A server a user adds is untrusted unless the
//! user says otherwise: its tool annotations are then only hints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::page_origins::PageOrigins;

/// The longest call timeout a server may have: a day.
pub const MAX_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// A call timeout a server may have: a second to a day.
pub fn timeout_is_valid(secs: u64) -> bool {
    (1..=MAX_TIMEOUT_SECS).contains(&secs)
}

/// One configured server, its secret values (env values, headers) held as
/// `S`: their values in the core ([`ServerConfig`]), what the page sees and
/// asks of them elsewhere (`settings_view`). The one shape of a server: a
/// field added here is stored, shown and edited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
pub struct ServerConfigWith<S> {
    #[serde(flatten)]
    pub transport: ServerTransportWith<S>,
    /// Whether the server's tool annotations are believed. Off unless set.
    #[serde(default)]
    pub trusted: bool,
    /// Kept in the settings but not started; its tools are not offered.
    #[serde(default)]
    pub disabled: bool,
    /// How long one tool call may take, in seconds; the hub's default
    /// when unset.
    #[serde(default)]
    #[ts(type = "number | null")]
    pub timeout_secs: Option<u64>,
    /// For an HTTP server whose authorization server registers no clients
    /// itself: the client id to sign in with, as its operator gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub oauth_client_id: Option<String>,
    /// Origins besides its own address whose pages it may send the user
    /// to (`https://pay.example.com`), as the user declared them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub page_origins: Vec<String>,
    /// The server is a merchant's shopping service under the commerce
    /// standard (UCP): its checkouts are signed by the merchant at this
    /// origin and completed only with the shopper's mandate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub ucp: Option<UcpMerchant>,
}

/// A UCP merchant, as a server's settings name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UcpMerchant {
    /// Where its business profile (`/.well-known/ucp`) and keys are:
    /// `https://shop.example`, no path.
    pub origin: String,
}

/// A server as the core keeps it: secret values in place.
pub type ServerConfig = ServerConfigWith<String>;

/// Where a secret value sits in a server's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerSecret<'a> {
    Env(&'a str),
    Header(&'a str),
}

impl<S> ServerConfigWith<S> {
    /// The same server with each secret value turned into `f`'s answer for
    /// it (`Err` stops at the first refused).
    pub fn try_map_secrets<T, E>(
        self,
        f: impl FnMut(ServerSecret<'_>, S) -> Result<T, E>,
    ) -> Result<ServerConfigWith<T>, E> {
        Ok(ServerConfigWith {
            transport: self.transport.try_map_secrets(f)?,
            trusted: self.trusted,
            disabled: self.disabled,
            timeout_secs: self.timeout_secs,
            oauth_client_id: self.oauth_client_id,
            page_origins: self.page_origins,
            ucp: self.ucp,
        })
    }
}

impl ServerConfig {
    /// An enabled, untrusted server with the default call timeout.
    pub fn untrusted(transport: ServerTransport) -> Self {
        ServerConfig {
            transport,
            trusted: false,
            disabled: false,
            timeout_secs: None,
            oauth_client_id: None,
            page_origins: Vec::new(),
            ucp: None,
        }
    }

    /// The web pages it may send the user to: its URL's origin (for a
    /// server over HTTP) and the origins declared for it.
    pub fn pages(&self) -> PageOrigins {
        let address = match &self.transport {
            ServerTransport::Http { url, .. } => Some(url.as_str()),
            ServerTransport::Stdio { .. } => None,
        };
        PageOrigins::of(address, &self.page_origins)
    }
}

/// How to reach a server: a child process over stdio, or streamable HTTP.
/// Env and header values are held as `S`. Its `Debug` hides them, as they
/// often hold tokens, and the secret values in args and URL (`secret_args`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(untagged)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
pub enum ServerTransportWith<S> {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, S>,
    },
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, S>,
    },
}

/// A transport as the core keeps it: secret values in place.
pub type ServerTransport = ServerTransportWith<String>;

impl<S> ServerTransportWith<S> {
    /// The same transport with each env or header value turned into `f`'s
    /// answer for it.
    pub fn try_map_secrets<T, E>(
        self,
        mut f: impl FnMut(ServerSecret<'_>, S) -> Result<T, E>,
    ) -> Result<ServerTransportWith<T>, E> {
        Ok(match self {
            ServerTransportWith::Stdio { command, args, env } => ServerTransportWith::Stdio {
                command,
                args,
                env: map_values(env, |name, value| f(ServerSecret::Env(name), value))?,
            },
            ServerTransportWith::Http { url, headers } => ServerTransportWith::Http {
                url,
                headers: map_values(headers, |name, value| f(ServerSecret::Header(name), value))?,
            },
        })
    }
}

/// A map with each value turned into `f`'s answer for it.
pub(crate) fn map_values<S, T, E>(
    map: BTreeMap<String, S>,
    mut f: impl FnMut(&str, S) -> Result<T, E>,
) -> Result<BTreeMap<String, T>, E> {
    map.into_iter()
        .map(|(name, value)| {
            let mapped = f(&name, value)?;
            Ok((name, mapped))
        })
        .collect()
}

/// A configuration file: `{"mcpServers": {"name": {...}}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServersFile {
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: BTreeMap<String, ServerConfig>,
}

/// A configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("the mcpServers configuration is not valid JSON of the expected shape: {0}")]
    Shape(String),
    #[error(
        "server name {0:?} is not allowed: use letters, digits, '-' and single '_' (no \"__\", which separates server and tool)"
    )]
    BadServerName(String),
    #[error("server name {0:?} is used twice")]
    DuplicateServer(String),
}

impl McpServersFile {
    /// Parses and validates a configuration file's text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let file: McpServersFile =
            serde_json::from_str(text).map_err(|e| ConfigError::Shape(e.to_string()))?;
        for name in file.mcp_servers.keys() {
            validate_server_name(name)?;
        }
        Ok(file)
    }

    pub fn to_json(&self) -> String {
        // A map of plain structs always serializes.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Server names become the prefix of `server__tool`, so they may not
/// contain the separator: otherwise `a__b` + `c` and `a` + `b__c` collide
/// and one server could shadow another's tool.
pub fn validate_server_name(name: &str) -> Result<(), ConfigError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if name.is_empty()
        || name.len() > 32
        || name.contains("__")
        || name.starts_with('_')
        || name.ends_with('_')
        || !name.chars().all(allowed)
    {
        return Err(ConfigError::BadServerName(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn reads_the_standard_shape_with_trust_defaulting_to_off() {
        let file = McpServersFile::parse(
            r#"{"mcpServers": {
                "shop": {"command": "bitselect-mcp", "args": ["--data-dir", "/tmp/x"], "trusted": true},
                "notes": {"command": "npx", "args": ["notes-mcp"], "env": {"TOKEN": "t"}},
                "remote": {"url": "http://127.0.0.1:8080/mcp"}
            }}"#,
        )
        .unwrap();
        assert_eq!(
            file.mcp_servers["shop"],
            ServerConfig {
                transport: ServerTransport::Stdio {
                    command: "bitselect-mcp".into(),
                    args: vec!["--data-dir".into(), "/tmp/x".into()],
                    env: BTreeMap::new(),
                },
                trusted: true,
                disabled: false,
                timeout_secs: None,
                oauth_client_id: None,
                page_origins: Vec::new(),
                ucp: None,
            }
        );
        assert!(!file.mcp_servers["notes"].trusted);
        assert_eq!(
            file.mcp_servers["remote"],
            ServerConfig::untrusted(ServerTransport::Http {
                url: "http://127.0.0.1:8080/mcp".into(),
                headers: BTreeMap::new(),
            })
        );
        let again = McpServersFile::parse(&file.to_json()).unwrap();
        assert_eq!(again, file);
    }

    #[test]
    fn debug_of_a_server_hides_env_and_header_values_and_secret_args() {
        let file = McpServersFile::parse(
            r#"{"mcpServers": {
                "notes": {"command": "npx", "args": ["--api-key", "arg-SECRET-3"], "env": {"TOKEN": "env-SECRET-1"}},
                "remote": {"url": "http://h/mcp?token=url-SECRET-4", "headers": {"Authorization": "Bearer hdr-SECRET-2"}}
            }}"#,
        )
        .unwrap();
        let printed = format!("{file:?}");
        assert!(!printed.contains("SECRET"), "{printed}");
        assert!(
            printed.contains("TOKEN") && printed.contains("Authorization"),
            "{printed}"
        );
    }

    #[test]
    fn server_names_with_the_separator_are_refused() {
        for bad in ["a__b", "", "_a", "a_", "名字", "a b", "a.b"] {
            assert_eq!(
                validate_server_name(bad),
                Err(ConfigError::BadServerName(bad.into())),
                "{bad:?}"
            );
        }
        for good in ["shop", "my-notes", "a_b", "S3"] {
            assert_eq!(validate_server_name(good), Ok(()), "{good:?}");
        }
        let err = McpServersFile::parse(r#"{"mcpServers": {"x__y": {"url": "http://h"}}}"#);
        assert_eq!(err, Err(ConfigError::BadServerName("x__y".into())));
    }

    #[test]
    fn an_entry_with_neither_command_nor_url_is_refused() {
        let err = McpServersFile::parse(r#"{"mcpServers": {"x": {"args": []}}}"#);
        assert!(matches!(err, Err(ConfigError::Shape(_))), "{err:?}");
    }
}
