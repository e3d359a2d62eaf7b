//! The user's settings: model provider, MCP servers and their trust,
//! per-tool policy, card expiry, the page's language and theme. Stored in
//! the database and applied without a restart.
//!
//! One shape for each concept, whoever holds it: the secret values (the API
//! key, headers, env values) are a type parameter `S`. The core holds the
//! values ([`Settings`]); the page is shown, and sends back, what to do with
//! each (`settings_view::Secret`). A field added to a struct here is stored,
//! shown and edited without another type to keep in step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::mcp::config::{
    MAX_TIMEOUT_SECS, ServerConfig, ServerConfigWith, ServerSecret, ServerTransport, UcpMerchant,
    map_values, timeout_is_valid, validate_server_name,
};
use crate::mcp::page_origins::{BadOrigin, declared_origin};
use crate::policy::{AutoApproveRefusal, ToolOverride};
use crate::redact::{REDACTED, redacted_values};

/// Everything the user can set, secret values held as `S`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default, bound(deserialize = "S: Deserialize<'de>"))]
pub struct SettingsWith<S> {
    pub model: ModelSettingsWith<S>,
    /// Servers the user added, in the `mcpServers` shape. The built-in
    /// shop is not listed here: the app supplies it, trusted.
    pub mcp_servers: BTreeMap<String, ServerConfigWith<S>>,
    /// Per-tool policy, keyed by `server__tool`.
    pub tool_overrides: BTreeMap<String, ToolOverride>,
    /// How long a confirmation card may wait before it expires. A day by
    /// default, so a card outlives closing the app for the evening.
    #[ts(type = "number")]
    pub card_expiry_secs: u64,
    /// How many model turns one run may take.
    pub max_turns_per_run: u32,
    /// Estimated tokens of history sent to the model.
    pub history_token_budget: u32,
    /// How the page looks; kept here, in the data directory, so each
    /// `--data-dir` remembers its own.
    pub appearance: Appearance,
    /// Which shop the built-in shop server is: the local demo the app
    /// starts, or the online shop at a URL. Either is trusted as the shop.
    pub shop: ShopConnection,
    /// Where the app's platform profile under the commerce standard is
    /// hosted (`ucp::platform::platform_profile` is its document): every
    /// request to a UCP merchant names it.
    pub ucp_platform_profile: String,
}

/// Where the app's publisher hosts its platform profile, the document
/// committed as `docs/ucp-platform-profile.json`.
pub const DEFAULT_PLATFORM_PROFILE: &str = "https://bitselect.app/.well-known/ucp-platform.json";

/// Where the built-in shop is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShopConnection {
    /// The demo shop the app starts itself, with its data on this machine.
    #[default]
    Local,
    /// The online shop's MCP endpoint, signed in to as the user.
    Online { url: String },
}

impl ShopConnection {
    /// An online shop's URL must be https, or http on this machine (a
    /// shop run for testing): tokens never cross the network in clear.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let ShopConnection::Online { url } = self else {
            return Ok(());
        };
        let refused = || SettingsError::ShopUrl(url.clone());
        let parsed = url::Url::parse(url.trim()).map_err(|_| refused())?;
        match parsed.scheme() {
            "https" if parsed.host().is_some() => Ok(()),
            "http" if crate::web_page::is_loopback(&parsed) => Ok(()),
            _ => Err(refused()),
        }
    }
}

/// The page's language and theme.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct Appearance {
    /// `None` until the user chooses: the page follows the system's language.
    pub language: Option<Language>,
    pub theme: Theme,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub enum Language {
    #[serde(rename = "zh-CN")]
    ZhCn,
    #[serde(rename = "en")]
    En,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// The OS's light or dark.
    #[default]
    System,
    Light,
    Dark,
}

/// The settings as the core keeps them: secret values in place.
pub type Settings = SettingsWith<String>;

/// Where a secret value sits in the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretSpot<'a> {
    ApiKey,
    ModelHeader(&'a str),
    Server {
        server: &'a str,
        secret: ServerSecret<'a>,
    },
}

/// An OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek, Qwen
/// compatible mode, Ollama, vLLM, llama.cpp server), the key and header
/// values held as `S`. Its `Debug` hides them, so logging it leaks nothing.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default, bound(deserialize = "S: Deserialize<'de>"))]
pub struct ModelSettingsWith<S> {
    /// For example `https://api.deepseek.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<S>,
    pub extra_headers: BTreeMap<String, S>,
}

/// The model settings as the core keeps them: the key and header values in place.
pub type ModelSettings = ModelSettingsWith<String>;

impl<S> ModelSettingsWith<S> {
    /// The same settings with the key and each header value turned into
    /// `f`'s answer for it (`Err` stops at the first refused).
    pub fn try_map_secrets<T, E>(
        self,
        mut f: impl FnMut(SecretSpot<'_>, S) -> Result<T, E>,
    ) -> Result<ModelSettingsWith<T>, E> {
        Ok(ModelSettingsWith {
            base_url: self.base_url,
            model: self.model,
            api_key: self
                .api_key
                .map(|key| f(SecretSpot::ApiKey, key))
                .transpose()?,
            extra_headers: map_values(self.extra_headers, |name, value| {
                f(SecretSpot::ModelHeader(name), value)
            })?,
        })
    }
}

impl<S> SettingsWith<S> {
    /// The same settings with each secret value turned into `f`'s answer for it.
    pub fn map_secrets<T>(self, mut f: impl FnMut(SecretSpot<'_>, S) -> T) -> SettingsWith<T> {
        let mapped =
            self.try_map_secrets(|spot, value| Ok::<_, std::convert::Infallible>(f(spot, value)));
        match mapped {
            Ok(settings) => settings,
            Err(never) => match never {},
        }
    }

    /// The same settings with each secret value turned into `f`'s answer
    /// for it (`Err` stops at the first refused).
    pub fn try_map_secrets<T, E>(
        self,
        mut f: impl FnMut(SecretSpot<'_>, S) -> Result<T, E>,
    ) -> Result<SettingsWith<T>, E> {
        let mut mcp_servers = BTreeMap::new();
        for (server, config) in self.mcp_servers {
            let config = config.try_map_secrets(|secret, value| {
                f(
                    SecretSpot::Server {
                        server: &server,
                        secret,
                    },
                    value,
                )
            })?;
            mcp_servers.insert(server, config);
        }
        Ok(SettingsWith {
            model: self.model.try_map_secrets(&mut f)?,
            mcp_servers,
            tool_overrides: self.tool_overrides,
            card_expiry_secs: self.card_expiry_secs,
            max_turns_per_run: self.max_turns_per_run,
            history_token_budget: self.history_token_budget,
            appearance: self.appearance,
            shop: self.shop,
            ucp_platform_profile: self.ucp_platform_profile,
        })
    }
}

impl<S> std::fmt::Debug for ModelSettingsWith<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("extra_headers", &redacted_values(&self.extra_headers))
            .finish()
    }
}

impl<S> Default for ModelSettingsWith<S> {
    fn default() -> Self {
        ModelSettingsWith {
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: String::new(),
            api_key: None,
            extra_headers: BTreeMap::new(),
        }
    }
}

impl<S> Default for SettingsWith<S> {
    fn default() -> Self {
        SettingsWith {
            model: ModelSettingsWith::default(),
            mcp_servers: BTreeMap::new(),
            tool_overrides: BTreeMap::new(),
            card_expiry_secs: 24 * 60 * 60,
            max_turns_per_run: 12,
            history_token_budget: 24_000,
            appearance: Appearance::default(),
            shop: ShopConnection::Local,
            ucp_platform_profile: DEFAULT_PLATFORM_PROFILE.into(),
        }
    }
}

/// Settings that cannot be saved, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}")]
    ServerName(String),
    #[error("server {0:?} is built in and cannot be redefined")]
    BuiltinServer(String),
    #[error("server {0:?}: a call timeout must be from 1 to {MAX_TIMEOUT_SECS} seconds")]
    ServerTimeout(String),
    #[error(
        "the online shop's address {0:?} must be an https URL (http only on this machine, for testing)"
    )]
    ShopUrl(String),
    #[error("the model base URL {0:?} is not an http(s) URL")]
    BaseUrl(String),
    #[error("header {0:?} is not a valid HTTP header")]
    Header(String),
    #[error("{0}")]
    Limit(&'static str),
    /// Auto-approve was asked for a tool that may never skip its card;
    /// nothing was saved.
    #[error("asking cannot be turned off for {tool}: {reason}")]
    AutoApproveNotAllowed {
        tool: String,
        reason: AutoApproveRefusal,
    },
    /// An origin declared for a server's pages is not one.
    #[error("server {server:?}: {why}")]
    PageOrigin { server: String, why: BadOrigin },
    /// A UCP merchant's origin or the platform profile's address is not
    /// a safe web address, or a merchant is not an HTTP server.
    #[error("{0}")]
    Ucp(String),
    #[error("{0} has no stored value to keep")]
    NothingToKeep(String),
    /// The page sent the mask back where no value is stored to keep.
    #[error(
        "server {server:?}: {what} shows the hidden value's mask but no value is stored for it; type the value again"
    )]
    MaskWithoutValue { server: String, what: String },
    /// A kept secret would go to another address than it was saved for.
    #[error("{what} was saved for {saved_for:?}; give it again to send it to {base_url:?}")]
    KeptForAnotherAddress {
        what: String,
        saved_for: String,
        base_url: String,
    },
}

impl ModelSettings {
    /// The base URL is http(s) and every extra header can be sent.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(SettingsError::BaseUrl(self.base_url.clone()));
        }
        for (name, value) in &self.extra_headers {
            let name_ok = reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok();
            let value_ok = reqwest::header::HeaderValue::from_str(value).is_ok();
            if !name_ok || !value_ok {
                return Err(SettingsError::Header(name.clone()));
            }
        }
        Ok(())
    }
}

/// A merchant is a server over HTTP, at an origin as settings keep it.
fn validate_merchant(
    name: &str,
    server: &ServerConfig,
    merchant: &UcpMerchant,
) -> Result<(), SettingsError> {
    if !matches!(server.transport, ServerTransport::Http { .. }) {
        return Err(SettingsError::Ucp(format!(
            "server {name:?}: a UCP merchant is reached over HTTP, not by a command"
        )));
    }
    match declared_origin(&merchant.origin) {
        Ok(kept) if kept == merchant.origin => Ok(()),
        Ok(kept) => Err(SettingsError::Ucp(format!(
            "server {name:?}: the merchant's origin is {kept:?}, not {:?}",
            merchant.origin
        ))),
        Err(why) => Err(SettingsError::Ucp(format!(
            "server {name:?}: the merchant's origin: {why}"
        ))),
    }
}

impl Settings {
    /// Checks what can be checked without contacting anything.
    pub fn validate(&self, builtin_servers: &[String]) -> Result<(), SettingsError> {
        self.model.validate()?;
        self.shop.validate()?;
        crate::ucp::profile::profile_url(&self.ucp_platform_profile)
            .map_err(|why| SettingsError::Ucp(format!("the platform profile's address: {why}")))?;
        for name in self.mcp_servers.keys() {
            validate_server_name(name).map_err(|e| SettingsError::ServerName(e.to_string()))?;
            if builtin_servers.contains(name) {
                return Err(SettingsError::BuiltinServer(name.clone()));
            }
        }
        for (name, server) in &self.mcp_servers {
            if server
                .timeout_secs
                .is_some_and(|secs| !timeout_is_valid(secs))
            {
                return Err(SettingsError::ServerTimeout(name.clone()));
            }
            if let Some(merchant) = &server.ucp {
                validate_merchant(name, server, merchant)?;
            }
            // A hand-edited file: each origin as a save would keep it.
            for text in &server.page_origins {
                let kept = declared_origin(text).map_err(|why| SettingsError::PageOrigin {
                    server: name.clone(),
                    why,
                })?;
                if &kept != text {
                    return Err(SettingsError::PageOrigin {
                        server: name.clone(),
                        why: BadOrigin::NotOnlyOrigin {
                            given: text.clone(),
                            origin: kept,
                        },
                    });
                }
            }
        }
        if self.max_turns_per_run == 0 {
            return Err(SettingsError::Limit("a run needs at least one model turn"));
        }
        if self.card_expiry_secs < 10 {
            return Err(SettingsError::Limit(
                "a confirmation card must stay open at least 10 seconds",
            ));
        }
        if self.history_token_budget < 1_000 {
            return Err(SettingsError::Limit(
                "the history budget must be at least 1000 tokens",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::ServerConfig;

    #[test]
    fn an_online_shop_needs_https_or_this_machine() {
        let online = |url: &str| ShopConnection::Online { url: url.into() };
        for good in [
            "https://shop.bitselect.example/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://localhost:8080/mcp",
            "http://[::1]:8080/mcp",
        ] {
            assert_eq!(online(good).validate(), Ok(()), "{good}");
        }
        for bad in [
            "http://shop.bitselect.example/mcp",
            "ftp://127.0.0.1/mcp",
            "shop.bitselect.example",
            "",
        ] {
            assert_eq!(
                online(bad).validate(),
                Err(SettingsError::ShopUrl(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(ShopConnection::Local.validate(), Ok(()));
    }

    #[test]
    fn a_ucp_merchant_is_an_http_server_at_an_origin_and_the_platform_profile_a_safe_address() {
        let merchant = |transport: ServerTransport, origin: &str| {
            let mut settings = Settings::default();
            settings.mcp_servers.insert(
                "merchant".into(),
                ServerConfig {
                    ucp: Some(UcpMerchant {
                        origin: origin.into(),
                    }),
                    ..ServerConfig::untrusted(transport)
                },
            );
            settings.validate(&[])
        };
        let http = || ServerTransport::Http {
            url: "https://shop.example/ucp/mcp".into(),
            headers: BTreeMap::new(),
        };
        assert_eq!(merchant(http(), "https://shop.example"), Ok(()));
        assert!(matches!(
            merchant(http(), "https://shop.example/ucp"),
            Err(SettingsError::Ucp(_))
        ));
        assert!(matches!(
            merchant(http(), "http://shop.example"),
            Err(SettingsError::Ucp(_))
        ));
        let command = ServerTransport::Stdio {
            command: "shop".into(),
            args: Vec::new(),
            env: BTreeMap::new(),
        };
        assert!(matches!(
            merchant(command, "https://shop.example"),
            Err(SettingsError::Ucp(_))
        ));
        let plain = Settings {
            ucp_platform_profile: "http://app.example/profile.json".into(),
            ..Settings::default()
        };
        assert!(matches!(plain.validate(&[]), Err(SettingsError::Ucp(_))));
    }

    #[test]
    fn settings_saved_before_the_shop_choice_load_with_the_local_shop() {
        let settings: Settings = serde_json::from_str(r#"{"max_turns_per_run": 5}"#).unwrap();
        assert_eq!(settings.shop, ShopConnection::Local);
        let online: Settings =
            serde_json::from_str(r#"{"shop": {"kind": "online", "url": "https://s.example/mcp"}}"#)
                .unwrap();
        assert_eq!(
            online.shop,
            ShopConnection::Online {
                url: "https://s.example/mcp".into()
            }
        );
    }

    #[test]
    fn debug_of_the_settings_hides_the_api_key_and_header_values() {
        let mut settings = Settings::default();
        settings.model.api_key = Some("sk-test-SECRET-1234".into());
        settings
            .model
            .extra_headers
            .insert("X-Org-Token".into(), "hdr-SECRET-5678".into());
        let printed = format!("{settings:?} {settings:#?}");
        assert!(!printed.contains("SECRET"), "{printed}");
        assert!(printed.contains("X-Org-Token"), "{printed}");
        assert!(printed.contains(REDACTED), "{printed}");
    }

    #[test]
    fn the_defaults_are_valid_and_a_builtin_name_cannot_be_reused() {
        let mut settings = Settings::default();
        assert_eq!(settings.validate(&["shop".into()]), Ok(()));
        settings.mcp_servers.insert(
            "shop".into(),
            ServerConfig {
                transport: crate::mcp::config::ServerTransport::Http {
                    url: "http://127.0.0.1:1/mcp".into(),
                    headers: BTreeMap::new(),
                },
                trusted: true,
                disabled: false,
                timeout_secs: None,
                oauth_client_id: None,
                page_origins: Vec::new(),
                ucp: None,
            },
        );
        assert_eq!(
            settings.validate(&["shop".into()]),
            Err(SettingsError::BuiltinServer("shop".into()))
        );
    }

    #[test]
    fn servers_saved_before_disabled_and_timeout_existed_still_load_enabled_with_the_default_timeout()
     {
        let older: Settings = serde_json::from_str(
            r#"{"mcp_servers": {
                "notes": {"command": "npx", "args": ["notes-mcp"], "env": {"TOKEN": ""}, "trusted": true},
                "remote": {"url": "http://127.0.0.1:8080/mcp", "headers": {}}
            }}"#,
        )
        .unwrap();
        let notes = &older.mcp_servers["notes"];
        assert!(notes.trusted && !notes.disabled);
        assert_eq!(notes.timeout_secs, None);
        let remote = &older.mcp_servers["remote"];
        assert!(!remote.trusted && !remote.disabled);
        assert_eq!(remote.timeout_secs, None);
    }

    #[test]
    fn a_partial_settings_document_fills_in_defaults() {
        let settings: Settings =
            serde_json::from_str(r#"{"model": {"model": "qwen-plus"}}"#).unwrap();
        assert_eq!(settings.model.model, "qwen-plus");
        assert_eq!(settings.model.base_url, ModelSettings::default().base_url);
        assert_eq!(settings.card_expiry_secs, 24 * 60 * 60);
    }

    #[test]
    fn a_document_without_appearance_follows_the_system_and_a_choice_reads_back() {
        let older: Settings = serde_json::from_str(r#"{"max_turns_per_run": 5}"#).unwrap();
        assert_eq!(
            older.appearance,
            Appearance {
                language: None,
                theme: Theme::System
            }
        );
        let chosen: Settings =
            serde_json::from_str(r#"{"appearance": {"language": "en", "theme": "dark"}}"#).unwrap();
        assert_eq!(
            chosen.appearance,
            Appearance {
                language: Some(Language::En),
                theme: Theme::Dark
            }
        );
        assert_eq!(
            serde_json::to_value(Appearance {
                language: Some(Language::ZhCn),
                theme: Theme::Light
            })
            .unwrap(),
            serde_json::json!({"language": "zh-CN", "theme": "light"})
        );
    }

    #[test]
    fn a_server_call_timeout_outside_a_second_to_a_day_is_refused() {
        let mut settings = Settings::default();
        let server = |timeout_secs| ServerConfig {
            timeout_secs,
            ..ServerConfig::untrusted(crate::mcp::config::ServerTransport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::new(),
            })
        };
        for ok in [None, Some(1), Some(MAX_TIMEOUT_SECS)] {
            settings.mcp_servers.insert("web".into(), server(ok));
            assert_eq!(settings.validate(&[]), Ok(()), "{ok:?}");
        }
        for bad in [Some(0), Some(MAX_TIMEOUT_SECS + 1)] {
            settings.mcp_servers.insert("web".into(), server(bad));
            assert_eq!(
                settings.validate(&[]),
                Err(SettingsError::ServerTimeout("web".into())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn bad_urls_and_headers_are_refused() {
        let mut settings = Settings::default();
        settings.model.base_url = "ftp://x".into();
        assert!(matches!(
            settings.validate(&[]),
            Err(SettingsError::BaseUrl(_))
        ));
        settings.model.base_url = "https://x/v1".into();
        settings
            .model
            .extra_headers
            .insert("bad header".into(), "v".into());
        assert!(matches!(
            settings.validate(&[]),
            Err(SettingsError::Header(_))
        ));
    }
}
