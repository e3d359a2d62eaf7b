//! The MCP endpoint's `Origin` check (the streamable HTTP transport
//! requires it): a page on some web site, open in a shopper's browser,
//! could otherwise post calls to a shop that listens where the browser
//! reaches it. A request whose `Origin` the merchant did not allow
//! (`--allowed-origin`, none by default) is answered 403 before anything
//! else reads it; native clients send no `Origin` and are served as ever.

#[cfg(feature = "service")]
use std::sync::Arc;

#[cfg(feature = "service")]
use axum::extract::{Request, State};
#[cfg(feature = "service")]
use axum::http::{StatusCode, header};
#[cfg(feature = "service")]
use axum::middleware::Next;
#[cfg(feature = "service")]
use axum::response::{IntoResponse, Response};
use reqwest::Url;

/// The web origins whose pages may call the shop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedOrigins(Vec<String>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--allowed-origin `{0}` is not a web origin: give its scheme, host and port only, as https://shop.example or http://localhost:5173"
)]
pub struct NotAnOrigin(pub String);

impl AllowedOrigins {
    /// Every origin given must be one (`scheme://host[:port]`).
    pub fn new<S: AsRef<str>>(origins: impl IntoIterator<Item = S>) -> Result<Self, NotAnOrigin> {
        origins
            .into_iter()
            .map(|text| origin_of(text.as_ref()).ok_or_else(|| NotAnOrigin(text.as_ref().into())))
            .collect::<Result<_, _>>()
            .map(AllowedOrigins)
    }

    /// Whether a request with this `Origin` header is served.
    pub fn allows(&self, origin: &str) -> bool {
        origin_of(origin).is_some_and(|origin| self.0.contains(&origin))
    }
}

/// `text` as an origin serialization (lower-case host, default port left
/// out), when it is one: an http(s) URL with nothing past its authority.
/// `null` and any URL with a path, query, fragment or user are not.
fn origin_of(text: &str) -> Option<String> {
    let url = Url::parse(text.trim()).ok()?;
    let bare = url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    (matches!(url.scheme(), "http" | "https") && url.host().is_some() && bare)
        .then(|| url.origin().ascii_serialization())
}

/// The middleware: 403 for an `Origin` not allowed; any other request goes on.
#[cfg(feature = "service")]
pub async fn check_origin(
    State(allowed): State<Arc<AllowedOrigins>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(origin) = request.headers().get(header::ORIGIN) else {
        return next.run(request).await;
    };
    if origin.to_str().is_ok_and(|origin| allowed.allows(origin)) {
        return next.run(request).await;
    }
    tracing::info!(origin = ?origin, "request refused: its Origin is not allowed");
    let body = serde_json::json!({
        "error": "forbidden_origin",
        "error_description": "requests from this web origin are not allowed",
    });
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_matches_by_scheme_host_and_port() {
        let allowed =
            AllowedOrigins::new(["https://shop.example", "http://localhost:5173"]).unwrap();
        assert!(allowed.allows("https://shop.example"));
        assert!(allowed.allows("https://SHOP.example:443"));
        assert!(allowed.allows("http://localhost:5173"));
        for other in [
            "http://shop.example",
            "https://shop.example:8443",
            "https://evil.example",
            "http://localhost:5174",
            "null",
            "",
        ] {
            assert!(!allowed.allows(other), "{other}");
        }
        assert!(!AllowedOrigins::default().allows("https://shop.example"));
    }

    #[test]
    fn only_origins_can_be_allowed() {
        for bad in [
            "shop.example",
            "https://shop.example/mcp",
            "https://shop.example?x=1",
            "https://u@shop.example",
            "null",
            "*",
            "ftp://shop.example",
        ] {
            assert_eq!(
                AllowedOrigins::new([bad]),
                Err(NotAnOrigin(bad.into())),
                "{bad}"
            );
        }
    }
}
