//! The settings as the page sees and edits them. Secret values (the API
//! key, extra headers, server env values and headers) never go to the page:
//! the view says only whether the key is set and which names have values.
//! A save says, per secret, what to do with it ([`Secret`]): keep the
//! stored value, set a new one, or clear it.
//!
//! Secret values inside a server's args and URL (`mcp::secret_args`) are
//! shown as [`MASK`] in place: a save that sends the mask back at a secret
//! flag or parameter keeps the value stored under that name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::mcp::config::{ServerConfig, ServerTransport};
use crate::mcp::env_refs::is_reference_only;
use crate::mcp::page_origins::declared_origin;
use crate::mcp::secret_args::{self, Place, Spot};
use crate::policy::ToolOverride;
use crate::settings::{Appearance, ModelSettings, Settings, SettingsError, ShopConnection};
use crate::web_page::is_plain_http_elsewhere;

/// The settings without their secret values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingsView {
    pub model: ModelView,
    pub mcp_servers: BTreeMap<String, ServerView>,
    pub tool_overrides: BTreeMap<String, ToolOverride>,
    #[ts(type = "number")]
    pub card_expiry_secs: u64,
    pub max_turns_per_run: u32,
    pub history_token_budget: u32,
    pub appearance: Appearance,
    pub shop: ShopConnection,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelView {
    pub base_url: String,
    pub model: String,
    pub api_key_set: bool,
    /// The names of the extra headers; their values stay in the core.
    pub extra_headers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ServerView {
    #[serde(flatten)]
    pub transport: ServerTransportView,
    pub trusted: bool,
    pub disabled: bool,
    #[ts(type = "number | null")]
    pub timeout_secs: Option<u64>,
    /// The client id a sign-in uses where the server registers none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub oauth_client_id: Option<String>,
    /// Plain `http` to another computer: what the app sends it and what it
    /// answers cross the network unencrypted (the page marks it so, and
    /// the app does not sign in there). Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unencrypted: bool,
    /// Origins besides its own address whose pages it may send the user
    /// to. Left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub page_origins: Vec<String>,
}

/// A server's transport with the names of its env values or headers only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum ServerTransportView {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<String>,
    },
    Http {
        url: String,
        headers: Vec<String>,
    },
}

/// What a save does with one secret value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Secret {
    /// Keep the value stored now.
    Keep,
    /// Replace it with this one.
    Set { value: String },
    /// Remove it (for a map entry: remove the entry).
    Clear,
}

/// Settings as the page saves them: every field as shown, secrets as intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingsEdit {
    pub model: ModelEdit,
    pub mcp_servers: BTreeMap<String, ServerEdit>,
    pub tool_overrides: BTreeMap<String, ToolOverride>,
    #[ts(type = "number")]
    pub card_expiry_secs: u64,
    pub max_turns_per_run: u32,
    pub history_token_budget: u32,
    pub appearance: Appearance,
    /// Which shop; one not sent keeps the shop in force.
    #[serde(default)]
    pub shop: Option<ShopConnection>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelEdit {
    pub base_url: String,
    pub model: String,
    pub api_key: Secret,
    /// Every header the model gets; one left out is removed.
    pub extra_headers: BTreeMap<String, Secret>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ServerEdit {
    #[serde(flatten)]
    pub transport: ServerTransportEdit,
    pub trusted: bool,
    /// Kept but not started; off when a page does not send it.
    #[serde(default)]
    pub disabled: bool,
    /// Seconds a tool call may take; unset is the app's default.
    #[serde(default)]
    #[ts(type = "number | null")]
    pub timeout_secs: Option<u64>,
    /// The client id a sign-in uses where the server registers none;
    /// blank or unset: the app registers itself.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub oauth_client_id: Option<String>,
    /// Origins besides its own address whose pages it may send the user
    /// to, as typed: each is kept as its origin (`https://pay.example.com`).
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub page_origins: Vec<String>,
    /// The server's name before a rename: kept values are looked up there.
    #[serde(default)]
    pub previous_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum ServerTransportEdit {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, Secret>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, Secret>,
    },
}

impl SettingsView {
    pub fn of(settings: &Settings) -> SettingsView {
        SettingsView {
            model: ModelView {
                base_url: settings.model.base_url.clone(),
                model: settings.model.model.clone(),
                api_key_set: settings.model.api_key.is_some(),
                extra_headers: settings.model.extra_headers.keys().cloned().collect(),
            },
            mcp_servers: settings
                .mcp_servers
                .iter()
                .map(|(name, config)| (name.clone(), server_view(config)))
                .collect(),
            tool_overrides: settings.tool_overrides.clone(),
            card_expiry_secs: settings.card_expiry_secs,
            max_turns_per_run: settings.max_turns_per_run,
            history_token_budget: settings.history_token_budget,
            appearance: settings.appearance,
            shop: settings.shop.clone(),
        }
    }
}

/// What the page is shown in place of a secret value in args or a URL.
pub const MASK: &str = "••••••";

/// A server as the page may see it: env and header names only, secret
/// values in args and URL masked. A `${env:…}` reference is no secret and
/// is shown as it is.
pub fn server_view(config: &ServerConfig) -> ServerView {
    let unencrypted = matches!(&config.transport, ServerTransport::Http { url, .. } if is_plain_http_elsewhere(url));
    let mut masked = config.transport.clone();
    secret_args::for_each_value(&mut masked, |_, value| {
        if !value.is_empty() && !is_reference_only(value) {
            *value = MASK.to_string();
        }
    });
    let transport = match &masked {
        ServerTransport::Stdio { command, args, env } => ServerTransportView::Stdio {
            command: command.clone(),
            args: args.clone(),
            env: env.keys().cloned().collect(),
        },
        ServerTransport::Http { url, headers } => ServerTransportView::Http {
            url: url.clone(),
            headers: headers.keys().cloned().collect(),
        },
    };
    ServerView {
        transport,
        unencrypted,
        trusted: config.trusted,
        disabled: config.disabled,
        timeout_secs: config.timeout_secs,
        oauth_client_id: config.oauth_client_id.clone(),
        page_origins: config.page_origins.clone(),
    }
}

impl SettingsEdit {
    /// The full settings this edit asks for, given the ones in force.
    /// Keeping a value that is not stored is refused.
    pub fn apply(self, current: &Settings) -> Result<Settings, SettingsError> {
        let model = self.model.apply(&current.model)?;
        let mut mcp_servers = BTreeMap::new();
        for (name, edit) in self.mcp_servers {
            let before = current
                .mcp_servers
                .get(edit.previous_name.as_deref().unwrap_or(&name))
                .map(|config| &config.transport);
            let mut transport = match edit.transport {
                ServerTransportEdit::Stdio { command, args, env } => {
                    let stored = match before {
                        Some(ServerTransport::Stdio { env, .. }) => Some(env),
                        _ => None,
                    };
                    ServerTransport::Stdio {
                        command,
                        args,
                        env: resolve(env, stored, &format!("env of server {name}"))?,
                    }
                }
                ServerTransportEdit::Http { url, headers } => {
                    let stored = match before {
                        Some(ServerTransport::Http { headers, .. }) => Some(headers),
                        _ => None,
                    };
                    ServerTransport::Http {
                        url,
                        headers: resolve(headers, stored, &format!("header of server {name}"))?,
                    }
                }
            };
            keep_masked(&name, &mut transport, before)?;
            let config = ServerConfig {
                transport,
                trusted: edit.trusted,
                disabled: edit.disabled,
                timeout_secs: edit.timeout_secs,
                oauth_client_id: edit
                    .oauth_client_id
                    .map(|id| id.trim().to_string())
                    .filter(|id| !id.is_empty()),
                page_origins: page_origins(&name, edit.page_origins)?,
            };
            mcp_servers.insert(name, config);
        }
        Ok(Settings {
            model,
            mcp_servers,
            tool_overrides: self.tool_overrides,
            card_expiry_secs: self.card_expiry_secs,
            max_turns_per_run: self.max_turns_per_run,
            history_token_budget: self.history_token_budget,
            appearance: self.appearance,
            shop: self.shop.unwrap_or_else(|| current.shop.clone()),
        })
    }
}

impl ModelEdit {
    /// The model settings this edit asks for, given the ones in force: what
    /// a save stores, and what listing the provider's models uses before
    /// anything is saved.
    ///
    /// A kept key or header goes only to the address it was saved for: at
    /// another base URL (a provider the user is trying, or one a pasted
    /// setting points at) it must be given again.
    pub fn apply(self, current: &ModelSettings) -> Result<ModelSettings, SettingsError> {
        if !same_endpoint(&self.base_url, &current.base_url) {
            let kept_key = matches!(self.api_key, Secret::Keep) && current.api_key.is_some();
            let kept_header = self
                .extra_headers
                .iter()
                .find(|(_, secret)| matches!(secret, Secret::Keep));
            let kept = match (kept_key, kept_header) {
                (true, _) => Some("the API key".to_string()),
                (false, Some((name, _))) => Some(format!("model header {name:?}")),
                (false, None) => None,
            };
            if let Some(what) = kept {
                return Err(SettingsError::KeptForAnotherAddress {
                    what,
                    saved_for: current.base_url.clone(),
                    base_url: self.base_url,
                });
            }
        }
        let api_key = match self.api_key {
            Secret::Keep => current.api_key.clone(),
            Secret::Set { value } => Some(value),
            Secret::Clear => None,
        };
        let extra_headers = resolve(
            self.extra_headers,
            Some(&current.extra_headers),
            "model header",
        )?;
        Ok(ModelSettings {
            base_url: self.base_url,
            model: self.model,
            api_key,
            extra_headers,
        })
    }
}

/// The origins a server's edit declares, each as settings keep it; blank
/// lines left out, one named twice kept once.
fn page_origins(server: &str, typed: Vec<String>) -> Result<Vec<String>, SettingsError> {
    let mut origins: Vec<String> = Vec::new();
    for text in typed.iter().filter(|text| !text.trim().is_empty()) {
        let origin = declared_origin(text).map_err(|why| SettingsError::PageOrigin {
            server: server.to_string(),
            why,
        })?;
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}

/// Whether two base URLs name the same endpoint: the same URL once parsed
/// (host case, default port), trailing slashes aside.
fn same_endpoint(a: &str, b: &str) -> bool {
    let normal = |text: &str| {
        let text = text.trim();
        let parsed = url::Url::parse(text).map_or_else(|_| text.to_string(), |url| url.to_string());
        parsed.trim_end_matches('/').to_string()
    };
    normal(a) == normal(b)
}

/// The masks in an edited server's args or URL replaced by the values
/// stored under the same flag or parameter. A mask with nothing stored to
/// keep (a new flag, a renamed one, or a mask moved elsewhere) is refused.
fn keep_masked(
    server: &str,
    edited: &mut ServerTransport,
    stored: Option<&ServerTransport>,
) -> Result<(), SettingsError> {
    let stored = stored.map(secret_args::values).unwrap_or_default();
    let mut missing = None;
    secret_args::for_each_value(edited, |spot, value| {
        if value != MASK {
            return;
        }
        match stored.get(&(spot.place, spot.name.clone())) {
            Some(kept) => *value = kept.clone(),
            None => missing = missing.take().or_else(|| Some(spot_text(spot))),
        }
    });
    let left = secret_args::texts(edited)
        .iter()
        .position(|text| text.contains(MASK));
    let what = missing.or_else(|| {
        left.map(|index| match edited {
            ServerTransport::Stdio { .. } => format!("argument {}", index + 1),
            ServerTransport::Http { .. } => "the URL".to_string(),
        })
    });
    match what {
        Some(what) => Err(SettingsError::MaskWithoutValue {
            server: server.to_string(),
            what,
        }),
        None => Ok(()),
    }
}

/// A secret's place, as an error names it.
fn spot_text(spot: &Spot) -> String {
    match spot.place {
        Place::Flag => format!("the value of flag {:?}", spot.name),
        Place::Query => format!("URL parameter {:?}", spot.name),
        Place::UrlPassword => "the URL's password".to_string(),
    }
}

/// A map of secrets as edited: kept entries take the stored value, set
/// ones the new value, cleared ones are left out.
fn resolve(
    edited: BTreeMap<String, Secret>,
    stored: Option<&BTreeMap<String, String>>,
    what: &str,
) -> Result<BTreeMap<String, String>, SettingsError> {
    let mut out = BTreeMap::new();
    for (name, secret) in edited {
        match secret {
            Secret::Keep => {
                let value = stored
                    .and_then(|values| values.get(&name))
                    .ok_or_else(|| SettingsError::NothingToKeep(format!("{what} {name:?}")))?;
                out.insert(name, value.clone());
            }
            Secret::Set { value } => {
                out.insert(name, value);
            }
            Secret::Clear => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn stored() -> Settings {
        let mut settings = Settings::default();
        settings.model.api_key = Some("sk-stored".into());
        settings.model.extra_headers = [
            ("X-Org".to_string(), "bit".to_string()),
            ("X-Team".to_string(), "t1".to_string()),
        ]
        .into();
        settings.mcp_servers.insert(
            "notes".into(),
            ServerConfig {
                transport: ServerTransport::Stdio {
                    command: "npx".into(),
                    args: vec!["notes-mcp".into()],
                    env: [("TOKEN".to_string(), "tok-stored".to_string())].into(),
                },
                trusted: false,
                disabled: false,
                timeout_secs: None,
                oauth_client_id: None,
                page_origins: Vec::new(),
            },
        );
        settings
    }

    fn keep_all(settings: &Settings) -> SettingsEdit {
        let view = SettingsView::of(settings);
        let keep = |names: &[String]| {
            names
                .iter()
                .map(|n| (n.clone(), Secret::Keep))
                .collect::<BTreeMap<_, _>>()
        };
        SettingsEdit {
            model: ModelEdit {
                base_url: view.model.base_url,
                model: view.model.model,
                api_key: Secret::Keep,
                extra_headers: keep(&view.model.extra_headers),
            },
            mcp_servers: view
                .mcp_servers
                .into_iter()
                .map(|(name, server)| {
                    let transport = match server.transport {
                        ServerTransportView::Stdio { command, args, env } => {
                            ServerTransportEdit::Stdio {
                                command,
                                args,
                                env: keep(&env),
                            }
                        }
                        ServerTransportView::Http { url, headers } => ServerTransportEdit::Http {
                            url,
                            headers: keep(&headers),
                        },
                    };
                    let edit = ServerEdit {
                        transport,
                        trusted: server.trusted,
                        disabled: server.disabled,
                        timeout_secs: server.timeout_secs,
                        oauth_client_id: server.oauth_client_id,
                        page_origins: server.page_origins,
                        previous_name: None,
                    };
                    (name, edit)
                })
                .collect(),
            tool_overrides: view.tool_overrides,
            card_expiry_secs: view.card_expiry_secs,
            max_turns_per_run: view.max_turns_per_run,
            history_token_budget: view.history_token_budget,
            appearance: view.appearance,
            shop: Some(view.shop),
        }
    }

    #[test]
    fn a_save_without_the_shop_keeps_the_shop_in_force() {
        let mut current = stored();
        current.shop = ShopConnection::Online {
            url: "https://shop.example/mcp".into(),
        };
        let mut edit = keep_all(&current);
        edit.shop = None;
        assert_eq!(edit.apply(&current).unwrap().shop, current.shop);
        let mut edit = keep_all(&current);
        edit.shop = Some(ShopConnection::Local);
        assert_eq!(edit.apply(&current).unwrap().shop, ShopConnection::Local);
    }

    #[test]
    fn the_view_says_which_secrets_are_set_without_their_values() {
        let view = SettingsView::of(&stored());
        let text = serde_json::to_string(&view).unwrap();
        for secret in ["sk-stored", "bit", "t1", "tok-stored"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(view.model.api_key_set);
        assert_eq!(view.model.extra_headers, vec!["X-Org", "X-Team"]);
        assert_eq!(
            serde_json::to_value(&view.mcp_servers["notes"]).unwrap(),
            json!({"command": "npx", "args": ["notes-mcp"], "env": ["TOKEN"], "trusted": false, "disabled": false, "timeout_secs": null})
        );
        assert!(!SettingsView::of(&Settings::default()).model.api_key_set);
    }

    #[test]
    fn keeping_every_secret_gives_back_the_stored_settings() {
        let current = stored();
        assert_eq!(keep_all(&current).apply(&current).unwrap(), current);
    }

    #[test]
    fn a_set_secret_replaces_the_stored_one_and_a_cleared_one_is_removed() {
        let current = stored();
        let mut edit = keep_all(&current);
        edit.model.api_key = Secret::Set {
            value: "sk-new".into(),
        };
        edit.model
            .extra_headers
            .insert("X-Org".into(), Secret::Clear);
        edit.model
            .extra_headers
            .insert("X-New".into(), Secret::Set { value: "n".into() });
        let applied = edit.apply(&current).unwrap();
        assert_eq!(applied.model.api_key.as_deref(), Some("sk-new"));
        assert_eq!(
            applied.model.extra_headers,
            [
                ("X-New".to_string(), "n".to_string()),
                ("X-Team".to_string(), "t1".to_string())
            ]
            .into()
        );
        let mut clear = keep_all(&current);
        clear.model.api_key = Secret::Clear;
        assert_eq!(clear.apply(&current).unwrap().model.api_key, None);
    }

    #[test]
    fn a_server_over_plain_http_to_another_computer_is_marked_unencrypted() {
        let http = |url: &str| {
            server_view(&ServerConfig::untrusted(ServerTransport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            }))
            .unencrypted
        };
        assert!(http("http://notes.example/mcp"));
        assert!(!http("https://notes.example/mcp"));
        assert!(!http("http://127.0.0.1:8080/mcp"));
        assert!(!server_view(&stored().mcp_servers["notes"]).unencrypted);
    }

    #[test]
    fn a_kept_key_or_header_goes_only_to_the_base_url_it_was_saved_for() {
        let mut current = stored();
        current.model.base_url = "https://api.deepseek.com/v1".into();
        let mut same = keep_all(&current);
        same.model.base_url = " https://API.DeepSeek.com:443/v1/ ".into();
        assert!(
            same.apply(&current).is_ok(),
            "the same address, written otherwise"
        );

        let mut elsewhere = keep_all(&current);
        elsewhere.model.base_url = "https://collector.example/v1".into();
        assert!(matches!(
            elsewhere.clone().apply(&current),
            Err(SettingsError::KeptForAnotherAddress { ref what, .. }) if what == "the API key"
        ));
        elsewhere.model.api_key = Secret::Set {
            value: "sk-for-collector".into(),
        };
        assert!(matches!(
            elsewhere.clone().apply(&current),
            Err(SettingsError::KeptForAnotherAddress { ref what, .. }) if what.contains("X-Org")
        ));
        for secret in elsewhere.model.extra_headers.values_mut() {
            *secret = Secret::Clear;
        }
        let applied = elsewhere.apply(&current).unwrap();
        assert_eq!(applied.model.api_key.as_deref(), Some("sk-for-collector"));
        assert!(applied.model.extra_headers.is_empty());
    }

    #[test]
    fn a_renamed_server_keeps_its_env_values_and_keeping_an_unknown_one_is_refused() {
        let current = stored();
        let mut edit = keep_all(&current);
        let mut notes = edit.mcp_servers.remove("notes").unwrap();
        notes.previous_name = Some("notes".into());
        edit.mcp_servers.insert("notes2".into(), notes.clone());
        let applied = edit.clone().apply(&current).unwrap();
        assert_eq!(
            applied.mcp_servers["notes2"].transport,
            current.mcp_servers["notes"].transport
        );
        notes.previous_name = None;
        edit.mcp_servers.insert("notes2".into(), notes);
        assert!(matches!(
            edit.apply(&current),
            Err(SettingsError::NothingToKeep(what)) if what.contains("TOKEN")
        ));
    }

    /// The stored settings with a key in the notes server's args and a
    /// token in a remote server's URL.
    fn stored_with_secret_args() -> Settings {
        let mut settings = stored();
        if let Some(ServerConfig {
            transport: ServerTransport::Stdio { args, .. },
            ..
        }) = settings.mcp_servers.get_mut("notes")
        {
            *args = ["notes-mcp", "--api-key", "sk-arg", "--port", "8080"]
                .map(String::from)
                .into();
        }
        settings.mcp_servers.insert(
            "remote".into(),
            ServerConfig::untrusted(ServerTransport::Http {
                url: "https://h.example/mcp?token=q-tok&page=2".into(),
                headers: BTreeMap::new(),
            }),
        );
        settings
    }

    fn args_of<'a>(edit: &'a mut SettingsEdit, server: &str) -> &'a mut Vec<String> {
        match edit.mcp_servers.get_mut(server).map(|s| &mut s.transport) {
            Some(ServerTransportEdit::Stdio { args, .. }) => args,
            _ => panic!("{server} runs a command"),
        }
    }

    fn stored_args(settings: &Settings, server: &str) -> Vec<String> {
        match &settings.mcp_servers[server].transport {
            ServerTransport::Stdio { args, .. } => args.clone(),
            ServerTransport::Http { .. } => panic!("{server} runs a command"),
        }
    }

    #[test]
    fn the_page_sees_secret_args_and_url_parameters_masked() {
        let view = SettingsView::of(&stored_with_secret_args());
        let text = serde_json::to_string(&view).unwrap();
        assert!(
            !text.contains("sk-arg") && !text.contains("q-tok"),
            "{text}"
        );
        assert_eq!(
            view.mcp_servers["notes"].transport,
            ServerTransportView::Stdio {
                command: "npx".into(),
                args: ["notes-mcp", "--api-key", MASK, "--port", "8080"]
                    .map(String::from)
                    .into(),
                env: vec!["TOKEN".into()],
            }
        );
        assert_eq!(
            view.mcp_servers["remote"].transport,
            ServerTransportView::Http {
                url: format!("https://h.example/mcp?token={MASK}&page=2"),
                headers: vec![],
            }
        );
    }

    #[test]
    fn a_reference_to_a_variable_is_shown_as_written() {
        let mut settings = stored();
        settings.mcp_servers.insert(
            "remote".into(),
            ServerConfig::untrusted(ServerTransport::Http {
                url: "https://h/mcp?key=${env:REMOTE_KEY}".into(),
                headers: BTreeMap::new(),
            }),
        );
        let view = SettingsView::of(&settings);
        assert!(matches!(
            &view.mcp_servers["remote"].transport,
            ServerTransportView::Http { url, .. } if url == "https://h/mcp?key=${env:REMOTE_KEY}"
        ));
    }

    #[test]
    fn saving_the_masks_back_keeps_the_stored_values_even_reordered() {
        let current = stored_with_secret_args();
        assert_eq!(keep_all(&current).apply(&current).unwrap(), current);

        let mut edit = keep_all(&current);
        *args_of(&mut edit, "notes") = ["--port", "8081", "--api-key", MASK, "notes-mcp"]
            .map(String::from)
            .into();
        let applied = edit.apply(&current).unwrap();
        assert_eq!(
            stored_args(&applied, "notes"),
            ["--port", "8081", "--api-key", "sk-arg", "notes-mcp"].map(String::from)
        );
    }

    #[test]
    fn a_new_value_replaces_the_stored_one_and_a_removed_flag_takes_its_value_along() {
        let current = stored_with_secret_args();
        let mut edit = keep_all(&current);
        args_of(&mut edit, "notes")[2] = "sk-new".into();
        let applied = edit.apply(&current).unwrap();
        assert_eq!(stored_args(&applied, "notes")[2], "sk-new");

        let mut edit = keep_all(&current);
        *args_of(&mut edit, "notes") = vec!["notes-mcp".into()];
        let applied = edit.apply(&current).unwrap();
        let (_, slots) = crate::secrets::slots::split(&applied);
        assert!(
            !slots
                .iter()
                .any(|(slot, _)| slot.starts_with("server/notes/arg/")),
            "{slots:?}"
        );
    }

    #[test]
    fn a_renamed_server_keeps_its_masked_values() {
        let current = stored_with_secret_args();
        let mut edit = keep_all(&current);
        for (old, new) in [("notes", "notes2"), ("remote", "remote2")] {
            let mut server = edit.mcp_servers.remove(old).unwrap();
            server.previous_name = Some(old.into());
            edit.mcp_servers.insert(new.into(), server);
        }
        let applied = edit.apply(&current).unwrap();
        assert_eq!(stored_args(&applied, "notes2")[2], "sk-arg");
        assert_eq!(
            applied.mcp_servers["remote2"].transport,
            current.mcp_servers["remote"].transport
        );
    }

    #[test]
    fn a_mask_with_no_stored_value_behind_it_is_refused() {
        let current = stored_with_secret_args();
        let mut renamed_flag = keep_all(&current);
        args_of(&mut renamed_flag, "notes")[1] = "--token".into();
        let refused = renamed_flag.apply(&current);
        assert!(
            matches!(&refused, Err(SettingsError::MaskWithoutValue { server, what })
                if server == "notes" && what.contains("token")),
            "{refused:?}"
        );

        let mut moved = keep_all(&current);
        args_of(&mut moved, "notes")[4] = MASK.into();
        assert!(matches!(
            moved.apply(&current),
            Err(SettingsError::MaskWithoutValue { what, .. }) if what == "argument 5"
        ));

        let mut new_server = keep_all(&current);
        let notes = new_server.mcp_servers["notes"].clone();
        new_server.mcp_servers.insert("other".into(), notes);
        if let Some(ServerTransportEdit::Stdio { env, .. }) = new_server
            .mcp_servers
            .get_mut("other")
            .map(|s| &mut s.transport)
        {
            env.clear();
        }
        let refused = new_server.apply(&current).unwrap_err();
        assert!(
            refused.to_string().contains("type the value again"),
            "{refused}"
        );
    }

    #[test]
    fn the_chosen_language_and_theme_are_saved_with_the_rest() {
        use crate::settings::{Language, Theme};
        let current = stored();
        let mut edit = keep_all(&current);
        edit.appearance = Appearance {
            language: Some(Language::En),
            theme: Theme::Dark,
        };
        let applied = edit.apply(&current).unwrap();
        assert_eq!(applied.appearance, edit_appearance());
        assert_eq!(SettingsView::of(&applied).appearance, edit_appearance());

        fn edit_appearance() -> Appearance {
            Appearance {
                language: Some(Language::En),
                theme: Theme::Dark,
            }
        }
    }

    #[test]
    fn the_origins_declared_for_a_server_s_pages_are_kept_as_origins_and_shown() {
        let current = stored();
        let mut edit = keep_all(&current);
        edit.mcp_servers.get_mut("notes").unwrap().page_origins = vec![
            " https://Pay.Example.com/ ".into(),
            String::new(),
            "https://pay.example.com:443".into(),
            "http://127.0.0.1:8080".into(),
        ];
        let applied = edit.clone().apply(&current).unwrap();
        assert_eq!(
            applied.mcp_servers["notes"].page_origins,
            ["https://pay.example.com", "http://127.0.0.1:8080"]
        );
        assert_eq!(applied.validate(&[]), Ok(()));
        assert_eq!(
            SettingsView::of(&applied).mcp_servers["notes"].page_origins,
            ["https://pay.example.com", "http://127.0.0.1:8080"]
        );

        for refused in [
            "https://pay.example.com/checkout",
            "http://pay.example.com",
            "pay.example.com",
        ] {
            edit.mcp_servers.get_mut("notes").unwrap().page_origins = vec![refused.into()];
            assert!(
                matches!(
                    edit.clone().apply(&current),
                    Err(SettingsError::PageOrigin { ref server, .. }) if server == "notes"
                ),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_hand_edited_origin_that_is_not_kept_as_a_save_keeps_it_is_refused() {
        let mut settings = stored();
        settings.mcp_servers.get_mut("notes").unwrap().page_origins =
            vec!["https://pay.example.com/checkout".into()];
        assert!(matches!(
            settings.validate(&[]),
            Err(SettingsError::PageOrigin { .. })
        ));
    }

    #[test]
    fn a_secret_travels_as_a_tagged_intent() {
        assert_eq!(
            serde_json::to_value(Secret::Keep).unwrap(),
            json!({"action": "keep"})
        );
        assert_eq!(
            serde_json::from_value::<Secret>(json!({"action": "set", "value": "v"})).unwrap(),
            Secret::Set { value: "v".into() }
        );
        let server: ServerEdit = serde_json::from_value(json!({
            "url": "http://h/mcp", "headers": {"Authorization": {"action": "clear"}}, "trusted": true
        }))
        .unwrap();
        assert_eq!(server.previous_name, None);
        assert!(matches!(server.transport, ServerTransportEdit::Http { .. }));
    }
}
