//! A merchant's business profile (`/.well-known/ucp`), as the app reads it
//! when the user adds a shop by its address: which protocol version it
//! speaks, where its MCP service is, which capabilities it offers, and the
//! keys its checkout signatures verify with.
//!
//! The profile is fetched over https (or plain http on this machine only),
//! without following redirects, within a time and size limit: it decides
//! which keys the app believes, so it comes from the merchant's own origin.

use std::collections::BTreeSet;
use std::time::Duration;

use ap2::jws::Jwk;
use serde_json::Value;
use url::Url;

/// The protocol version the app speaks.
pub const UCP_VERSION: &str = "2026-04-08";

/// Where a business publishes its profile, under its origin.
pub const PROFILE_PATH: &str = "/.well-known/ucp";

/// The capability whose tools the app offers, and the extension that makes
/// its completions need the shopper's mandate.
pub const CHECKOUT: &str = "dev.ucp.shopping.checkout";
pub const AP2_MANDATE: &str = "dev.ucp.shopping.ap2_mandate";

/// How long a profile may take, and how large it may be.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_PROFILE_BYTES: usize = 256 * 1024;

/// What the app needs of a business profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerchantProfile {
    /// The merchant's origin (`https://shop.example`): the audience of
    /// every mandate made for it.
    pub origin: String,
    pub version: String,
    /// Where its shopping service answers over MCP.
    pub mcp_endpoint: String,
    pub capabilities: BTreeSet<String>,
    /// The keys its `ap2.merchant_authorization` signatures verify with.
    pub keys: Vec<Jwk>,
}

impl MerchantProfile {
    /// Whether the merchant signs its checkouts and requires mandates.
    pub fn signs_checkouts(&self) -> bool {
        self.capabilities.contains(AP2_MANDATE) && !self.keys.is_empty()
    }
}

/// Why a merchant's profile could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("{0} is not a web address")]
    NotAnAddress(String),
    #[error("{0} is not https (plain http is accepted for this machine only)")]
    NotSecure(String),
    #[error("the profile at {url} could not be fetched: {why}")]
    Unreachable { url: String, why: String },
    #[error("the profile at {url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("the profile is larger than {MAX_PROFILE_BYTES} bytes")]
    TooLarge,
    #[error("the profile is not a UCP business profile: {0}")]
    Malformed(String),
    #[error("the merchant speaks UCP {found}; this app speaks {UCP_VERSION}")]
    VersionUnsupported { found: String },
    #[error("the merchant offers no checkout over MCP")]
    NoCheckoutOverMcp,
}

/// The origin of `merchant` (an address the user typed, with or without a
/// path) and where its profile is.
pub fn profile_url(merchant: &str) -> Result<(String, Url), ProfileError> {
    let url =
        Url::parse(merchant.trim()).map_err(|_| ProfileError::NotAnAddress(merchant.to_owned()))?;
    let secure = match url.scheme() {
        "https" => true,
        "http" => is_loopback(&url),
        _ => return Err(ProfileError::NotAnAddress(merchant.to_owned())),
    };
    if !secure {
        return Err(ProfileError::NotSecure(merchant.to_owned()));
    }
    let origin = url.origin().ascii_serialization();
    let profile = Url::parse(&format!("{origin}{PROFILE_PATH}"))
        .map_err(|_| ProfileError::NotAnAddress(merchant.to_owned()))?;
    Ok((origin, profile))
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Fetches and reads the profile of `merchant`.
pub async fn fetch(merchant: &str) -> Result<MerchantProfile, ProfileError> {
    let (origin, url) = profile_url(merchant)?;
    let unreachable = |why: String| ProfileError::Unreachable {
        url: url.to_string(),
        why,
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let mut response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    if !response.status().is_success() {
        return Err(ProfileError::Status {
            url: url.to_string(),
            status: response.status().as_u16(),
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unreachable(e.to_string()))?
    {
        if body.len() + chunk.len() > MAX_PROFILE_BYTES {
            return Err(ProfileError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    parse(&origin, &body)
}

/// How long a merchant's profile read for one approval is used again:
/// long enough that computing a card, then approving it, reads it once;
/// short enough that keys the merchant retires stop counting soon after.
pub const CACHE_TTL: Duration = Duration::from_secs(60);

/// Merchants' profiles as recently read, by the address asked for; a read
/// that failed is not kept.
#[derive(Debug, Default)]
pub struct ProfileCache {
    read:
        std::sync::Mutex<std::collections::HashMap<String, (std::time::Instant, MerchantProfile)>>,
}

impl ProfileCache {
    /// The profile of `merchant`, read again when the copy kept is older
    /// than [`CACHE_TTL`].
    pub async fn fetch(&self, merchant: &str) -> Result<MerchantProfile, ProfileError> {
        if let Some(kept) = self.kept(merchant) {
            return Ok(kept);
        }
        let profile = fetch(merchant).await?;
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        read.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
        read.insert(
            merchant.to_owned(),
            (std::time::Instant::now(), profile.clone()),
        );
        Ok(profile)
    }

    /// The profile of `merchant` that `check` accepts (a checkout's
    /// signature verifying with its keys): the kept copy, or, when `check`
    /// refuses it, the profile read again, since the merchant may have
    /// rotated its keys since; then `check`'s verdict on that one.
    pub async fn fetch_checked<E>(
        &self,
        merchant: &str,
        check: impl Fn(&MerchantProfile) -> Result<(), E>,
    ) -> Result<Result<MerchantProfile, E>, ProfileError> {
        let kept = self.fetch(merchant).await?;
        if check(&kept).is_ok() {
            return Ok(Ok(kept));
        }
        self.read
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(merchant);
        let fresh = self.fetch(merchant).await?;
        Ok(check(&fresh).map(|()| fresh))
    }

    fn kept(&self, merchant: &str) -> Option<MerchantProfile> {
        let read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        read.get(merchant)
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, profile)| profile.clone())
    }
}

/// Reads a profile document served at `origin`.
pub fn parse(origin: &str, body: &[u8]) -> Result<MerchantProfile, ProfileError> {
    let document: Value = serde_json::from_slice(body)
        .map_err(|e| ProfileError::Malformed(format!("not JSON: {e}")))?;
    let ucp = document
        .get("ucp")
        .filter(|ucp| ucp.is_object())
        .ok_or_else(|| ProfileError::Malformed("no `ucp` object".into()))?;
    let version = ucp["version"]
        .as_str()
        .ok_or_else(|| ProfileError::Malformed("no `ucp.version`".into()))?;
    if version != UCP_VERSION {
        return Err(ProfileError::VersionUnsupported {
            found: version.to_owned(),
        });
    }
    let capabilities: BTreeSet<String> = ucp["capabilities"]
        .as_object()
        .map(|all| all.keys().cloned().collect())
        .unwrap_or_default();
    if !capabilities.contains(CHECKOUT) {
        return Err(ProfileError::NoCheckoutOverMcp);
    }
    let mcp_endpoint = ucp["services"]["dev.ucp.shopping"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|service| service["transport"] == "mcp")
        .and_then(|service| service["endpoint"].as_str())
        .ok_or(ProfileError::NoCheckoutOverMcp)?;
    // The endpoint gets the shopper's token: it must be as safe as the
    // profile's own address.
    profile_url(mcp_endpoint)?;
    let keys = match document.get("keys") {
        None => Vec::new(),
        Some(keys) => serde_json::from_value::<Vec<Jwk>>(keys.clone())
            .map_err(|e| ProfileError::Malformed(format!("`keys`: {e}")))?,
    };
    Ok(MerchantProfile {
        origin: origin.to_owned(),
        version: version.to_owned(),
        mcp_endpoint: mcp_endpoint.to_owned(),
        capabilities,
        keys,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document(version: &str) -> Value {
        json!({
            "ucp": {
                "version": version,
                "services": {"dev.ucp.shopping": [
                    {"transport": "rest", "endpoint": "https://shop.example/ucp"},
                    {"transport": "mcp", "endpoint": "https://shop.example/ucp/mcp"},
                ]},
                "capabilities": {CHECKOUT: [{"version": version}], AP2_MANDATE: [{"version": version}]},
            },
            "keys": [{"kid": "k1", "kty": "EC", "crv": "P-256", "x": "AA", "y": "BB"}],
        })
    }

    #[test]
    fn a_profile_names_the_mcp_service_the_capabilities_and_the_keys() {
        let body = document(UCP_VERSION).to_string();
        let profile = parse("https://shop.example", body.as_bytes()).unwrap();
        assert_eq!(profile.mcp_endpoint, "https://shop.example/ucp/mcp");
        assert!(profile.signs_checkouts());
        assert_eq!(profile.keys[0].kid, "k1");
    }

    #[test]
    fn another_version_or_no_checkout_is_refused_by_name() {
        let body = document("2026-01-11").to_string();
        assert_eq!(
            parse("https://shop.example", body.as_bytes()),
            Err(ProfileError::VersionUnsupported {
                found: "2026-01-11".into()
            })
        );
        let mut without = document(UCP_VERSION);
        without["ucp"]["capabilities"] = json!({});
        assert_eq!(
            parse("https://shop.example", without.to_string().as_bytes()),
            Err(ProfileError::NoCheckoutOverMcp)
        );
        let mut rest_only = document(UCP_VERSION);
        rest_only["ucp"]["services"]["dev.ucp.shopping"][1]["transport"] = json!("a2a");
        assert_eq!(
            parse("https://shop.example", rest_only.to_string().as_bytes()),
            Err(ProfileError::NoCheckoutOverMcp)
        );
        assert!(matches!(
            parse("https://shop.example", b"<html>"),
            Err(ProfileError::Malformed(_))
        ));
    }

    type Served = (
        String,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
        std::sync::Arc<std::sync::Mutex<String>>,
    );

    /// Serves the text in the returned cell as the profile on loopback,
    /// counting the requests.
    async fn serve_changing(body: String) -> Served {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let served = std::sync::Arc::new(AtomicUsize::new(0));
        let count = served.clone();
        let cell = std::sync::Arc::new(std::sync::Mutex::new(body));
        let current = cell.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let mut request = [0_u8; 4096];
                let _ = socket.read(&mut request).await;
                let body = current.lock().unwrap().clone();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        (origin, served, cell)
    }

    #[tokio::test]
    async fn a_profile_read_moments_ago_is_not_read_again() {
        let mut body = document(UCP_VERSION);
        body["ucp"]["services"]["dev.ucp.shopping"][1]["endpoint"] =
            json!("http://127.0.0.1:1/ucp/mcp");
        let (origin, served, _) = serve_changing(body.to_string()).await;
        let cache = ProfileCache::default();
        let first = cache.fetch(&origin).await.unwrap();
        let second = cache.fetch(&origin).await.unwrap();
        assert_eq!(first, second);
        assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(
            cache.fetch("http://127.0.0.1:1").await.is_err(),
            "a merchant that does not answer is an error, not kept"
        );
    }

    #[tokio::test]
    async fn keys_the_kept_profile_lacks_are_looked_for_in_the_profile_read_again() {
        let mut body = document(UCP_VERSION);
        body["ucp"]["services"]["dev.ucp.shopping"][1]["endpoint"] =
            json!("http://127.0.0.1:1/ucp/mcp");
        let (origin, served, cell) = serve_changing(body.to_string()).await;
        let cache = ProfileCache::default();
        let has = |kid: &'static str| {
            move |profile: &MerchantProfile| {
                if profile.keys.iter().any(|key| key.kid == kid) {
                    Ok(())
                } else {
                    Err(kid)
                }
            }
        };
        assert!(
            cache
                .fetch_checked(&origin, has("k1"))
                .await
                .unwrap()
                .is_ok()
        );
        assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);

        // The merchant rotates: its profile now publishes k2 as well.
        body["keys"] = json!([
            {"kid": "k1", "kty": "EC", "crv": "P-256", "x": "AA", "y": "BB"},
            {"kid": "k2", "kty": "EC", "crv": "P-256", "x": "CC", "y": "DD"},
        ]);
        *cell.lock().unwrap() = body.to_string();
        let rotated = cache
            .fetch_checked(&origin, has("k2"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(rotated.keys.len(), 2);
        assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(
            cache
                .fetch_checked(&origin, has("k3"))
                .await
                .unwrap()
                .unwrap_err(),
            "k3"
        );
    }

    #[test]
    fn the_profile_is_read_from_the_merchants_origin_over_https_or_on_this_machine() {
        let (origin, url) = profile_url("https://shop.example/some/page?x=1").unwrap();
        assert_eq!(origin, "https://shop.example");
        assert_eq!(url.as_str(), "https://shop.example/.well-known/ucp");
        assert!(profile_url("http://127.0.0.1:8080").is_ok());
        assert_eq!(
            profile_url("http://shop.example"),
            Err(ProfileError::NotSecure("http://shop.example".into()))
        );
        assert!(matches!(
            profile_url("shop.example"),
            Err(ProfileError::NotAnAddress(_))
        ));
    }
}
