//! The web pages a server may send the user to (URL-mode elicitation): its
//! own origin, the one its address names (an HTTP server's URL, the online
//! shop's), and the origins the user declared for it in its settings, which
//! the settings page shows on the server's row. A page anywhere else (a
//! look-alike host, another port, plain http in place of https) is refused
//! before anyone sees it, so a server cannot send the user to a payment or
//! sign-in page that only claims to be its own.
//!
//! Origins are compared in their serialized form: scheme, host (lower case,
//! an international name in its `xn--` spelling) and port, the default port
//! left out.

use url::Url;

use crate::web_page::web_page;

/// The origins whose pages a server may open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageOrigins {
    origins: Vec<String>,
}

/// Why a declared origin cannot be kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadOrigin {
    #[error("{0}")]
    NotAWebPage(String),
    #[error("{given:?} names a page, not only its origin: give {origin:?}")]
    NotOnlyOrigin { given: String, origin: String },
}

impl PageOrigins {
    /// No page at all: a server over stdio with nothing declared.
    pub fn none() -> Self {
        PageOrigins::default()
    }

    /// The origin of the server's `address` (when it is a web address)
    /// and the origins `declared` for it, kept as [`declared_origin`]
    /// writes them (one that is not is left out).
    pub fn of(address: Option<&str>, declared: &[String]) -> Self {
        let own = address
            .and_then(|url| Url::parse(url.trim()).ok())
            .map(|url| url.origin())
            .filter(url::Origin::is_tuple)
            .map(|origin| origin.ascii_serialization());
        let declared = declared
            .iter()
            .filter(|text| declared_origin(text).as_deref() == Ok(text.as_str()));
        let mut origins: Vec<String> = Vec::new();
        for origin in own.into_iter().chain(declared.cloned()) {
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        PageOrigins { origins }
    }

    /// Whether `page` is on one of these origins.
    pub fn allows(&self, page: &Url) -> bool {
        let origin = page.origin();
        origin.is_tuple() && self.origins.contains(&origin.ascii_serialization())
    }

    /// The origins, as a message names them.
    pub fn listed(&self) -> &[String] {
        &self.origins
    }
}

/// The origin a user declared, as settings keep it (`https://pay.example.com`,
/// `http://127.0.0.1:8080`): a web page's origin (https, or http on this
/// computer), nothing after it but a `/`.
pub fn declared_origin(text: &str) -> Result<String, BadOrigin> {
    let text = text.trim();
    let url = web_page(text).map_err(|refusal| BadOrigin::NotAWebPage(refusal.to_string()))?;
    let origin = url.origin().ascii_serialization();
    let only_origin = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
    if !only_origin {
        return Err(BadOrigin::NotOnlyOrigin {
            given: text.to_string(),
            origin,
        });
    }
    Ok(origin)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn shop() -> PageOrigins {
        PageOrigins::of(
            Some("https://shop.example.com/mcp"),
            &["https://pay.example.net".to_string()],
        )
    }

    fn allowed(origins: &PageOrigins, page: &str) -> bool {
        origins.allows(&Url::parse(page).unwrap())
    }

    #[test]
    fn the_server_s_own_origin_and_the_declared_ones_are_allowed() {
        let shop = shop();
        for page in [
            "https://shop.example.com/pay/7f3a",
            "HTTPS://SHOP.EXAMPLE.COM:443/pay/7f3a?order=88236",
            "https://pay.example.net/checkout",
        ] {
            assert!(allowed(&shop, page), "{page}");
        }
        assert_eq!(
            shop.listed(),
            ["https://shop.example.com", "https://pay.example.net"]
        );
    }

    #[test]
    fn an_origin_both_own_and_declared_is_listed_once() {
        let shop = PageOrigins::of(
            Some("https://shop.example.com/mcp"),
            &[
                "https://pay.example.net".to_string(),
                "https://shop.example.com".to_string(),
            ],
        );
        assert_eq!(
            shop.listed(),
            ["https://shop.example.com", "https://pay.example.net"]
        );
    }

    #[test]
    fn look_alike_origins_are_not_the_server_s() {
        let shop = shop();
        for page in [
            "https://shop.example.com.evil.example/pay/7f3a",
            "https://shop-example.com/pay/7f3a",
            "https://evil.example/https://shop.example.com/pay",
            "https://evil.example/?next=https://shop.example.com",
            "https://shop.example.com:8443/pay/7f3a",
            "http://shop.example.com/pay/7f3a",
            // A Cyrillic "о" in place of the Latin one.
            "https://sh\u{43e}p.example.com/pay/7f3a",
            "https://example.com/pay",
            "https://pay.example.net.evil.example/",
            "https://evil.example#shop.example.com",
        ] {
            assert!(!allowed(&shop, page), "{page}");
        }
    }

    #[test]
    fn a_server_over_stdio_may_open_only_what_was_declared_for_it() {
        let stdio = PageOrigins::of(None, &[]);
        assert!(!allowed(&stdio, "https://shop.example.com/pay"));
        let declared = PageOrigins::of(None, &["http://127.0.0.1:8080".to_string()]);
        assert!(allowed(&declared, "http://127.0.0.1:8080/pay/1"));
        assert!(!allowed(&declared, "http://127.0.0.1:8081/pay/1"));
        assert!(!allowed(&declared, "http://localhost:8080/pay/1"));
    }

    #[test]
    fn a_declared_origin_is_a_web_page_s_origin_and_nothing_more() {
        assert_eq!(
            declared_origin(" https://Pay.Example.net/ ").as_deref(),
            Ok("https://pay.example.net")
        );
        assert_eq!(
            declared_origin("https://pay.example.net:443").as_deref(),
            Ok("https://pay.example.net")
        );
        assert!(matches!(
            declared_origin("https://pay.example.net/checkout"),
            Err(BadOrigin::NotOnlyOrigin { origin, .. }) if origin == "https://pay.example.net"
        ));
        for refused in [
            "http://pay.example.net",
            "file:///etc",
            "javascript:alert(1)",
            "pay.example.net",
        ] {
            assert!(
                matches!(declared_origin(refused), Err(BadOrigin::NotAWebPage(_))),
                "{refused}"
            );
        }
        let kept_as_written_only = PageOrigins::of(
            None,
            &[
                "https://Pay.example.net/".to_string(),
                "https://ok.example".to_string(),
            ],
        );
        assert_eq!(kept_as_written_only.listed(), ["https://ok.example"]);
    }
}
