//! The user's servers written out in the `{"mcpServers": …}` shape other
//! clients read (Claude Desktop, Cursor, Cline), for moving them to
//! another client or another machine. The built-in shop is not written:
//! the app supplies it from its own install, so it is never a setting.
//!
//! Secret values stay in the core, as everywhere: an env value or header
//! that is a `${env:NAME}` reference is written as it is, any other value
//! is written empty and named in [`McpExport::withheld`]. A secret value in
//! the args or the URL (`secret_args`) is written as a `${env:SERVER_NAME}`
//! reference instead, named in `withheld` with that variable: set in the
//! environment where the text goes, it fills the value in when the server
//! starts. Trust is this
//! app's own decision and is not written; `disabled` and `timeout` (in
//! seconds) are written when set, as Cline and Cherry Studio read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use ts_rs::TS;

use super::config::{ServerConfig, ServerTransport};
use super::env_refs::is_reference_only;
use super::secret_args::{self, Place};

/// The exported text, and the secrets it leaves empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpExport {
    pub text: String,
    pub withheld: Vec<WithheldSecret>,
}

/// A value not written: the user fills it in where the text goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WithheldSecret {
    pub server: String,
    pub kind: SecretKind,
    /// The env value's or header's name; the flag (without dashes) or the
    /// query parameter; `password` for a URL's user info.
    pub name: String,
    /// The environment variable written in its place (args and URL only;
    /// an env value or header is written empty).
    pub variable: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    Env,
    Header,
    /// A flag's value in the args.
    Arg,
    /// A query parameter's value in a URL.
    Query,
    /// The password in a URL's user info.
    UrlPassword,
}

/// Writes `servers` (the user's, from the settings).
pub fn export(servers: &BTreeMap<String, ServerConfig>) -> McpExport {
    let mut withheld = Vec::new();
    let mut out = Map::new();
    for (name, config) in servers {
        let transport = with_variables(name, &config.transport, &mut withheld);
        let mut keep = |kind: SecretKind, values: &BTreeMap<String, String>| -> Value {
            values
                .iter()
                .map(|(key, value)| {
                    let shown = if is_reference_only(value) {
                        value.clone()
                    } else {
                        withheld.push(WithheldSecret {
                            server: name.clone(),
                            kind,
                            name: key.clone(),
                            variable: None,
                        });
                        String::new()
                    };
                    (key.clone(), Value::String(shown))
                })
                .collect::<Map<_, _>>()
                .into()
        };
        let mut entry = match &transport {
            ServerTransport::Stdio { command, args, env } => {
                let mut entry = json!({"command": command, "args": args});
                if !env.is_empty() {
                    entry["env"] = keep(SecretKind::Env, env);
                }
                entry
            }
            ServerTransport::Http { url, headers } => {
                let mut entry = json!({"type": "http", "url": url});
                if !headers.is_empty() {
                    entry["headers"] = keep(SecretKind::Header, headers);
                }
                entry
            }
        };
        if config.disabled {
            entry["disabled"] = Value::Bool(true);
        }
        if let Some(secs) = config.timeout_secs {
            entry["timeout"] = secs.into();
        }
        out.insert(name.clone(), entry);
    }
    let document = json!({ "mcpServers": out });
    McpExport {
        // A tree of strings, numbers and booleans always serializes.
        text: serde_json::to_string_pretty(&document).unwrap_or_default(),
        withheld,
    }
}

/// `transport` with each secret value of its args or URL written as a
/// `${env:…}` reference, each named in `withheld`. A value that is one
/// already, or is empty, is written as it is.
fn with_variables(
    server: &str,
    transport: &ServerTransport,
    withheld: &mut Vec<WithheldSecret>,
) -> ServerTransport {
    let mut out = transport.clone();
    let mut found = Vec::new();
    secret_args::for_each_value(&mut out, |spot, value| {
        if value.is_empty() || is_reference_only(value) {
            return;
        }
        let variable = variable_name(server, &spot.name);
        *value = format!("${{env:{variable}}}");
        let kind = match spot.place {
            Place::Flag => SecretKind::Arg,
            Place::Query => SecretKind::Query,
            Place::UrlPassword => SecretKind::UrlPassword,
        };
        found.push((
            spot.text,
            spot.range.start,
            kind,
            spot.name.clone(),
            variable,
        ));
    });
    // Named in the order they are written.
    found.sort_by_key(|(text, start, ..)| (*text, *start));
    withheld.extend(
        found
            .into_iter()
            .map(|(_, _, kind, name, variable)| WithheldSecret {
                server: server.to_string(),
                kind,
                name,
                variable: Some(variable),
            }),
    );
    out
}

/// `NOTES_API_KEY` for flag `api-key` of server `notes`: upper snake case,
/// every run of other characters one `_` (`token#2` gives `TOKEN_2`).
fn variable_name(server: &str, name: &str) -> String {
    let mut out = String::new();
    for c in format!("{server}_{name}").chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::mcp::import::plan;

    fn servers() -> BTreeMap<String, ServerConfig> {
        [
            (
                "notes".to_string(),
                ServerConfig {
                    timeout_secs: Some(45),
                    ..ServerConfig::untrusted(ServerTransport::Stdio {
                        command: "npx".into(),
                        args: vec!["-y".into(), "notes-mcp".into()],
                        env: [("TOKEN".to_string(), "${env:NOTES_TOKEN}".to_string())].into(),
                    })
                },
            ),
            (
                "tracker".to_string(),
                ServerConfig {
                    disabled: true,
                    ..ServerConfig::untrusted(ServerTransport::Http {
                        url: "https://tracker.example.com/mcp".into(),
                        headers: [(
                            "Authorization".to_string(),
                            "Bearer ${env:TRACKER_TOKEN}".to_string(),
                        )]
                        .into(),
                    })
                },
            ),
        ]
        .into()
    }

    #[test]
    fn an_export_imports_back_unchanged() {
        let servers = servers();
        let exported = export(&servers);
        assert_eq!(exported.withheld, vec![]);
        let import = plan(
            &exported.text,
            &["bitselect".into()],
            &BTreeMap::new(),
            |_| true,
        )
        .unwrap_or_else(|p| panic!("{p:?}"));
        // Back as they were, only turned off until the user turns them on.
        let turned_off: BTreeMap<String, ServerConfig> = servers
            .into_iter()
            .map(|(name, server)| {
                (
                    name,
                    ServerConfig {
                        disabled: true,
                        ..server
                    },
                )
            })
            .collect();
        assert_eq!(import.servers, turned_off);
        assert!(import.plan.servers.iter().all(|s| s.rename.is_none()));
        assert_eq!(import.plan.notes, vec![]);
    }

    #[test]
    fn the_export_is_in_the_mcp_servers_shape_without_trust() {
        let mut servers = servers();
        if let Some(server) = servers.get_mut("notes") {
            server.trusted = true;
        }
        let exported: Value = serde_json::from_str(&export(&servers).text).unwrap();
        assert_eq!(
            exported,
            json!({"mcpServers": {
                "notes": {"command": "npx", "args": ["-y", "notes-mcp"], "env": {"TOKEN": "${env:NOTES_TOKEN}"}, "timeout": 45},
                "tracker": {"type": "http", "url": "https://tracker.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TRACKER_TOKEN}"}, "disabled": true}
            }})
        );
    }

    #[test]
    fn secret_values_are_written_empty_and_named() {
        let servers: BTreeMap<String, ServerConfig> = [(
            "gh".to_string(),
            ServerConfig::untrusted(ServerTransport::Stdio {
                command: "gh-mcp".into(),
                args: vec![],
                env: [
                    ("TOKEN".to_string(), "ghp_SECRET".to_string()),
                    ("MIXED".to_string(), "${env:A}${input:b}".to_string()),
                ]
                .into(),
            }),
        )]
        .into();
        let exported = export(&servers);
        assert!(!exported.text.contains("SECRET"), "{}", exported.text);
        assert_eq!(
            exported.withheld,
            vec![
                WithheldSecret {
                    server: "gh".into(),
                    kind: SecretKind::Env,
                    name: "MIXED".into(),
                    variable: None,
                },
                WithheldSecret {
                    server: "gh".into(),
                    kind: SecretKind::Env,
                    name: "TOKEN".into(),
                    variable: None,
                },
            ]
        );
    }

    fn server_with_secret_args() -> BTreeMap<String, ServerConfig> {
        [
            (
                "notes".to_string(),
                ServerConfig::untrusted(ServerTransport::Stdio {
                    command: "npx".into(),
                    args: [
                        "notes-mcp",
                        "--api-key",
                        "sk-SECRET-1",
                        "--token=${env:MY_TOKEN}",
                        "--port",
                        "8080",
                    ]
                    .map(String::from)
                    .into(),
                    env: BTreeMap::new(),
                }),
            ),
            (
                "my-remote".to_string(),
                ServerConfig::untrusted(ServerTransport::Http {
                    url: "https://u:pw-SECRET-2@h.example/mcp?access_token=SECRET-3&page=2".into(),
                    headers: BTreeMap::new(),
                }),
            ),
        ]
        .into()
    }

    #[test]
    fn secret_args_and_url_values_are_written_as_variables_and_named() {
        let exported = export(&server_with_secret_args());
        assert!(!exported.text.contains("SECRET"), "{}", exported.text);
        let written: Value = serde_json::from_str(&exported.text).unwrap();
        assert_eq!(
            written["mcpServers"]["notes"]["args"],
            json!([
                "notes-mcp",
                "--api-key",
                "${env:NOTES_API_KEY}",
                "--token=${env:MY_TOKEN}",
                "--port",
                "8080"
            ])
        );
        assert_eq!(
            written["mcpServers"]["my-remote"]["url"],
            json!(
                "https://u:${env:MY_REMOTE_PASSWORD}@h.example/mcp?access_token=${env:MY_REMOTE_ACCESS_TOKEN}&page=2"
            )
        );
        let named: Vec<(SecretKind, &str, Option<&str>)> = exported
            .withheld
            .iter()
            .map(|w| (w.kind, w.name.as_str(), w.variable.as_deref()))
            .collect();
        assert_eq!(
            named,
            vec![
                (
                    SecretKind::UrlPassword,
                    "password",
                    Some("MY_REMOTE_PASSWORD")
                ),
                (
                    SecretKind::Query,
                    "access_token",
                    Some("MY_REMOTE_ACCESS_TOKEN")
                ),
                (SecretKind::Arg, "api-key", Some("NOTES_API_KEY")),
            ],
            "a reference already written is not withheld"
        );
    }

    #[test]
    fn an_exported_variable_imports_back_and_fills_the_value_in() {
        let exported = export(&server_with_secret_args());
        let import = plan(&exported.text, &[], &BTreeMap::new(), |_| true)
            .unwrap_or_else(|p| panic!("{p:?}"));
        let ServerTransport::Stdio { args, .. } = &import.servers["notes"].transport else {
            panic!("notes runs a command");
        };
        let lookup = |name: &str| (name == "NOTES_API_KEY").then(|| "sk-SECRET-1".to_string());
        assert_eq!(
            crate::mcp::env_refs::expand(&args[2], lookup).as_deref(),
            Ok("sk-SECRET-1")
        );
    }

    #[test]
    fn variable_names_are_upper_snake_case() {
        assert_eq!(variable_name("notes", "api-key"), "NOTES_API_KEY");
        assert_eq!(variable_name("my-notes", "token#2"), "MY_NOTES_TOKEN_2");
        assert_eq!(variable_name("s3", "apiKey"), "S3_APIKEY");
    }
}
