//! Whom a server's tool calls act for: one user fixed for the whole server
//! (stdio, the default HTTP mode: the demo user), or the authenticated
//! subject of each HTTP request.
//!
//! A request can only choose its user through a [`Subject`] that a layer in
//! front of the MCP service put in the HTTP request's extensions; nothing in
//! the request's own headers or arguments is read here.

use rmcp::model::Extensions;

use crate::error::{Result, ShopError};
use crate::shop::Shop;
use crate::users::Caller;
#[cfg(feature = "service")]
use crate::users::Subject;

/// Whom a [`crate::ShopServer`]'s calls act for.
#[derive(Debug, Clone)]
pub enum Callers {
    /// Every call acts for this user, whatever the request carries.
    Fixed(Caller),
    /// Each call acts for the [`Subject`] in its HTTP request's extensions,
    /// created as a shop user on first sight; a call without one is refused
    /// with `UNAUTHENTICATED`.
    PerRequest,
}

/// Whom one call acts for, before the shop has looked the subject up.
#[derive(Debug)]
pub(crate) enum Acting {
    Known(Caller),
    Subject(String),
}

impl Callers {
    /// Whom a call with these request extensions acts for.
    pub(crate) fn acting(&self, extensions: &Extensions) -> Result<Acting> {
        match self {
            Self::Fixed(caller) => Ok(Acting::Known(caller.clone())),
            Self::PerRequest => subject_of(extensions)
                .map(Acting::Subject)
                .ok_or(ShopError::Unauthenticated),
        }
    }
}

impl Callers {
    /// Whom an HTTP request with this authenticated `subject` (set by the
    /// sign-in layer, if any) acts for.
    #[cfg(feature = "service")]
    pub(crate) fn acting_for_request(&self, subject: Option<&Subject>) -> Result<Acting> {
        match self {
            Self::Fixed(caller) => Ok(Acting::Known(caller.clone())),
            Self::PerRequest => subject
                .map(|subject| Acting::Subject(subject.0.clone()))
                .ok_or(ShopError::Unauthenticated),
        }
    }

    /// Who a call with these request extensions is, for the log: the
    /// subject, or `None` when a per-request call has none.
    pub(crate) fn sub_for_log(&self, extensions: &Extensions) -> Option<String> {
        match self {
            Self::Fixed(caller) => Some(caller.sub().to_owned()),
            Self::PerRequest => subject_of(extensions),
        }
    }
}

impl Acting {
    /// The shop acting for this caller; a new subject becomes a user. Runs
    /// on the blocking pool, as it may write.
    pub(crate) fn shop(self, shop: &Shop) -> Result<Shop> {
        let caller = match self {
            Self::Known(caller) => caller,
            Self::Subject(sub) => shop.user_for_subject(&sub, &sub)?,
        };
        Ok(shop.acting_for(caller))
    }
}

/// The subject the authentication layer set on the HTTP request, if any.
#[cfg(feature = "service")]
fn subject_of(extensions: &Extensions) -> Option<String> {
    let parts = extensions.get::<axum::http::request::Parts>()?;
    parts
        .extensions
        .get::<Subject>()
        .map(|subject| subject.0.clone())
}

/// Without the HTTP service no request carries a subject.
#[cfg(not(feature = "service"))]
fn subject_of(_extensions: &Extensions) -> Option<String> {
    None
}
