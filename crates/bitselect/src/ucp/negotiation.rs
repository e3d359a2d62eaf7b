//! Capability negotiation: every request names the platform's profile
//! (the `UCP-Agent` header over REST, `meta["ucp-agent"]` over MCP); the
//! shop fetches it (cached), and a checkout answer is shaped by, and
//! names, the capabilities both support at a common version, extensions
//! only with their parent.
//!
//! A profile is fetched over https, or over http only from this machine
//! (a platform under test): the shop does not fetch plain-text documents
//! from the network on a request's say-so.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::Value;

use super::names::{
    CART, CATALOG_LOOKUP, CATALOG_SEARCH, CHECKOUT, CHECKOUT_CAPABILITIES, ORDER, UCP_VERSION,
};
use crate::auth::config::is_loopback;

/// How long a fetched profile is used before it is fetched again.
const PROFILE_TTL: Duration = Duration::from_secs(300);

/// How long a profile fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest profile read.
const MAX_PROFILE_BYTES: usize = 256 * 1024;

/// The most profiles kept.
const MAX_CACHED: usize = 256;

/// What a request says of the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub profile: String,
    /// The protocol version the platform asks for, when it says.
    pub version: Option<String>,
}

/// Every capability the shop has: the checkout with its extensions, the
/// order, the cart, and catalogue search and lookup.
pub fn shop_capabilities() -> impl Iterator<Item = &'static str> {
    CHECKOUT_CAPABILITIES
        .into_iter()
        .chain([ORDER, CART, CATALOG_SEARCH, CATALOG_LOOKUP])
}

/// The capabilities active for one answer (names), and where the
/// platform wants its orders' events when the order capability is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Active {
    pub names: Vec<String>,
    pub order_webhook: Option<String>,
}

impl Active {
    /// Every capability the shop has: what the shop's own callers (tests,
    /// the shop's tools) are answered with; no webhook.
    pub fn all() -> Self {
        Self::named(CHECKOUT_CAPABILITIES.iter().map(|c| (*c).to_owned()))
    }

    /// The capabilities `names`, no webhook.
    pub fn named(names: impl IntoIterator<Item = String>) -> Self {
        Self {
            names: names.into_iter().collect(),
            order_webhook: None,
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|c| c == name)
    }

    /// The platform's webhook for order events, when the order capability
    /// is active and its profile names one the shop may post to.
    pub fn order_webhook(&self) -> Option<&str> {
        self.order_webhook.as_deref()
    }
}

/// Why negotiation failed, as the standard names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NegotiationError {
    #[error("平台的 profile 地址缺失或无效：{0}")]
    InvalidProfileUrl(String),
    #[error("取不到平台的 profile：{0}")]
    ProfileUnreachable(String),
    #[error("平台的 profile 不合格式：{0}")]
    ProfileMalformed(String),
    #[error("不支持协议版本 {0}，本商城使用 {UCP_VERSION}")]
    VersionUnsupported(String),
    #[error("平台与本商城没有共同支持的结账能力")]
    CapabilitiesIncompatible,
}

impl NegotiationError {
    /// The standard's code and the REST status for it.
    pub fn code_and_status(&self) -> (&'static str, u16) {
        match self {
            Self::InvalidProfileUrl(_) => ("invalid_profile_url", 400),
            Self::ProfileUnreachable(_) => ("profile_unreachable", 424),
            Self::ProfileMalformed(_) => ("profile_malformed", 422),
            Self::VersionUnsupported(_) => ("version_unsupported", 422),
            Self::CapabilitiesIncompatible => ("capabilities_incompatible", 200),
        }
    }
}

/// Reads a `UCP-Agent` header: an RFC 8941 dictionary with a string
/// `profile` and, optionally, a string `version`.
pub fn parse_agent_header(value: &str) -> Result<Agent, NegotiationError> {
    let mut profile = None;
    let mut version = None;
    for member in value.split([',', ';']) {
        let Some((key, raw)) = member.trim().split_once('=') else {
            continue;
        };
        let text = raw
            .trim()
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .ok_or_else(|| {
                NegotiationError::InvalidProfileUrl(format!("{key} 须为带引号的字符串"))
            })?;
        match key.trim() {
            "profile" => profile = Some(text.to_owned()),
            "version" => version = Some(text.to_owned()),
            _ => {}
        }
    }
    let profile =
        profile.ok_or_else(|| NegotiationError::InvalidProfileUrl("没有 profile".to_owned()))?;
    Ok(Agent { profile, version })
}

/// The platform profiles fetched, shared by every request of a server.
#[derive(Debug)]
pub struct Negotiator {
    http: reqwest::Client,
    cache: Mutex<HashMap<String, (Instant, Value)>>,
}

impl Default for Negotiator {
    fn default() -> Self {
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            http,
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl Negotiator {
    /// The capabilities active between the shop and the platform `agent`
    /// names, which must include `needed` (the capability the request is
    /// an operation of).
    pub async fn negotiate(&self, agent: &Agent, needed: &str) -> Result<Active, NegotiationError> {
        if let Some(version) = &agent.version
            && version != UCP_VERSION
        {
            return Err(NegotiationError::VersionUnsupported(version.clone()));
        }
        let profile = self.profile(&agent.profile).await?;
        let active = intersect(&profile);
        if !active.contains(needed) {
            return Err(NegotiationError::CapabilitiesIncompatible);
        }
        Ok(active)
    }

    async fn profile(&self, url: &str) -> Result<Value, NegotiationError> {
        if let Some(profile) = self.cached(url) {
            return Ok(profile);
        }
        let parsed = Url::parse(url)
            .map_err(|e| NegotiationError::InvalidProfileUrl(format!("{url}：{e}")))?;
        if parsed.scheme() != "https" && !(parsed.scheme() == "http" && is_loopback(&parsed)) {
            return Err(NegotiationError::InvalidProfileUrl(format!(
                "{url}：须为 https（本机上可用 http）"
            )));
        }
        let response = self
            .http
            .get(parsed)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| NegotiationError::ProfileUnreachable(e.to_string()))?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| NegotiationError::ProfileUnreachable(e.to_string()))?;
        if bytes.len() > MAX_PROFILE_BYTES {
            return Err(NegotiationError::ProfileMalformed("超过 256 KB".to_owned()));
        }
        let profile: Value = serde_json::from_slice(&bytes)
            .map_err(|e| NegotiationError::ProfileMalformed(e.to_string()))?;
        if !profile["ucp"]["capabilities"].is_object() {
            return Err(NegotiationError::ProfileMalformed(
                "没有 ucp.capabilities".to_owned(),
            ));
        }
        self.keep(url, profile.clone());
        Ok(profile)
    }

    fn cached(&self, url: &str) -> Option<Value> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(url)
            .filter(|(at, _)| at.elapsed() < PROFILE_TTL)
            .map(|(_, profile)| profile.clone())
    }

    fn keep(&self, url: &str, profile: Value) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= MAX_CACHED {
            cache.retain(|_, (at, _)| at.elapsed() < PROFILE_TTL);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(url.to_owned(), (Instant::now(), profile));
    }
}

/// The shop's capabilities the platform's `profile` also has at the
/// shop's version, the checkout's extensions only with the checkout.
pub fn intersect(profile: &Value) -> Active {
    let theirs = &profile["ucp"]["capabilities"];
    let supports = |name: &str| {
        theirs[name]
            .as_array()
            .is_some_and(|entries| entries.iter().any(|entry| entry["version"] == UCP_VERSION))
    };
    let checkout = supports(CHECKOUT);
    let mut active = Active::named(
        shop_capabilities()
            .filter(|name| supports(name))
            // Every extension the shop has extends the checkout.
            .filter(|name| checkout || !CHECKOUT_CAPABILITIES.contains(name))
            .map(str::to_owned),
    );
    if active.contains(ORDER) {
        active.order_webhook = order_webhook(&theirs[ORDER]);
    }
    active
}

/// The `config.webhook_url` of the platform's order capability at the
/// shop's version: an https address, or http on this machine (a platform
/// under test); the shop posts its shoppers' orders nowhere else.
fn order_webhook(entries: &Value) -> Option<String> {
    let url = entries
        .as_array()?
        .iter()
        .filter(|entry| entry["version"] == UCP_VERSION)
        .find_map(|entry| entry["config"]["webhook_url"].as_str())?;
    match Url::parse(url) {
        Ok(parsed)
            if parsed.scheme() == "https"
                || (parsed.scheme() == "http" && is_loopback(&parsed)) =>
        {
            Some(url.to_owned())
        }
        _ => {
            tracing::warn!(
                url,
                "the platform's order webhook is not https: no events are sent to it"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_agent_header_gives_the_profile_and_the_version() {
        assert_eq!(
            parse_agent_header(r#"profile="https://p.example/a.json""#),
            Ok(Agent {
                profile: "https://p.example/a.json".to_owned(),
                version: None
            })
        );
        assert_eq!(
            parse_agent_header(r#"profile="https://p.example/a.json"; version="2026-04-08""#)
                .unwrap()
                .version
                .as_deref(),
            Some("2026-04-08")
        );
        assert!(parse_agent_header("profile=https://unquoted").is_err());
        assert!(parse_agent_header(r#"version="2026-04-08""#).is_err());
    }

    fn profile_with(capabilities: &[(&str, &str)]) -> Value {
        let mut map = serde_json::Map::new();
        for (name, version) in capabilities {
            map.insert((*name).to_owned(), json!([{ "version": version }]));
        }
        json!({ "ucp": { "version": UCP_VERSION, "capabilities": map } })
    }

    #[test]
    fn the_active_capabilities_are_those_both_have_at_the_shops_version() {
        let both = profile_with(&[
            ("dev.ucp.shopping.checkout", UCP_VERSION),
            ("dev.ucp.shopping.discount", UCP_VERSION),
            ("dev.ucp.shopping.fulfillment", "2026-01-11"),
            ("com.example.other", UCP_VERSION),
        ]);
        assert_eq!(
            intersect(&both),
            Active::named([
                "dev.ucp.shopping.checkout".to_owned(),
                "dev.ucp.shopping.discount".to_owned()
            ])
        );
        let no_checkout = profile_with(&[
            ("dev.ucp.shopping.discount", UCP_VERSION),
            ("dev.ucp.shopping.order", UCP_VERSION),
        ]);
        assert_eq!(
            intersect(&no_checkout),
            Active::named(["dev.ucp.shopping.order".to_owned()]),
            "an extension without its parent is not active"
        );
    }

    fn with_order_webhook(url: &str, version: &str) -> Value {
        json!({ "ucp": { "version": UCP_VERSION, "capabilities": {
            "dev.ucp.shopping.checkout": [{ "version": UCP_VERSION }],
            "dev.ucp.shopping.order": [{ "version": version, "config": { "webhook_url": url } }],
        } } })
    }

    #[test]
    fn the_order_webhook_is_the_platforms_https_or_loopback_address() {
        let https = "https://platform.example/webhooks/orders";
        assert_eq!(
            intersect(&with_order_webhook(https, UCP_VERSION)).order_webhook(),
            Some(https)
        );
        let loopback = "http://127.0.0.1:8284/webhooks/orders";
        assert_eq!(
            intersect(&with_order_webhook(loopback, UCP_VERSION)).order_webhook(),
            Some(loopback)
        );
        for refused in [
            "http://platform.example/webhooks",
            "ftp://127.0.0.1/x",
            "not a url",
        ] {
            assert_eq!(
                intersect(&with_order_webhook(refused, UCP_VERSION)).order_webhook(),
                None,
                "{refused}"
            );
        }
        assert_eq!(
            intersect(&with_order_webhook(https, "2026-01-11")).order_webhook(),
            None,
            "the order capability at another version is not active"
        );
    }
}
