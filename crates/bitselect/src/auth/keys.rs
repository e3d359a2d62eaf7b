//! The authorization server's signing keys: its metadata names its
//! `jwks_uri`; the key set is fetched once and cached, and fetched again when
//! a token names a key id the cache does not hold (a key rotation), at most
//! once per [`REFETCH_INTERVAL`], so a stream of tokens with made-up key ids
//! cannot make the shop hammer the authorization server.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;

use super::config::AuthConfig;

/// The shortest time between two fetches of the key set.
pub const REFETCH_INTERVAL: Duration = Duration::from_secs(30);
/// How long one request to the authorization server may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot reach the authorization server at {url}: {source}")]
    Fetch {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the authorization server's metadata was not found at {tried:?}")]
    NoMetadata { tried: Vec<String> },
    #[error("the authorization server's metadata names the issuer `{found}`, not `{expected}`")]
    IssuerMismatch { expected: String, found: String },
    #[error("the key set was fetched less than {} s ago; not fetching it again yet", REFETCH_INTERVAL.as_secs())]
    TooSoon,
}

#[derive(Debug, Deserialize)]
struct IssuerMetadata {
    issuer: String,
    jwks_uri: String,
}

#[derive(Debug, Deserialize)]
struct KeySet {
    keys: Vec<Value>,
}

#[derive(Debug, Default)]
struct Cache {
    jwks_uri: Option<String>,
    /// Signing keys by `kid`; a key without one is kept under "".
    keys: HashMap<String, Jwk>,
    fetched_at: Option<Instant>,
}

/// Where the shop gets the keys that sign access tokens.
#[derive(Debug)]
pub struct KeySource {
    config: AuthConfig,
    http: reqwest::Client,
    cache: Mutex<Cache>,
    refetch_interval: Duration,
}

impl KeySource {
    pub fn new(config: AuthConfig) -> Self {
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        Self {
            config,
            http,
            cache: Mutex::new(Cache::default()),
            refetch_interval: REFETCH_INTERVAL,
        }
    }

    /// A source that already holds these keys, fetched just now (tests).
    #[cfg(test)]
    pub(crate) fn holding(config: AuthConfig, keys: Vec<Jwk>) -> Self {
        let source = Self::new(config);
        let cache = Cache {
            jwks_uri: None,
            keys: keys
                .into_iter()
                .map(|jwk| (jwk.common.key_id.clone().unwrap_or_default(), jwk))
                .collect(),
            fetched_at: Some(Instant::now()),
        };
        Self {
            cache: Mutex::new(cache),
            ..source
        }
    }

    /// The key a token's header names. `kid: None` finds a key only when the
    /// set holds exactly one. An unknown key id fetches the set again, unless
    /// it was fetched within [`REFETCH_INTERVAL`].
    pub async fn key(&self, kid: Option<&str>) -> Result<Option<Jwk>, KeyError> {
        let mut cache = self.cache.lock().await;
        if let Some(key) = find(&cache, kid) {
            return Ok(Some(key));
        }
        let recently = cache
            .fetched_at
            .is_some_and(|at| at.elapsed() < self.refetch_interval);
        if recently {
            return Err(KeyError::TooSoon);
        }
        self.refresh(&mut cache).await?;
        Ok(find(&cache, kid))
    }

    /// Fetches the key set now (at start, so the first request need not wait).
    pub async fn warm_up(&self) -> Result<usize, KeyError> {
        let mut cache = self.cache.lock().await;
        self.refresh(&mut cache).await?;
        Ok(cache.keys.len())
    }

    async fn refresh(&self, cache: &mut Cache) -> Result<(), KeyError> {
        // Counted from the attempt: a failing server is not asked again at once.
        cache.fetched_at = Some(Instant::now());
        let jwks_uri = match &cache.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri = self.discover().await?;
                cache.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set: KeySet = self.get_json(&jwks_uri).await?;
        cache.keys = signing_keys(set);
        tracing::info!(
            keys = cache.keys.len(),
            jwks_uri,
            "authorization server keys fetched"
        );
        Ok(())
    }

    /// The `jwks_uri` from the issuer's metadata, whose `issuer` must be
    /// the one configured (RFC 8414 §3.3).
    async fn discover(&self) -> Result<String, KeyError> {
        let tried = self.config.issuer_metadata_urls();
        for url in &tried {
            let metadata: IssuerMetadata = match self.get_json(url).await {
                Ok(metadata) => metadata,
                Err(error) => {
                    tracing::debug!(%error, url, "no authorization server metadata here");
                    continue;
                }
            };
            if metadata.issuer != self.config.issuer() {
                return Err(KeyError::IssuerMismatch {
                    expected: self.config.issuer().to_owned(),
                    found: metadata.issuer,
                });
            }
            return Ok(metadata.jwks_uri);
        }
        Err(KeyError::NoMetadata { tried })
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, KeyError> {
        let fetch = |source| KeyError::Fetch {
            url: url.to_owned(),
            source,
        };
        self.http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(fetch)?
            .json()
            .await
            .map_err(fetch)
    }
}

fn find(cache: &Cache, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => cache.keys.get(kid).cloned(),
        None if cache.keys.len() == 1 => cache.keys.values().next().cloned(),
        None => None,
    }
}

/// The set's signing keys. A key this crate cannot read (a type it does not
/// know) or one marked for encryption is left out, not the whole set.
fn signing_keys(set: KeySet) -> HashMap<String, Jwk> {
    set.keys
        .into_iter()
        .filter_map(|value| serde_json::from_value::<Jwk>(value).ok())
        .filter(|jwk| {
            !matches!(
                jwk.common.public_key_use,
                Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
            )
        })
        .map(|jwk| (jwk.common.key_id.clone().unwrap_or_default(), jwk))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    use jsonwebtoken::{Algorithm, EncodingKey};
    use serde_json::json;

    use super::*;

    /// An authorization server's metadata and key set, whose keys a test
    /// changes, counting the key set's fetches.
    #[derive(Clone, Default)]
    struct KeyServer {
        keys: Arc<std::sync::Mutex<Vec<Value>>>,
        fetches: Arc<AtomicUsize>,
    }

    impl KeyServer {
        async fn start(&self) -> String {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let issuer = base.clone();
            let keys = self.clone();
            let router = axum::Router::new()
                .route(
                    "/.well-known/oauth-authorization-server",
                    axum::routing::get(move || async move {
                        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}).to_string()
                    }),
                )
                .route(
                    "/jwks",
                    axum::routing::get(move || async move {
                        keys.fetches.fetch_add(1, Ordering::SeqCst);
                        json!({"keys": *keys.keys.lock().unwrap()}).to_string()
                    }),
                );
            tokio::spawn(async move { axum::serve(listener, router).await });
            base
        }

        fn publish(&self, kids: &[&str]) {
            *self.keys.lock().unwrap() = kids.iter().map(|kid| public_key(kid)).collect();
        }

        fn fetches(&self) -> usize {
            self.fetches.load(Ordering::SeqCst)
        }
    }

    fn public_key(kid: &str) -> Value {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        let key = EncodingKey::from_ec_der(pkcs8.as_ref());
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        serde_json::to_value(jwk).unwrap()
    }

    #[tokio::test]
    async fn an_unknown_key_id_fetches_the_set_again_at_most_once_per_interval() {
        let server = KeyServer::default();
        server.publish(&["key-1"]);
        let issuer = server.start().await;
        let config = AuthConfig::new(&issuer, "https://shop.example/mcp").unwrap();
        let interval = Duration::from_millis(300);
        let source = KeySource {
            refetch_interval: interval,
            ..KeySource::new(config)
        };

        assert!(source.key(Some("key-1")).await.unwrap().is_some());
        assert_eq!(server.fetches(), 1, "the first use fetches the set");

        // The server rotates; a token with the new key id comes at once.
        server.publish(&["key-1", "key-2"]);
        assert!(matches!(
            source.key(Some("key-2")).await,
            Err(KeyError::TooSoon)
        ));
        assert_eq!(server.fetches(), 1, "not fetched again within the interval");

        tokio::time::sleep(interval).await;
        assert!(source.key(Some("key-2")).await.unwrap().is_some());
        assert_eq!(server.fetches(), 2, "fetched once more for the new key");

        // Made-up key ids do not make it fetch again and again.
        for kid in ["made-up-1", "made-up-2", "made-up-3"] {
            assert!(source.key(Some(kid)).await.is_err());
        }
        assert_eq!(server.fetches(), 2);
        assert!(
            source.key(Some("key-1")).await.unwrap().is_some(),
            "known keys still work"
        );
    }
}
