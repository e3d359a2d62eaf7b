//! What the app hands to the system browser: a web page, over `https`, or
//! over `http` to this computer. The addresses come from servers (an
//! authorization server's metadata, a URL-mode request), and the desktop's
//! opener would as readily run `vscode:`, mount `smb:`, show `file:` or
//! evaluate `javascript:`; so every address is judged here, by sign-in and
//! URL-mode requests alike, and one that is not a web page is not opened.

use url::{Host, Url};

/// Why an address is not opened. Nothing was opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAWebPage {
    #[error("{url:?} is not an address: {message}")]
    Unparsable { url: String, message: String },
    #[error(
        "{url:?} is a {scheme}: address, not a web page; only https pages (or http on this computer) are opened"
    )]
    Scheme { url: String, scheme: String },
    #[error(
        "{url:?} is plain http to another computer; only https pages (or http on this computer) are opened"
    )]
    PlainHttp { url: String },
    #[error("{url:?} carries a user name or password; such an address is not opened")]
    Credentials { url: String },
}

/// `url` as a web page the browser may open, or why not.
pub fn web_page(url: &str) -> Result<Url, NotAWebPage> {
    let parsed = Url::parse(url).map_err(|e| NotAWebPage::Unparsable {
        url: url.to_string(),
        message: e.to_string(),
    })?;
    match parsed.scheme() {
        "https" if parsed.host().is_some() => {}
        "http" if is_loopback(&parsed) => {}
        "http" => {
            return Err(NotAWebPage::PlainHttp {
                url: url.to_string(),
            });
        }
        scheme => {
            return Err(NotAWebPage::Scheme {
                url: url.to_string(),
                scheme: scheme.to_string(),
            });
        }
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(NotAWebPage::Credentials {
            url: url.to_string(),
        });
    }
    Ok(parsed)
}

/// Whether `url` names this computer: `localhost`, 127.0.0.0/8 or `::1`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether `url` is plain `http` to another computer (or to an address
/// not known until it is filled in): what goes there crosses the network
/// unencrypted.
pub fn is_plain_http_elsewhere(url: &str) -> bool {
    let url = url.trim();
    let plain = url
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"));
    plain && !Url::parse(url).is_ok_and(|parsed| is_loopback(&parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_pages_and_http_on_this_computer_are_web_pages() {
        for url in [
            "https://as.example/authorize?state=s",
            "https://pay.example.com:8443/checkout",
            "http://127.0.0.1:4000/pay",
            "http://127.8.0.1/pay",
            "http://localhost:9000/auth",
            "http://[::1]:9000/auth",
        ] {
            assert!(web_page(url).is_ok(), "{url}");
        }
    }

    #[test]
    fn plain_http_is_unencrypted_unless_it_stays_on_this_computer() {
        for url in [
            "http://shop.example/mcp",
            "HTTP://10.0.0.7:8848/mcp",
            "http://${env:SHOP_HOST}/mcp",
        ] {
            assert!(is_plain_http_elsewhere(url), "{url}");
        }
        for url in [
            "https://shop.example/mcp",
            "http://127.0.0.1:8848/mcp",
            "http://localhost/mcp",
        ] {
            assert!(!is_plain_http_elsewhere(url), "{url}");
        }
    }

    #[test]
    fn other_schemes_plain_http_elsewhere_and_credentials_are_not_opened() {
        let scheme = |url: &str, scheme: &str| NotAWebPage::Scheme {
            url: url.into(),
            scheme: scheme.into(),
        };
        for (url, why) in [
            (
                "file:///etc/passwd?state=s",
                scheme("file:///etc/passwd?state=s", "file"),
            ),
            (
                "smb://share.example/x",
                scheme("smb://share.example/x", "smb"),
            ),
            (
                "vscode://ext/install?state=s",
                scheme("vscode://ext/install?state=s", "vscode"),
            ),
            (
                "javascript:alert(1)",
                scheme("javascript:alert(1)", "javascript"),
            ),
            ("ftp://127.0.0.1/x", scheme("ftp://127.0.0.1/x", "ftp")),
            (
                "http://as.example/authorize",
                NotAWebPage::PlainHttp {
                    url: "http://as.example/authorize".into(),
                },
            ),
            (
                "http://localhost.evil.example/",
                NotAWebPage::PlainHttp {
                    url: "http://localhost.evil.example/".into(),
                },
            ),
            (
                "https://user:pw@pay.example.com/",
                NotAWebPage::Credentials {
                    url: "https://user:pw@pay.example.com/".into(),
                },
            ),
        ] {
            assert_eq!(web_page(url), Err(why), "{url}");
        }
        assert!(matches!(
            web_page("not a url"),
            Err(NotAWebPage::Unparsable { .. })
        ));
    }
}
