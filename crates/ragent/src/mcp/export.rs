//! The user's servers written out in the `{"mcpServers": …}` shape other
//! clients read (Claude Desktop, Cursor, Cline), for moving them to
//! another client or another machine. The built-in shop is not written:
//! the app supplies it from its own install, so it is never a setting.
//!
//! Secret values stay in the core, as everywhere: an env value or header
//! that is a `${env:NAME}` reference is written as it is, any other value
//! is written empty and named in [`McpExport::withheld`]. Trust is this
//! app's own decision and is not written; `disabled` and `timeout` (in
//! seconds) are written when set, as Cline and Cherry Studio read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use ts_rs::TS;

use super::config::{ServerConfig, ServerTransport};
use super::env_refs::{Reference, references};

/// The exported text, and the secrets it leaves empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpExport {
    pub text: String,
    pub withheld: Vec<WithheldSecret>,
}

/// A value written empty: the user fills it in where the text goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WithheldSecret {
    pub server: String,
    pub kind: SecretKind,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    Env,
    Header,
}

/// Writes `servers` (the user's, from the settings).
pub fn export(servers: &BTreeMap<String, ServerConfig>) -> McpExport {
    let mut withheld = Vec::new();
    let mut out = Map::new();
    for (name, config) in servers {
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
                        });
                        String::new()
                    };
                    (key.clone(), Value::String(shown))
                })
                .collect::<Map<_, _>>()
                .into()
        };
        let mut entry = match &config.transport {
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

/// The value holds no secret of its own: only `${env:…}` references,
/// perhaps around plain words such as `Bearer `.
fn is_reference_only(value: &str) -> bool {
    let refs = references(value);
    !refs.is_empty() && refs.iter().all(|r| matches!(r, Reference::Env(_)))
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
                    name: "MIXED".into()
                },
                WithheldSecret {
                    server: "gh".into(),
                    kind: SecretKind::Env,
                    name: "TOKEN".into()
                },
            ]
        );
    }
}
