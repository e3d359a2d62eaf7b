//! The authorization server's signing keys: its metadata names its
//! `jwks_uri`; the key set is fetched once and cached, and fetched again when
//! a token names a key id the cache does not hold (a key rotation), at most
//! once per [`REFETCH_INTERVAL`] for the issuer, so a stream of tokens with
//! made-up key ids cannot make the shop hammer the authorization server.
//!
//! A fetch never holds the lock that lookups take: the cache is locked only
//! to read or swap it, and fetches queue on a lock of their own, so a token
//! signed with a known key is checked at once while a slow authorization
//! server keeps a fetch waiting.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use serde::Deserialize;
use serde_json::Value;

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
    /// Locked only to read or swap, never across a fetch.
    cache: Mutex<Cache>,
    /// Held by the one fetch under way; the others wait for its keys.
    fetching: tokio::sync::Mutex<()>,
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
            fetching: tokio::sync::Mutex::new(()),
            refetch_interval: REFETCH_INTERVAL,
        }
    }

    /// A source that already holds these keys, fetched just now (tests).
    #[cfg(test)]
    pub(crate) fn holding(config: AuthConfig, keys: Vec<Jwk>) -> Self {
        let source = Self::new(config);
        *source.cache() = Cache {
            jwks_uri: None,
            keys: keys
                .into_iter()
                .map(|jwk| (jwk.common.key_id.clone().unwrap_or_default(), jwk))
                .collect(),
            fetched_at: Some(Instant::now()),
        };
        source
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        // The cache is whole after any panic: each write is one assignment.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The key a token's header names. `kid: None` finds a key only when the
    /// set holds exactly one. An unknown key id fetches the set again, unless
    /// it was fetched within [`REFETCH_INTERVAL`].
    pub async fn key(&self, kid: Option<&str>) -> Result<Option<Jwk>, KeyError> {
        let cached = find(&self.cache(), kid);
        if cached.is_some() {
            return Ok(cached);
        }
        let _fetching = self.fetching.lock().await;
        // The fetch this one waited for may have brought the key.
        let cached = find(&self.cache(), kid);
        if cached.is_some() {
            return Ok(cached);
        }
        let recently = self
            .cache()
            .fetched_at
            .is_some_and(|at| at.elapsed() < self.refetch_interval);
        if recently {
            return Err(KeyError::TooSoon);
        }
        self.refresh().await?;
        Ok(find(&self.cache(), kid))
    }

    /// Fetches the key set now (at start, so the first request need not wait).
    pub async fn warm_up(&self) -> Result<usize, KeyError> {
        let _fetching = self.fetching.lock().await;
        self.refresh().await?;
        Ok(self.cache().keys.len())
    }

    /// Fetches the set and swaps it in; the caller holds `fetching`.
    async fn refresh(&self) -> Result<(), KeyError> {
        // Counted from the attempt: a failing server is not asked again at once.
        let known_uri = {
            let mut cache = self.cache();
            cache.fetched_at = Some(Instant::now());
            cache.jwks_uri.clone()
        };
        let jwks_uri = match known_uri {
            Some(uri) => uri,
            None => {
                let uri = self.discover().await?;
                self.cache().jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set: KeySet = self.get_json(&jwks_uri).await?;
        let keys = signing_keys(set);
        let count = keys.len();
        self.cache().keys = keys;
        tracing::info!(keys = count, jwks_uri, "authorization server keys fetched");
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
    use tokio::sync::{Notify, Semaphore};

    use super::*;

    /// An authorization server's metadata and key set, whose keys a test
    /// changes, counting the key set's fetches.
    #[derive(Clone, Default)]
    struct KeyServer {
        keys: Arc<std::sync::Mutex<Vec<Value>>>,
        fetches: Arc<AtomicUsize>,
        /// While set, a key set fetch waits at the server for a permit.
        hold: Arc<std::sync::Mutex<Option<Arc<Semaphore>>>>,
        /// Told when a held fetch has arrived.
        arrived: Arc<Notify>,
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
                        let hold = keys.hold.lock().unwrap().clone();
                        if let Some(gate) = hold {
                            keys.arrived.notify_one();
                            let _permit = gate.acquire().await.unwrap();
                        }
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

        /// Makes key set fetches wait from now on; a permit lets one go.
        fn hold(&self) -> Arc<Semaphore> {
            let gate = Arc::new(Semaphore::new(0));
            *self.hold.lock().unwrap() = Some(gate.clone());
            gate
        }
    }

    fn source_of(issuer: &str, refetch_interval: Duration) -> Arc<KeySource> {
        let config = AuthConfig::new(issuer, "https://shop.example/mcp").unwrap();
        Arc::new(KeySource {
            refetch_interval,
            ..KeySource::new(config)
        })
    }

    /// The future's output if it has one without waiting for anything.
    fn ready_now<F: std::future::Future>(future: F) -> Option<F::Output> {
        let mut future = std::pin::pin!(future);
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        }
    }

    #[tokio::test]
    async fn a_slow_key_fetch_does_not_hold_up_tokens_signed_with_a_known_key() {
        let server = KeyServer::default();
        server.publish(&["key-1"]);
        let source = source_of(&server.start().await, Duration::ZERO);
        source.warm_up().await.unwrap();

        let release = server.hold();
        server.publish(&["key-1", "key-2"]);
        let rotated = tokio::spawn({
            let source = source.clone();
            async move { source.key(Some("key-2")).await }
        });
        server.arrived.notified().await;

        let known = ready_now(source.key(Some("key-1")))
            .expect("the known key is found while the fetch waits at the server");
        assert!(known.unwrap().is_some());
        release.add_permits(1);
        assert!(
            rotated.await.unwrap().unwrap().is_some(),
            "the new key came"
        );
    }

    #[tokio::test]
    async fn a_flood_of_unknown_key_ids_fetches_the_set_once_per_interval() {
        let server = KeyServer::default();
        server.publish(&["key-1"]);
        let source = source_of(&server.start().await, REFETCH_INTERVAL);
        let release = server.hold();
        let mut flood = tokio::task::JoinSet::new();
        for n in 0..200 {
            let source = source.clone();
            flood.spawn(async move { source.key(Some(&format!("made-up-{n}"))).await });
        }
        server.arrived.notified().await;
        release.add_permits(1);
        while let Some(looked_up) = flood.join_next().await {
            assert!(!matches!(looked_up.unwrap(), Ok(Some(_))));
        }
        assert_eq!(server.fetches(), 1, "one fetch for the whole flood");
        for n in 0..200 {
            assert!(source.key(Some(&format!("again-{n}"))).await.is_err());
        }
        assert_eq!(server.fetches(), 1);
        assert!(source.key(Some("key-1")).await.unwrap().is_some());
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
