//! The merchant's signing keys, kept in the shop's database: every instance
//! of the service signs with the newest and publishes every key still in
//! use, so a checkout signed by one instance verifies at any other.
//!
//! Rotation adds a new key and schedules the others' retirement one
//! checkout lifetime later: a checkout signed just before the rotation
//! still verifies until it would have expired anyway.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;

use ap2::jws::{Jwk, KeyError, SigningKey};

use super::names::key_id;
use crate::clock::Millis;
use crate::error::{Result, ShopError};
use crate::store::{Conn, params};

/// How long a checkout session lives (the standard's default: six hours),
/// and so how long a superseded key stays published.
pub const CHECKOUT_LIFETIME_MS: Millis = 6 * 60 * 60 * 1000;

impl From<KeyError> for ShopError {
    fn from(error: KeyError) -> Self {
        Self::Signing(error.to_string())
    }
}

/// Makes the first key if the shop has none in use: run once at start, so
/// that reads (the profile, a signature) never have to write.
pub fn ensure(conn: &dyn Conn, now: Millis) -> Result<()> {
    if current(conn)?.is_none() {
        add(conn, now)?;
    }
    Ok(())
}

/// The key to sign with: the newest not yet retired.
pub fn signer(conn: &dyn Conn) -> Result<SigningKey> {
    current(conn)?.ok_or_else(|| ShopError::Signing("the shop has no signing key".to_owned()))
}

/// A new signing key; the others stay published for one checkout lifetime.
pub fn rotate(conn: &dyn Conn, now: Millis) -> Result<SigningKey> {
    conn.execute(
        "UPDATE merchant_signing_key SET retired_at = ?1 WHERE retired_at IS NULL",
        params![now + CHECKOUT_LIFETIME_MS],
    )?;
    add(conn, now)
}

/// The public keys a checkout may have been signed with: the one in use
/// first, then those being retired, newest first.
pub fn published(conn: &dyn Conn, now: Millis) -> Result<Vec<Jwk>> {
    let stored = conn.query_all(
        "SELECT pkcs8 FROM merchant_signing_key
         WHERE retired_at IS NULL OR retired_at > ?1
         ORDER BY retired_at IS NULL DESC, created_at DESC, kid",
        params![now],
        |row| row.get::<String>(0),
    )?;
    stored
        .iter()
        .map(|pkcs8| Ok(read_key(pkcs8)?.public_jwk()))
        .collect()
}

fn current(conn: &dyn Conn) -> Result<Option<SigningKey>> {
    conn.query_opt(
        "SELECT pkcs8 FROM merchant_signing_key WHERE retired_at IS NULL
         ORDER BY created_at DESC, kid LIMIT 1",
        params![],
        |row| read_key(&row.get::<String>(0)?),
    )
}

fn add(conn: &dyn Conn, now: Millis) -> Result<SigningKey> {
    let (key, pkcs8) = SigningKey::generate()?;
    let key = named(key);
    conn.execute(
        "INSERT INTO merchant_signing_key (kid, pkcs8, created_at) VALUES (?1, ?2, ?3)",
        params![key.kid(), B64.encode(pkcs8), now],
    )?;
    tracing::info!(kid = key.kid(), "made a new merchant signing key");
    Ok(key)
}

fn read_key(stored: &str) -> Result<SigningKey> {
    let pkcs8 = B64
        .decode(stored)
        .map_err(|e| ShopError::Corrupt(format!("签名密钥无法解码：{e}")))?;
    Ok(named(SigningKey::from_pkcs8(&pkcs8)?))
}

/// `key` under the shop's id for it.
fn named(key: SigningKey) -> SigningKey {
    let kid = key_id(key.kid());
    key.with_kid(kid)
}
