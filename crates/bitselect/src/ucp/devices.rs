//! The users' device keys: a public key the shopper's app made and keeps
//! in the operating system's keyring, bound to the user by the shop. A
//! checkout is completed only with a mandate that key signed
//! (`ap2::mandate`), so an access token alone (stolen, or a model's)
//! cannot spend the shopper's money.
//!
//! A signed-in shop binds a key only with a fresh token used for nothing
//! else before: the app binds its key right after sign-in, and that token
//! can bind no other. A token stolen later finds its binding used; one
//! stolen first makes the app's own binding fail, which the app reports.
//! A shop without sign-in (the local demo) binds for its one user.

use serde::Serialize;

use ap2::jws::Jwk;

use super::names::key_id;
use crate::clock::Millis;
use crate::error::{Refusal, Result};
use crate::store::params;
use crate::users::UserConn;

/// How long after its issue a token may still bind a key.
pub const BIND_WINDOW_SECS: i64 = 300;

/// The most device keys a user may have bound at once.
pub const MAX_DEVICES: i64 = 10;

/// The token a signed-in request came with, as far as binding reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingToken<'a> {
    pub id: Option<&'a str>,
    pub issued_at_secs: Option<i64>,
}

/// A bound key, as the shop shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Device {
    pub id: String,
    pub jwk: Jwk,
    pub created_at: Millis,
}

fn refused(reason: impl Into<String>) -> crate::error::ShopError {
    Refusal::DeviceBindingRefused {
        reason: reason.into(),
    }
    .into()
}

/// Binds `jwk` to the user: with `token` (a signed-in shop) only if the
/// token is fresh and has bound nothing before. The same key bound again
/// by its user is the same device.
pub fn bind(
    conn: &UserConn<'_>,
    now: Millis,
    jwk: &Jwk,
    token: Option<BindingToken<'_>>,
) -> Result<Device> {
    let id = jwk
        .thumbprint()
        .map(|thumbprint| key_id(&thumbprint))
        .ok_or_else(|| {
            refused("只接受 P-256 椭圆曲线公钥（kty EC，crv P-256，x 与 y 各 32 字节）")
        })?;
    let jwk = Jwk::p256(&id, &jwk.x, &jwk.y);
    if let Some(owner) = conn.query_opt(
        "SELECT user_id, revoked_at FROM device_key WHERE kid = ?1",
        params![id],
        |row| Ok((row.get::<i64>(0)?, row.get::<Option<i64>>(1)?)),
    )? {
        return match owner {
            (user, None) if user == conn.user().get() => active(conn, &id),
            (_, Some(_)) => Err(refused("这个密钥已被撤销，请生成新的密钥")),
            _ => Err(refused("这个密钥已绑定到别的账户")),
        };
    }
    let token_id = match token {
        None => None,
        Some(token) => {
            let token_id = token.id.ok_or_else(|| refused("访问令牌没有编号（jti）"))?;
            let issued = token
                .issued_at_secs
                .ok_or_else(|| refused("访问令牌没有签发时间（iat）"))?;
            if now / 1000 - issued > BIND_WINDOW_SECS {
                return Err(refused("只能在刚登录时绑定设备，请重新登录"));
            }
            let used: i64 = conn.query_row(
                "SELECT COUNT(*) FROM device_key WHERE token_id = ?1",
                params![token_id],
                |row| row.get(0),
            )?;
            if used > 0 {
                return Err(refused("这个访问令牌已经绑定过设备，请重新登录"));
            }
            Some(token_id)
        }
    };
    let bound: i64 = conn.query_row(
        "SELECT COUNT(*) FROM device_key WHERE user_id = ?1 AND revoked_at IS NULL",
        params![conn.user()],
        |row| row.get(0),
    )?;
    if bound >= MAX_DEVICES {
        return Err(refused(format!(
            "最多绑定 {MAX_DEVICES} 台设备，请先移除不用的设备"
        )));
    }
    conn.execute(
        "INSERT INTO device_key (kid, user_id, jwk, token_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, conn.user(), serde_json::to_string(&jwk)?, token_id, now],
    )?;
    active(conn, &id)
}

/// The user's bound key `id`, unless revoked.
pub fn active(conn: &UserConn<'_>, id: &str) -> Result<Device> {
    find_active(conn, id)?.ok_or_else(|| Refusal::UnknownDevice { id: id.to_owned() }.into())
}

/// The user's key `id`, if bound and not revoked.
pub fn find_active(conn: &UserConn<'_>, id: &str) -> Result<Option<Device>> {
    conn.query_opt(
        "SELECT jwk, created_at FROM device_key
         WHERE kid = ?1 AND user_id = ?2 AND revoked_at IS NULL",
        params![id, conn.user()],
        |row| {
            Ok(Device {
                id: id.to_owned(),
                jwk: serde_json::from_str(&row.get::<String>(0)?)?,
                created_at: row.get(1)?,
            })
        },
    )
}

/// Revokes the user's key `id` (a device removed, or signed out): no
/// mandate it signs is accepted from now on.
pub fn revoke(conn: &UserConn<'_>, now: Millis, id: &str) -> Result<()> {
    let changed = conn.execute(
        "UPDATE device_key SET revoked_at = ?1
         WHERE kid = ?2 AND user_id = ?3 AND revoked_at IS NULL",
        params![now, id, conn.user()],
    )?;
    if changed == 0 {
        return Err(Refusal::UnknownDevice { id: id.to_owned() }.into());
    }
    Ok(())
}
