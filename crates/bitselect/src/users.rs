//! Who a call acts for. Every cart line, held coupon, order, parcel,
//! after-sale, ticket and idempotency key belongs to one user; the catalogue
//! and its stock are shared.
//!
//! A [`Caller`] is a user the shop found in its own `users` table, never a
//! value taken from a request's words. The domain reaches the database through
//! a [`UserConn`], which carries the caller's id next to the connection, so
//! every per-user query has the id at hand and none reads it from anywhere
//! global.

use std::ops::Deref;

use crate::error::{Result, ShopError};
use crate::store::{Column, Conn, Dialect, EachRow, FromColumn, ToValue, Value, params};

/// The `users.id` of a shop user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UserId(i64);

impl UserId {
    pub fn get(self) -> i64 {
        self.0
    }
}

/// The demo user: the desktop app's one shopper, who owns the seed's cart,
/// coupons and orders (schema version 2 made it user 1).
pub const DEMO_USER: UserId = UserId(1);

/// The demo user's subject.
pub const DEMO_SUB: &str = "demo";

/// The longest subject the shop keeps; OAuth `sub` values are short.
const MAX_SUB_CHARS: usize = 255;

/// The user a call acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    id: UserId,
    sub: String,
}

impl Caller {
    /// The demo user, whom stdio and the default HTTP mode act for.
    pub fn demo() -> Self {
        Self {
            id: DEMO_USER,
            sub: DEMO_SUB.to_owned(),
        }
    }

    pub fn id(&self) -> UserId {
        self.id
    }

    /// The stable external subject, as an access token's `sub` names it.
    pub fn sub(&self) -> &str {
        &self.sub
    }

    /// A caller as if the shop had found it, for unit tests of what keeps
    /// callers.
    #[cfg(test)]
    pub(crate) fn found(id: i64, sub: &str) -> Self {
        Self {
            id: UserId(id),
            sub: sub.to_owned(),
        }
    }
}

/// The authenticated subject of one HTTP request. An authentication layer
/// ([`crate::auth::require_bearer`], the JWT check) puts it in the request's
/// extensions; a server that serves callers per request acts for it and for
/// nobody else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject(pub String);

/// The verified access token an HTTP request came with: its subject, and
/// the token's own id (`jti`) and issue time (`iat`, seconds), which the
/// shop reads when a token binds a device key (once, at sign-in). The
/// authentication layer puts it in the request's extensions beside the
/// [`Subject`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub subject: Subject,
    pub id: Option<String>,
    pub issued_at_secs: Option<i64>,
}

/// A connection acting for one user: what the domain's per-user functions
/// take. It derefs to the connection, so shared reads (the catalogue) take
/// it as they are.
#[derive(Clone, Copy)]
pub struct UserConn<'c> {
    conn: &'c dyn Conn,
    user: UserId,
}

impl<'c> UserConn<'c> {
    pub fn new(conn: &'c dyn Conn, user: UserId) -> Self {
        Self { conn, user }
    }

    /// Whose rows the call may see and change.
    pub fn user(&self) -> UserId {
        self.user
    }
}

impl<'c> Deref for UserConn<'c> {
    type Target = dyn Conn + 'c;

    fn deref(&self) -> &(dyn Conn + 'c) {
        self.conn
    }
}

impl std::fmt::Debug for UserConn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserConn")
            .field("user", &self.user)
            .finish()
    }
}

/// A user's connection is a connection: shared reads take it as it is.
impl Conn for UserConn<'_> {
    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<u64> {
        self.conn.execute(sql, params)
    }

    fn query(&self, sql: &str, params: &[&dyn ToValue], each: EachRow<'_>) -> Result<()> {
        self.conn.query(sql, params, each)
    }

    fn dialect(&self) -> &'static Dialect {
        self.conn.dialect()
    }
}

fn check_sub(sub: &str) -> Result<()> {
    if sub.trim().is_empty() || sub.chars().count() > MAX_SUB_CHARS || sub.trim() != sub {
        return Err(ShopError::invalid(
            "sub",
            format!("用户标识须为 1 到 {MAX_SUB_CHARS} 个字符，首尾不能有空白"),
        ));
    }
    Ok(())
}

/// The user with this subject, if the shop has one.
pub fn find(conn: &dyn Conn, sub: &str) -> Result<Option<Caller>> {
    conn.query_opt(
        "SELECT id, sub FROM users WHERE sub = ?1",
        params![sub],
        |row| {
            Ok(Caller {
                id: UserId(row.get(0)?),
                sub: row.get(1)?,
            })
        },
    )
}

/// The user with this subject, created on first sight with `display_name`.
pub fn find_or_create(conn: &dyn Conn, sub: &str, display_name: &str) -> Result<Caller> {
    check_sub(sub)?;
    if let Some(caller) = find(conn, sub)? {
        return Ok(caller);
    }
    let id = conn.query_row(
        "INSERT INTO users (sub, display_name) VALUES (?1, ?2) RETURNING id",
        params![sub, display_name],
        |row| row.get(0),
    )?;
    Ok(Caller {
        id: UserId(id),
        sub: sub.to_owned(),
    })
}

/// A user's id reads from the integer the database keeps.
impl FromColumn for UserId {
    fn from_column(column: Column<'_>) -> std::result::Result<Self, Column<'_>> {
        i64::from_column(column).map(UserId)
    }
}

/// A user's id binds as the integer the database keeps.
impl ToValue for UserId {
    fn to_value(&self) -> Value<'_> {
        Value::Int(self.get())
    }
}
