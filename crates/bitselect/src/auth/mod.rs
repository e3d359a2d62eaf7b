//! Sign-in over HTTP: the shop as an OAuth protected resource (MCP
//! authorization, RFC 9728). A request carries a bearer JWT that an
//! authorization server the shop trusts issued for the shop's resource URL;
//! the middleware checks it and puts its `sub` in the request's extensions as
//! a [`crate::Subject`], which [`crate::Callers::PerRequest`] acts for.
//!
//! - [`config`]: the issuer and the resource URL, and the URLs derived from them;
//! - [`metadata`]: the protected resource metadata document;
//! - [`keys`]: the authorization server's signing keys, found through its
//!   metadata and cached;
//! - [`token`]: what makes an access token valid here;
//! - `verified`: tokens that passed, kept until they expire;
//! - [`layer`]: the axum middleware and its 401 answers.

//!
//! Only [`config`] and [`metadata`] are built without the `service`
//! feature: the command line still reads the options, and says they need it.

pub mod config;
#[cfg(feature = "service")]
pub mod keys;
#[cfg(feature = "service")]
pub mod layer;
pub mod metadata;
#[cfg(feature = "service")]
pub mod token;
#[cfg(feature = "service")]
mod verified;

pub use config::{AuthConfig, ConfigError};
#[cfg(feature = "service")]
pub use keys::{KeyError, KeySource};
#[cfg(feature = "service")]
pub use layer::{Authenticator, require_bearer};
#[cfg(feature = "service")]
pub use token::{TokenError, Validator};
