//! The settings as the page sees and edits them: the core's own shape
//! ([`SettingsWith`]) with each secret value (the API key, extra headers,
//! server env values and headers) held as a [`Secret`]. The page is shown
//! every stored secret as [`Secret::Keep`], never its value, and edits the
//! view it got: a secret it leaves as it is stays, one it sets is replaced,
//! one it leaves out is removed. What the core works out for the page (which
//! servers are unencrypted) and what a save says besides the settings (which
//! servers were renamed) travel beside them, not inside.
//!
//! Secret values inside a server's args and URL (`mcp::secret_args`) are
//! shown as [`MASK`] in place: a save that sends the mask back at a secret
//! flag or parameter keeps the value stored under that name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::mcp::config::{
    ServerConfig, ServerConfigWith, ServerSecret, ServerTransport, ServerTransportWith,
};
use crate::mcp::env_refs::is_reference_only;
use crate::mcp::page_origins::declared_origin;
use crate::mcp::secret_args::{self, Place, Spot};
use crate::settings::{
    ModelSettings, ModelSettingsWith, SecretSpot, Settings, SettingsError, SettingsWith,
};
use crate::web_page::is_plain_http_elsewhere;

/// What the page is told of a secret value, and says of it in a save.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Secret {
    /// A value is stored: keep it.
    Keep,
    /// Replace it with this one (never sent to the page).
    Set { value: String },
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Keep => f.write_str("Keep"),
            Secret::Set { .. } => f.write_str("Set(<redacted>)"),
        }
    }
}

/// The settings as the page sees them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingsView {
    /// Every stored secret as [`Secret::Keep`]; secret values in args and
    /// URLs as [`MASK`].
    #[serde(flatten)]
    pub settings: SettingsWith<Secret>,
    /// The servers reached by plain `http` on another computer: what the
    /// app sends them and what they answer cross the network unencrypted
    /// (the page marks them so, and the app does not sign in there).
    pub unencrypted: Vec<String>,
}

/// Settings as the page saves them: the view it got, edited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingsEdit {
    #[serde(flatten)]
    pub settings: SettingsWith<Secret>,
    /// Servers renamed in this edit, new name to the name they were saved
    /// under: a kept value is looked up there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub renamed: BTreeMap<String, String>,
}

/// The model settings as the page sends them to try a provider before saving.
pub type ModelEdit = ModelSettingsWith<Secret>;

impl SettingsView {
    pub fn of(settings: &Settings) -> SettingsView {
        let mut shown = settings.clone().map_secrets(|_, _| Secret::Keep);
        for config in shown.mcp_servers.values_mut() {
            mask_secret_args(&mut config.transport);
        }
        SettingsView {
            settings: shown,
            unencrypted: settings
                .mcp_servers
                .iter()
                .filter(|(_, config)| config.is_unencrypted())
                .map(|(name, _)| name.clone())
                .collect(),
        }
    }
}

impl<S> ServerConfigWith<S> {
    /// Plain `http` to another computer.
    fn is_unencrypted(&self) -> bool {
        matches!(&self.transport, ServerTransportWith::Http { url, .. } if is_plain_http_elsewhere(url))
    }
}

/// What the page is shown in place of a secret value in args or a URL.
pub const MASK: &str = "••••••";

/// A server as the page may see it: every secret kept, secret values in
/// args and URL masked.
pub fn server_view(config: &ServerConfig) -> ServerConfigWith<Secret> {
    let Ok(mut shown) = config
        .clone()
        .try_map_secrets(|_, _| Ok::<_, std::convert::Infallible>(Secret::Keep));
    mask_secret_args(&mut shown.transport);
    shown
}

/// The secret values in args or URL replaced by [`MASK`]. A `${env:…}`
/// reference is no secret and is shown as it is.
fn mask_secret_args<S>(transport: &mut ServerTransportWith<S>) {
    secret_args::for_each_value(transport, |_, value| {
        if !value.is_empty() && !is_reference_only(value) {
            *value = MASK.to_string();
        }
    });
}

impl SettingsEdit {
    /// The full settings this edit asks for, given the ones in force.
    /// Keeping a value that is not stored is refused.
    pub fn apply(self, current: &Settings) -> Result<Settings, SettingsError> {
        let SettingsEdit { settings, renamed } = self;
        let saved_as = |server: &str| {
            renamed
                .get(server)
                .map_or(server, String::as_str)
                .to_string()
        };
        let base_url = settings.model.base_url.clone();
        let mut edited = settings.try_map_secrets(|spot, secret| match (secret, spot) {
            (Secret::Set { value }, _) => Ok(value),
            (Secret::Keep, SecretSpot::Server { server, secret }) => {
                server_value(current, &saved_as(server), secret)
                    .ok_or_else(|| SettingsError::NothingToKeep(spot_name(spot)))
            }
            (Secret::Keep, _) => kept_model_value(&current.model, &base_url, spot),
        })?;
        for (name, config) in edited.mcp_servers.iter_mut() {
            let before = current
                .mcp_servers
                .get(&saved_as(name))
                .map(|c| &c.transport);
            keep_masked(name, &mut config.transport, before)?;
            config.oauth_client_id = config
                .oauth_client_id
                .take()
                .map(|id| id.trim().to_string())
                .filter(|id| !id.is_empty());
            config.page_origins = page_origins(name, std::mem::take(&mut config.page_origins))?;
        }
        Ok(edited)
    }
}

impl ModelEdit {
    /// The model settings this edit asks for, given the ones in force: what
    /// listing the provider's models uses before anything is saved (a save
    /// resolves them with the rest, [`SettingsEdit::apply`]).
    pub fn apply(self, current: &ModelSettings) -> Result<ModelSettings, SettingsError> {
        let base_url = self.base_url.clone();
        self.try_map_secrets(|spot, secret| match secret {
            Secret::Set { value } => Ok(value),
            Secret::Keep => kept_model_value(current, &base_url, spot),
        })
    }
}

/// The stored value a kept key or model header stands for. It goes only to
/// the address it was saved for: at another base URL (a provider the user
/// is trying, or one a pasted setting points at) it must be given again.
fn kept_model_value(
    current: &ModelSettings,
    base_url: &str,
    spot: SecretSpot<'_>,
) -> Result<String, SettingsError> {
    if !same_endpoint(base_url, &current.base_url) {
        return Err(SettingsError::KeptForAnotherAddress {
            what: spot_name(spot),
            saved_for: current.base_url.clone(),
            base_url: base_url.to_string(),
        });
    }
    let stored = match spot {
        SecretSpot::ApiKey => current.api_key.clone(),
        SecretSpot::ModelHeader(name) => current.extra_headers.get(name).cloned(),
        SecretSpot::Server { .. } => None,
    };
    stored.ok_or_else(|| SettingsError::NothingToKeep(spot_name(spot)))
}

/// The value stored for a server's env value or header.
fn server_value(current: &Settings, server: &str, secret: ServerSecret<'_>) -> Option<String> {
    match (secret, &current.mcp_servers.get(server)?.transport) {
        (ServerSecret::Env(name), ServerTransport::Stdio { env, .. }) => env.get(name).cloned(),
        (ServerSecret::Header(name), ServerTransport::Http { headers, .. }) => {
            headers.get(name).cloned()
        }
        _ => None,
    }
}

/// A secret's place, as an error names it.
fn spot_name(spot: SecretSpot<'_>) -> String {
    match spot {
        SecretSpot::ApiKey => "the API key".to_string(),
        SecretSpot::ModelHeader(name) => format!("model header {name:?}"),
        SecretSpot::Server {
            server,
            secret: ServerSecret::Env(name),
        } => format!("env of server {server} {name:?}"),
        SecretSpot::Server {
            server,
            secret: ServerSecret::Header(name),
        } => format!("header of server {server} {name:?}"),
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn stored() -> Settings {
        let mut settings = Settings::default();
        settings.model.api_key = Some("sk-stored".into());
        settings.model.extra_headers = [
            ("X-Org".to_string(), "org-secret".to_string()),
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
                ucp: None,
            },
        );
        settings
    }

    /// What the page saves when the user changes nothing: the view it got.
    fn keep_all(settings: &Settings) -> SettingsEdit {
        SettingsEdit {
            settings: SettingsView::of(settings).settings,
            renamed: BTreeMap::new(),
        }
    }

    #[test]
    fn the_view_says_which_secrets_are_set_without_their_values() {
        let view = SettingsView::of(&stored());
        let text = serde_json::to_string(&view).unwrap();
        for secret in ["sk-stored", "org-secret", "t1", "tok-stored"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(view.settings.model.api_key, Some(Secret::Keep));
        assert_eq!(
            serde_json::to_value(&view.settings.model.extra_headers).unwrap(),
            json!({"X-Org": {"action": "keep"}, "X-Team": {"action": "keep"}})
        );
        assert_eq!(
            serde_json::to_value(&view.settings.mcp_servers["notes"]).unwrap(),
            json!({"command": "npx", "args": ["notes-mcp"], "env": {"TOKEN": {"action": "keep"}}, "trusted": false, "disabled": false, "timeout_secs": null})
        );
        assert_eq!(
            SettingsView::of(&Settings::default())
                .settings
                .model
                .api_key,
            None
        );
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
        edit.settings.model.api_key = Some(Secret::Set {
            value: "sk-new".into(),
        });
        edit.settings.model.extra_headers.remove("X-Org");
        edit.settings
            .model
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
        clear.settings.model.api_key = None;
        assert_eq!(clear.apply(&current).unwrap().model.api_key, None);
    }

    #[test]
    fn a_server_over_plain_http_to_another_computer_is_marked_unencrypted() {
        let http = |url: &str| {
            let mut settings = stored();
            settings.mcp_servers.insert(
                "web".into(),
                ServerConfig::untrusted(ServerTransport::Http {
                    url: url.into(),
                    headers: BTreeMap::new(),
                }),
            );
            SettingsView::of(&settings).unencrypted
        };
        assert_eq!(http("http://notes.example/mcp"), ["web"]);
        assert!(http("https://notes.example/mcp").is_empty());
        assert!(http("http://127.0.0.1:8080/mcp").is_empty());
    }

    #[test]
    fn a_kept_key_or_header_goes_only_to_the_base_url_it_was_saved_for() {
        let mut current = stored();
        current.model.base_url = "https://api.deepseek.com/v1".into();
        let mut same = keep_all(&current);
        same.settings.model.base_url = " https://API.DeepSeek.com:443/v1/ ".into();
        assert!(
            same.apply(&current).is_ok(),
            "the same address, written otherwise"
        );

        let mut elsewhere = keep_all(&current);
        elsewhere.settings.model.base_url = "https://collector.example/v1".into();
        assert!(matches!(
            elsewhere.clone().apply(&current),
            Err(SettingsError::KeptForAnotherAddress { ref what, .. }) if what == "the API key"
        ));
        elsewhere.settings.model.api_key = Some(Secret::Set {
            value: "sk-for-collector".into(),
        });
        assert!(matches!(
            elsewhere.clone().apply(&current),
            Err(SettingsError::KeptForAnotherAddress { ref what, .. }) if what.contains("X-Org")
        ));
        elsewhere.settings.model.extra_headers.clear();
        let applied = elsewhere.apply(&current).unwrap();
        assert_eq!(applied.model.api_key.as_deref(), Some("sk-for-collector"));
        assert!(applied.model.extra_headers.is_empty());
    }

    #[test]
    fn a_renamed_server_keeps_its_env_values_and_keeping_an_unknown_one_is_refused() {
        let current = stored();
        let mut edit = keep_all(&current);
        let notes = edit.settings.mcp_servers.remove("notes").unwrap();
        edit.settings.mcp_servers.insert("notes2".into(), notes);
        edit.renamed.insert("notes2".into(), "notes".into());
        let applied = edit.clone().apply(&current).unwrap();
        assert_eq!(
            applied.mcp_servers["notes2"].transport,
            current.mcp_servers["notes"].transport
        );
        edit.renamed.clear();
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
        match edit
            .settings
            .mcp_servers
            .get_mut(server)
            .map(|s| &mut s.transport)
        {
            Some(ServerTransportWith::Stdio { args, .. }) => args,
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
            view.settings.mcp_servers["notes"].transport,
            ServerTransportWith::Stdio {
                command: "npx".into(),
                args: ["notes-mcp", "--api-key", MASK, "--port", "8080"]
                    .map(String::from)
                    .into(),
                env: [("TOKEN".to_string(), Secret::Keep)].into(),
            }
        );
        assert_eq!(
            view.settings.mcp_servers["remote"].transport,
            ServerTransportWith::Http {
                url: format!("https://h.example/mcp?token={MASK}&page=2"),
                headers: BTreeMap::new(),
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
            &view.settings.mcp_servers["remote"].transport,
            ServerTransportWith::Http { url, .. } if url == "https://h/mcp?key=${env:REMOTE_KEY}"
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
            let server = edit.settings.mcp_servers.remove(old).unwrap();
            edit.settings.mcp_servers.insert(new.into(), server);
            edit.renamed.insert(new.into(), old.into());
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
        let notes = new_server.settings.mcp_servers["notes"].clone();
        new_server
            .settings
            .mcp_servers
            .insert("other".into(), notes);
        if let Some(ServerTransportWith::Stdio { env, .. }) = new_server
            .settings
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
        use crate::settings::{Appearance, Language, Theme};
        let current = stored();
        let mut edit = keep_all(&current);
        edit.settings.appearance = Appearance {
            language: Some(Language::En),
            theme: Theme::Dark,
        };
        let applied = edit.apply(&current).unwrap();
        assert_eq!(applied.appearance, edit_appearance());
        assert_eq!(
            SettingsView::of(&applied).settings.appearance,
            edit_appearance()
        );

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
        edit.settings
            .mcp_servers
            .get_mut("notes")
            .unwrap()
            .page_origins = vec![
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
            SettingsView::of(&applied).settings.mcp_servers["notes"].page_origins,
            ["https://pay.example.com", "http://127.0.0.1:8080"]
        );

        for refused in [
            "https://pay.example.com/checkout",
            "http://pay.example.com",
            "pay.example.com",
        ] {
            edit.settings
                .mcp_servers
                .get_mut("notes")
                .unwrap()
                .page_origins = vec![refused.into()];
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
        assert!(
            serde_json::from_value::<Secret>(json!({"action": "clear"})).is_err(),
            "a value left out is removed: there is no clearing intent"
        );
        let server: ServerConfigWith<Secret> = serde_json::from_value(json!({
            "url": "http://h/mcp", "headers": {"Authorization": {"action": "keep"}}, "trusted": true
        }))
        .unwrap();
        assert!(
            matches!(server.transport, ServerTransportWith::Http { ref headers, .. } if headers["Authorization"] == Secret::Keep)
        );
        assert_eq!(
            format!(
                "{:?}",
                Secret::Set {
                    value: "sk-SECRET".into()
                }
            ),
            "Set(<redacted>)"
        );
    }
}
