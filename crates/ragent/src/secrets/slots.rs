//! Which parts of the settings are secret, each under a stable slot name:
//! `model/api_key`, `model/header/<name>`, `server/<server>/env/<name>`,
//! `server/<server>/header/<name>`, and the secret values in a server's
//! args and URL (`mcp::secret_args`): `server/<server>/arg/<flag>`,
//! `server/<server>/query/<param>`, `server/<server>/userinfo/password`.
//! Server names cannot hold `/`, so names never collide. Pure: the stores
//! are elsewhere.

use crate::mcp::config::ServerTransport;
use crate::mcp::secret_args::{self, Place};
use crate::settings::Settings;

pub const API_KEY: &str = "model/api_key";

pub fn model_header(name: &str) -> String {
    format!("model/header/{name}")
}

pub fn server_env(server: &str, name: &str) -> String {
    format!("server/{server}/env/{name}")
}

pub fn server_header(server: &str, name: &str) -> String {
    format!("server/{server}/header/{name}")
}

/// The slot of a secret value in a server's args or URL, by its flag or
/// parameter name: reordering the args keeps each value in its slot.
pub fn server_part(server: &str, place: Place, name: &str) -> String {
    let kind = match place {
        Place::Flag => "arg",
        Place::Query => "query",
        Place::UrlPassword => "userinfo",
    };
    format!("server/{server}/{kind}/{name}")
}

/// Calls `f` with each secret value (not the API key) and its slot: map
/// values whole, and the secret parts of args and URLs.
fn visit_mut(settings: &mut Settings, mut f: impl FnMut(String, &mut String)) {
    for (name, value) in settings.model.extra_headers.iter_mut() {
        f(model_header(name), value);
    }
    for (server, config) in settings.mcp_servers.iter_mut() {
        match &mut config.transport {
            ServerTransport::Stdio { env, .. } => {
                for (name, value) in env.iter_mut() {
                    f(server_env(server, name), value);
                }
            }
            ServerTransport::Http { headers, .. } => {
                for (name, value) in headers.iter_mut() {
                    f(server_header(server, name), value);
                }
            }
        }
        secret_args::for_each_value(&mut config.transport, |spot, value| {
            f(server_part(server, spot.place, &spot.name), value);
        });
    }
}

/// The settings with every secret value taken out (names kept, values
/// empty, no API key), and the values taken, by slot.
pub fn split(settings: &Settings) -> (Settings, Vec<(String, String)>) {
    let mut doc = settings.clone();
    let mut values = Vec::new();
    if let Some(key) = doc.model.api_key.take() {
        values.push((API_KEY.to_string(), key));
    }
    visit_mut(&mut doc, |slot, value| {
        values.push((slot, std::mem::take(value)));
    });
    (doc, values)
}

/// A stored document with its secrets filled in from `lookup`. A slot the
/// lookup does not know keeps what the document holds: a value an older
/// version stored inline, or nothing.
pub fn fill<E>(
    doc: &Settings,
    mut lookup: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<Settings, E> {
    let mut settings = doc.clone();
    if let Some(key) = lookup(API_KEY)? {
        settings.model.api_key = Some(key);
    }
    let mut failure = None;
    visit_mut(&mut settings, |slot, value| {
        if failure.is_some() {
            return;
        }
        match lookup(&slot) {
            Ok(Some(found)) => *value = found,
            Ok(None) => {}
            Err(e) => failure = Some(e),
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(settings),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::mcp::config::ServerConfig;

    fn with_secrets() -> Settings {
        let mut settings = Settings::default();
        settings.model.api_key = Some("sk-1".into());
        settings.model.extra_headers = [("X-Org".to_string(), "org-secret".to_string())].into();
        settings.mcp_servers.insert(
            "notes".into(),
            ServerConfig {
                transport: ServerTransport::Stdio {
                    command: "npx".into(),
                    args: ["notes-mcp", "--api-key", "sk-arg", "--verbose", "file.txt"]
                        .map(String::from)
                        .into(),
                    env: [("TOKEN".to_string(), "t".to_string())].into(),
                },
                trusted: false,
                disabled: false,
                timeout_secs: None,
                oauth_client_id: None,
                page_origins: Vec::new(),
                ucp: None,
            },
        );
        settings.mcp_servers.insert(
            "remote".into(),
            ServerConfig {
                transport: ServerTransport::Http {
                    url: "https://u:pw-url@h/mcp?token=q-tok&page=2".into(),
                    headers: [("Authorization".to_string(), "Bearer b".to_string())].into(),
                },
                trusted: false,
                disabled: false,
                timeout_secs: None,
                oauth_client_id: None,
                page_origins: Vec::new(),
                ucp: None,
            },
        );
        settings
    }

    #[test]
    fn splitting_keeps_names_and_takes_every_value_and_filling_puts_them_back() {
        let settings = with_secrets();
        let (doc, values) = split(&settings);
        let text = serde_json::to_string(&doc).unwrap();
        for secret in [
            "sk-1",
            "org-secret",
            "\"t\"",
            "Bearer b",
            "sk-arg",
            "pw-url",
            "q-tok",
        ] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert!(text.contains("X-Org") && text.contains("TOKEN") && text.contains("Authorization"));
        let values: BTreeMap<String, String> = values.into_iter().collect();
        assert_eq!(
            values,
            [
                ("model/api_key", "sk-1"),
                ("model/header/X-Org", "org-secret"),
                ("server/notes/arg/api-key", "sk-arg"),
                ("server/notes/env/TOKEN", "t"),
                ("server/remote/header/Authorization", "Bearer b"),
                ("server/remote/query/token", "q-tok"),
                ("server/remote/userinfo/password", "pw-url"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        );
        let filled = fill(&doc, |slot| Ok::<_, ()>(values.get(slot).cloned())).unwrap();
        assert_eq!(filled, settings);
    }

    #[test]
    fn the_document_keeps_each_secret_flag_and_parameter_with_an_empty_value() {
        let (doc, _) = split(&with_secrets());
        let ServerTransport::Stdio { args, .. } = &doc.mcp_servers["notes"].transport else {
            panic!("notes runs a command");
        };
        assert_eq!(
            args,
            &["notes-mcp", "--api-key", "", "--verbose", "file.txt"].map(String::from)
        );
        let ServerTransport::Http { url, .. } = &doc.mcp_servers["remote"].transport else {
            panic!("remote is reached over HTTP");
        };
        assert_eq!(url, "https://u:@h/mcp?token=&page=2");
        // Split again, the emptied document has the same slots.
        let (again, values) = split(&doc);
        assert_eq!(again, doc);
        assert!(
            values
                .iter()
                .any(|(slot, _)| slot == "server/notes/arg/api-key")
        );
    }

    /// The notes server's args, as given.
    fn notes_args(settings: &mut Settings) -> &mut Vec<String> {
        match settings
            .mcp_servers
            .get_mut("notes")
            .map(|s| &mut s.transport)
        {
            Some(ServerTransport::Stdio { args, .. }) => args,
            _ => panic!("notes runs a command"),
        }
    }

    #[test]
    fn reordered_args_get_each_value_back_by_its_flag() {
        let mut settings = with_secrets();
        *notes_args(&mut settings) = ["--token=tk", "--api-key", "sk-arg"]
            .map(String::from)
            .into();
        let (doc, values) = split(&settings);
        let values: BTreeMap<String, String> = values.into_iter().collect();
        // The user moves the flags about; the document keeps them empty.
        let mut moved = doc.clone();
        *notes_args(&mut moved) = ["--api-key", "", "--token="].map(String::from).into();
        let mut filled = fill(&moved, |slot| Ok::<_, ()>(values.get(slot).cloned())).unwrap();
        assert_eq!(
            notes_args(&mut filled),
            &["--api-key", "sk-arg", "--token=tk"].map(String::from)
        );
    }
}
