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
//! - [`layer`]: the axum middleware and its 401 answers.

pub mod config;
pub mod keys;
pub mod layer;
pub mod metadata;
pub mod token;

pub use config::{AuthConfig, ConfigError};
pub use keys::{KeyError, KeySource};
pub use layer::{Authenticator, require_bearer};
pub use token::{TokenError, Validator};
