//! The two facts a merchant gives the shop (`--auth-issuer`,
//! `--resource-url`) and the URLs that follow from them.

use reqwest::Url;

/// The well-known name of a protected resource's metadata (RFC 9728 §3).
pub const RESOURCE_METADATA_NAME: &str = "oauth-protected-resource";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{flag} `{value}` is not an absolute http(s) URL")]
    NotHttpUrl { flag: &'static str, value: String },
    #[error("{flag} `{value}` must not carry a query or a fragment")]
    QueryOrFragment { flag: &'static str, value: String },
    #[error(
        "--auth-issuer `{0}` is plain http to another machine: the shop would fetch the keys it trusts over an unencrypted connection; use https (plain http is only for an issuer on this machine)"
    )]
    IssuerNotTls(String),
}

/// Whom the shop trusts to issue tokens, and the URL it is known by.
///
/// Both are kept as given: a token's `iss` must equal the issuer and its
/// `aud` must hold the resource URL character for character, so neither is
/// re-serialized (a URL parser would add a trailing `/` to a bare origin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    issuer: String,
    resource: String,
    resource_url: Url,
    /// The shop's other protected resources on the same origin (its
    /// commerce service at `/ucp/mcp`): a token for any of them is good
    /// for all, each names its own metadata.
    also: Vec<String>,
    leeway_secs: u64,
}

/// How far clocks may disagree when `exp` and `nbf` are checked, in seconds.
pub const DEFAULT_LEEWAY_SECS: u64 = 30;

fn http_url(flag: &'static str, value: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(value).map_err(|_| ConfigError::NotHttpUrl {
        flag,
        value: value.to_owned(),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ConfigError::NotHttpUrl {
            flag,
            value: value.to_owned(),
        });
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::QueryOrFragment {
            flag,
            value: value.to_owned(),
        });
    }
    Ok(url)
}

/// Whether `url` names this machine: `localhost`, 127.0.0.0/8 or `::1`.
pub(crate) fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl AuthConfig {
    /// The issuer must be https unless it is on this machine: its metadata
    /// names the keys every token is checked with, and whoever can change
    /// them on the way can sign tokens for any shopper.
    pub fn new(issuer: &str, resource: &str) -> Result<Self, ConfigError> {
        let issuer_url = http_url("--auth-issuer", issuer)?;
        if issuer_url.scheme() != "https" && !is_loopback(&issuer_url) {
            return Err(ConfigError::IssuerNotTls(issuer.to_owned()));
        }
        let resource_url = http_url("--resource-url", resource)?;
        Ok(Self {
            issuer: issuer.to_owned(),
            resource: resource.to_owned(),
            resource_url,
            also: Vec::new(),
            leeway_secs: DEFAULT_LEEWAY_SECS,
        })
    }

    /// The same shop also serving a protected resource at `path` of its
    /// origin (`/ucp/mcp`).
    pub fn also_serving(mut self, path: &str) -> Self {
        let resource = format!("{}{path}", self.origin());
        if resource != self.resource && !self.also.contains(&resource) {
            self.also.push(resource);
        }
        self
    }

    /// Every resource a token may be issued for, this one first.
    pub fn resources(&self) -> Vec<&str> {
        std::iter::once(self.resource.as_str())
            .chain(self.also.iter().map(String::as_str))
            .collect()
    }

    /// The same shop seen from its resource `resource` (one of
    /// [`AuthConfig::resources`]): its metadata is that resource's.
    pub fn for_resource(&self, resource: &str) -> Option<Self> {
        if !self.resources().contains(&resource) {
            return None;
        }
        let resource_url = Url::parse(resource).ok()?;
        let also = self
            .resources()
            .into_iter()
            .filter(|other| *other != resource)
            .map(str::to_owned)
            .collect();
        Some(Self {
            issuer: self.issuer.clone(),
            resource: resource.to_owned(),
            resource_url,
            also,
            leeway_secs: self.leeway_secs,
        })
    }

    /// Another clock leeway (a test of expiry uses 0).
    pub fn with_leeway(mut self, secs: u64) -> Self {
        self.leeway_secs = secs;
        self
    }

    pub fn leeway_secs(&self) -> u64 {
        self.leeway_secs
    }

    /// The issuer, exactly as a token's `iss` must name it.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The shop's resource URL, exactly as a token's `aud` must hold it.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The origin of the resource URL (`https://shop.example`): where the
    /// shop's other public pages are, such as its payment pages.
    pub fn origin(&self) -> String {
        self.resource_url.origin().ascii_serialization()
    }

    /// The path of the resource's metadata on this server: the well-known
    /// name put between the host and the resource URL's path (RFC 9728 §3.1),
    /// so `https://shop.example/mcp` has its metadata at
    /// `/.well-known/oauth-protected-resource/mcp`.
    pub fn metadata_path(&self) -> String {
        let path = self.resource_url.path().trim_end_matches('/');
        format!("/.well-known/{RESOURCE_METADATA_NAME}{path}")
    }

    /// The absolute URL of the metadata, for `WWW-Authenticate`.
    pub fn metadata_url(&self) -> String {
        format!("{}{}", self.origin(), self.metadata_path())
    }

    /// Where the authorization server's metadata may be, in the order tried:
    /// RFC 8414 (the well-known name put before the issuer's path), then
    /// OpenID Connect Discovery (appended to it), as the MCP authorization
    /// spec lists them.
    pub fn issuer_metadata_urls(&self) -> Vec<String> {
        let trimmed = self.issuer.trim_end_matches('/');
        let Ok(url) = Url::parse(trimmed) else {
            return Vec::new();
        };
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let mut urls = vec![format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        )];
        if !path.is_empty() {
            urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
        }
        urls.push(format!("{trimmed}/.well-known/openid-configuration"));
        urls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn config(issuer: &str, resource: &str) -> AuthConfig {
        AuthConfig::new(issuer, resource).unwrap()
    }

    #[test]
    fn the_commerce_service_is_another_resource_of_the_same_shop_with_its_own_metadata() {
        let c = config("https://as.example", "https://shop.example/mcp").also_serving("/ucp/mcp");
        assert_eq!(
            c.resources(),
            ["https://shop.example/mcp", "https://shop.example/ucp/mcp"]
        );
        let ucp = c.for_resource("https://shop.example/ucp/mcp").unwrap();
        assert_eq!(
            ucp.metadata_url(),
            "https://shop.example/.well-known/oauth-protected-resource/ucp/mcp"
        );
        assert_eq!(
            ucp.resources(),
            ["https://shop.example/ucp/mcp", "https://shop.example/mcp"]
        );
        assert_eq!(c.for_resource("https://elsewhere.example/mcp"), None);
    }

    #[test]
    fn the_metadata_path_puts_the_well_known_name_before_the_resource_path() {
        let c = config("https://as.example", "https://shop.example/mcp");
        assert_eq!(
            c.metadata_path(),
            "/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            c.metadata_url(),
            "https://shop.example/.well-known/oauth-protected-resource/mcp"
        );
        let root = config("https://as.example", "https://shop.example:8443/");
        assert_eq!(
            root.metadata_path(),
            "/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            root.metadata_url(),
            "https://shop.example:8443/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn urls_are_kept_as_given() {
        let c = config("http://127.0.0.1:9000", "http://127.0.0.1:8848/mcp");
        assert_eq!(c.issuer(), "http://127.0.0.1:9000");
        assert_eq!(c.resource(), "http://127.0.0.1:8848/mcp");
    }

    #[test]
    fn the_issuer_metadata_is_looked_for_where_rfc_8414_and_oidc_put_it() {
        assert_eq!(
            config("https://as.example", "https://shop.example/mcp").issuer_metadata_urls(),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            config("https://as.example/tenant/", "https://shop.example/mcp").issuer_metadata_urls(),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant",
                "https://as.example/.well-known/openid-configuration/tenant",
                "https://as.example/tenant/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn an_issuer_over_plain_http_is_refused_unless_it_is_on_this_machine() {
        for issuer in [
            "http://as.example",
            "http://10.0.0.5:9000",
            "http://localhost.as.example",
        ] {
            assert_eq!(
                AuthConfig::new(issuer, "https://shop.example/mcp"),
                Err(ConfigError::IssuerNotTls(issuer.into())),
                "{issuer}"
            );
        }
        for issuer in [
            "https://as.example",
            "http://127.0.0.1:9000",
            "http://localhost:9000",
            "http://[::1]:9000",
        ] {
            assert!(
                AuthConfig::new(issuer, "https://shop.example/mcp").is_ok(),
                "{issuer}"
            );
        }
    }

    #[test]
    fn urls_that_are_not_plain_http_are_refused() {
        for (issuer, resource) in [
            ("as.example", "https://shop.example/mcp"),
            ("ftp://as.example", "https://shop.example/mcp"),
            ("https://as.example", "https://shop.example/mcp?x=1"),
            ("https://as.example", "https://shop.example/mcp#top"),
            ("https://as.example", "/mcp"),
        ] {
            assert!(
                AuthConfig::new(issuer, resource).is_err(),
                "{issuer} {resource} should be refused"
            );
        }
    }
}
