//! The protected resource metadata document (RFC 9728 §2), which tells a
//! client that got a 401 where to sign in.

use serde::Serialize;

use super::config::AuthConfig;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceMetadata {
    /// The resource URL, the audience a token must be issued for.
    pub resource: String,
    pub authorization_servers: Vec<String>,
    /// Tokens come only in the `Authorization` header, never in a query.
    pub bearer_methods_supported: Vec<&'static str>,
    pub resource_name: &'static str,
}

impl ResourceMetadata {
    /// The shop uses no scopes: a token for its audience may do what its
    /// user may do, so `scopes_supported` is left out.
    pub fn of(config: &AuthConfig) -> Self {
        Self {
            resource: config.resource().to_owned(),
            authorization_servers: vec![config.issuer().to_owned()],
            bearer_methods_supported: vec!["header"],
            resource_name: "比特严选商城",
        }
    }
}
