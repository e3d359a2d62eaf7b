//! Secret values written into a server's args or URL: found by the name
//! they stand under, never by the value itself, so the stored document
//! (values emptied) and the full settings find the same places.
//!
//! The rule, for a flag's or a query parameter's name: split it into
//! words at `-`, `_`, `.` and lower-to-upper case changes, case ignored.
//! It names a secret when its last word ends in `token`, `password`,
//! `passwd` or `secret`, or is `pass`, `pwd`, `key`, `apikey`,
//! `credential(s)`, `sig` or `signature`; but not `public key`, `sort key`
//! (and the like) nor a `--no-…` switch. So `--api-key`, `--apiKey`,
//! `--access-token`, `--client-secret`, `?api_key=`, `?key=`, `?sig=` name
//! secrets, and `--key-file`, `--token-limit`, `--max-tokens`, `?keyword=`
//! do not: they name where a secret is, or a number.
//!
//! Where the value is:
//! - a flag (`-name` or `--name`, the name starting with a letter): after
//!   its `=`, or else the whole next argument, whatever it holds;
//! - an `http(s)` URL (an HTTP server's, or an argument that is one, or a
//!   flag's `=` value): each query parameter's value after its `=`, and the
//!   password of its user info (`https://user:pass@host`).
//!
//! Each is known by its flag or parameter name (a repeat of the same name
//! in one server gets `#2`, `#3`…), so reordering the arguments keeps each
//! value with its name.

use std::collections::BTreeMap;
use std::ops::Range;

use super::config::{ServerTransport, ServerTransportWith};
use crate::redact::{REDACTED, redacted_values};

/// The kind of place a secret value stands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// A flag's value: `--api-key X` or `--api-key=X`.
    Flag,
    /// A URL's query parameter: `?token=X`.
    Query,
    /// A URL's user info password: `https://user:X@host`.
    UrlPassword,
}

/// One secret value in a server's args or URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    pub place: Place,
    /// The flag (without its dashes) or parameter as written, `password`
    /// for user info; a repeat of the same name gets `#2`, `#3`…
    pub name: String,
    /// Which text: the argument's index; 0 for an HTTP server's URL.
    pub text: usize,
    /// Where the value is in that text, in bytes.
    pub range: Range<usize>,
}

const SECRET_ENDINGS: &[&str] = &["token", "password", "passwd", "secret"];
const SECRET_WORDS: &[&str] = &[
    "pass",
    "pwd",
    "key",
    "apikey",
    "credential",
    "credentials",
    "sig",
    "signature",
];
/// Keys that are not secrets: a public key, a database's keys.
const PLAIN_KEYS: &[&str] = &["public", "sort", "primary", "foreign", "partition"];

/// Whether a flag's or query parameter's name says its value is secret.
pub fn names_a_secret(name: &str) -> bool {
    let words = words(name);
    let Some(last) = words.last() else {
        return false;
    };
    let secret = SECRET_ENDINGS.iter().any(|end| last.ends_with(end))
        || SECRET_WORDS.contains(&last.as_str());
    let plain_key = last == "key"
        && words
            .len()
            .checked_sub(2)
            .is_some_and(|i| PLAIN_KEYS.contains(&words[i].as_str()));
    let switch = words.len() > 1 && words[0] == "no";
    secret && !plain_key && !switch
}

/// `name` in lower-case words: split at `-`, `_`, `.` and where a lower
/// case letter or digit is followed by an upper case one.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// The secret values of a list of arguments.
pub fn in_args(args: &[String]) -> Vec<Spot> {
    let mut found = Vec::new();
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        match flag_name(arg) {
            Some((name, Some(eq))) if names_a_secret(name) => {
                found.push(spot(Place::Flag, name, index, eq + 1..arg.len()));
            }
            Some((name, None)) if names_a_secret(name) => {
                if let Some(value) = args.get(index + 1) {
                    found.push(spot(Place::Flag, name, index + 1, 0..value.len()));
                }
                // The next argument is the value, whatever it looks like.
                index += 1;
            }
            Some((_, Some(eq))) => found.extend(in_url_at(&arg[eq + 1..], index, eq + 1)),
            Some((_, None)) => {}
            None => found.extend(in_url_at(arg, index, 0)),
        }
        index += 1;
    }
    numbered(found)
}

/// The secret values of a server's URL.
pub fn in_url(url: &str) -> Vec<Spot> {
    numbered(in_url_at(url, 0, 0))
}

/// What logs, descriptions and error messages show of a URL: each secret
/// value in it written as `***`.
pub fn hidden_in_url(url: &str) -> String {
    let mut shown = url.to_string();
    // From the end: a value written over moves nothing before it.
    for spot in in_url_at(url, 0, 0).into_iter().rev() {
        if !spot.range.is_empty() {
            shown.replace_range(spot.range, "***");
        }
    }
    shown
}

/// `text` (an error message, say) with every secret value of `url` in it
/// written as `***`: a library's message may quote the URL it was given.
pub fn hide_values(text: &str, url: &str) -> String {
    let mut values: Vec<&str> = in_url_at(url, 0, 0)
        .into_iter()
        .filter_map(|spot| url.get(spot.range))
        .filter(|value| !value.is_empty())
        .collect();
    // The longest first: a value inside another is not left half shown.
    values.sort_by_key(|value| std::cmp::Reverse(value.len()));
    values
        .into_iter()
        .fold(text.to_string(), |shown, value| shown.replace(value, "***"))
}

/// The secret values of a server's args (stdio) or URL (HTTP).
pub fn in_transport<S>(transport: &ServerTransportWith<S>) -> Vec<Spot> {
    match transport {
        ServerTransportWith::Stdio { args, .. } => in_args(args),
        ServerTransportWith::Http { url, .. } => in_url(url),
    }
}

/// Each secret value of args or URL, by place and name.
pub fn values<S>(transport: &ServerTransportWith<S>) -> BTreeMap<(Place, String), String> {
    let texts = texts(transport);
    in_transport(transport)
        .into_iter()
        .filter_map(|spot| {
            let value = texts.get(spot.text)?.get(spot.range.clone())?.to_string();
            Some(((spot.place, spot.name), value))
        })
        .collect()
}

/// Calls `f` with each secret value of args or URL, and writes back what
/// it leaves in `value`.
pub fn for_each_value<S>(
    transport: &mut ServerTransportWith<S>,
    mut f: impl FnMut(&Spot, &mut String),
) {
    let mut spots = in_transport(transport);
    // From the end of each text: a rewritten value moves nothing before it.
    spots.sort_by(|a, b| (a.text, b.range.start).cmp(&(b.text, a.range.start)));
    let mut texts = texts_mut(transport);
    for spot in spots {
        let Some(text) = texts.get_mut(spot.text) else {
            continue;
        };
        let Some(current) = text.get(spot.range.clone()) else {
            continue;
        };
        let mut value = current.to_string();
        f(&spot, &mut value);
        text.replace_range(spot.range.clone(), &value);
    }
}

/// The texts spots point into: the args, or the URL alone.
pub fn texts<S>(transport: &ServerTransportWith<S>) -> Vec<&String> {
    match transport {
        ServerTransportWith::Stdio { args, .. } => args.iter().collect(),
        ServerTransportWith::Http { url, .. } => vec![url],
    }
}

fn texts_mut<S>(transport: &mut ServerTransportWith<S>) -> Vec<&mut String> {
    match transport {
        ServerTransportWith::Stdio { args, .. } => args.iter_mut().collect(),
        ServerTransportWith::Http { url, .. } => vec![url],
    }
}

/// A flag's name (without its one or two dashes), and where its `=` is.
fn flag_name(arg: &str) -> Option<(&str, Option<usize>)> {
    let dashes = if arg.starts_with("--") { 2 } else { 1 };
    let rest = arg.strip_prefix('-')?.get(dashes - 1..)?;
    if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    match rest.find('=') {
        Some(at) => Some((&rest[..at], Some(dashes + at))),
        None => Some((rest, None)),
    }
}

/// The secret values of `text` when it is an `http(s)` URL, `offset`
/// bytes into argument `index`.
fn in_url_at(text: &str, index: usize, offset: usize) -> Vec<Spot> {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    let Some(scheme_end) = ["http://", "https://"]
        .iter()
        .find(|scheme| lower.starts_with(*scheme))
        .map(|scheme| scheme.len())
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let after_scheme = &text[scheme_end..];
    let authority_end = after_scheme
        .find(['/', '?', '#'])
        .map_or(text.len(), |end| scheme_end + end);
    let authority = &text[scheme_end..authority_end];
    if let Some(at) = authority.rfind('@')
        && let Some(colon) = authority[..at].find(':')
    {
        let start = offset + scheme_end + colon + 1;
        found.push(spot(
            Place::UrlPassword,
            "password",
            index,
            start..offset + scheme_end + at,
        ));
    }
    let Some(question) = text[authority_end..].find('?').map(|q| authority_end + q) else {
        return found;
    };
    let query_end = text[question..]
        .find('#')
        .map_or(text.len(), |h| question + h);
    let mut start = question + 1;
    for pair in text[question + 1..query_end].split('&') {
        if let Some(eq) = pair.find('=')
            && names_a_secret(&pair[..eq])
        {
            let value = offset + start + eq + 1..offset + start + pair.len();
            found.push(spot(Place::Query, &pair[..eq], index, value));
        }
        start += pair.len() + 1;
    }
    found
}

fn spot(place: Place, name: &str, text: usize, range: Range<usize>) -> Spot {
    Spot {
        place,
        name: name.to_string(),
        text,
        range,
    }
}

/// The spots with a repeated name numbered `#2`, `#3`… in order.
fn numbered(mut spots: Vec<Spot>) -> Vec<Spot> {
    let mut seen: BTreeMap<(Place, String), usize> = BTreeMap::new();
    for spot in &mut spots {
        let count = seen.entry((spot.place, spot.name.clone())).or_insert(0);
        *count += 1;
        if *count > 1 {
            spot.name = format!("{}#{count}", spot.name);
        }
    }
    spots
}

// A transport's `Debug` lives here, beside the rule for what is secret in it.
impl<S> std::fmt::Debug for ServerTransportWith<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = self.shape();
        for_each_value(&mut shown, |_, value| {
            *value = REDACTED.to_string();
        });
        match &shown {
            ServerTransport::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &redacted_values(env))
                .finish(),
            ServerTransport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &redacted_values(headers))
                .finish(),
        }
    }
}

impl<S> ServerTransportWith<S> {
    /// Command, args, URL and the names of env values and headers, each
    /// value empty: what can be shown of it.
    fn shape(&self) -> ServerTransport {
        let names =
            |map: &BTreeMap<String, S>| map.keys().map(|k| (k.clone(), String::new())).collect();
        match self {
            ServerTransportWith::Stdio { command, args, env } => ServerTransport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: names(env),
            },
            ServerTransportWith::Http { url, headers } => ServerTransport::Http {
                url: url.clone(),
                headers: names(headers),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::mcp::config::ServerTransport;

    #[test]
    fn a_url_is_shown_and_quoted_without_its_secrets() {
        let url = "https://ann:pw-1@h.example/mcp?token=t-2&page=2";
        assert_eq!(
            hidden_in_url(url),
            "https://ann:***@h.example/mcp?token=***&page=2"
        );
        assert_eq!(
            hide_values(&format!("error sending request for url ({url})"), url),
            "error sending request for url (https://ann:***@h.example/mcp?token=***&page=2)"
        );
        assert_eq!(
            hidden_in_url("https://h/mcp?page=2"),
            "https://h/mcp?page=2"
        );
        // A value that also stands elsewhere in the URL hides only itself.
        assert_eq!(
            hidden_in_url("https://h:8082/mcp?token=2&page=2"),
            "https://h:8082/mcp?token=***&page=2"
        );
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    /// Each secret found: its place, name and the text it stands for.
    fn found(list: &[&str]) -> Vec<(Place, String, String)> {
        let list = args(list);
        in_args(&list)
            .into_iter()
            .map(|s| (s.place, s.name, list[s.text][s.range].to_string()))
            .collect()
    }

    fn flag(name: &str, value: &str) -> (Place, String, String) {
        (Place::Flag, name.to_string(), value.to_string())
    }

    #[test]
    fn flags_that_name_a_key_token_password_or_secret_hold_secrets() {
        for name in [
            "api-key",
            "apikey",
            "apiKey",
            "API_KEY",
            "key",
            "token",
            "access-token",
            "accessToken",
            "auth-token",
            "password",
            "db-pass",
            "secret",
            "client-secret",
            "client_secret",
            "credentials",
        ] {
            assert!(names_a_secret(name), "{name}");
        }
        for name in [
            "verbose",
            "port",
            "key-file",
            "token-limit",
            "max-tokens",
            "api-key-env",
            "secret-name",
            "public-key",
            "sort-key",
            "no-password",
            "keyword",
            "monkey",
            "p",
            "",
        ] {
            assert!(!names_a_secret(name), "{name}");
        }
    }

    #[test]
    fn the_value_after_a_secret_flag_or_its_equals_sign_is_secret() {
        assert_eq!(
            found(&[
                "-y",
                "notes-mcp",
                "--api-key",
                "sk-1",
                "--token=t-2",
                "-password",
                "p3"
            ]),
            vec![
                flag("api-key", "sk-1"),
                flag("token", "t-2"),
                flag("password", "p3")
            ]
        );
        assert_eq!(found(&["--verbose", "file.txt", "--port", "8080"]), vec![]);
        assert_eq!(found(&["--api-key"]), vec![], "no value to hide");
    }

    #[test]
    fn the_value_is_the_next_argument_whatever_it_looks_like() {
        assert_eq!(
            found(&["--token", "--api-key", "https://x?token=y"]),
            vec![
                flag("token", "--api-key"),
                (Place::Query, "token".into(), "y".into())
            ]
        );
        // Emptied, the places are the same.
        assert_eq!(
            found(&["--token", "", "--verbose"]),
            vec![flag("token", "")]
        );
    }

    #[test]
    fn query_parameters_and_user_info_passwords_in_urls_are_secret() {
        let url = "https://user:pw-1@h.example/sse?api_key=k-1&page=2&token=t-1#part";
        let spots: Vec<_> = in_url(url)
            .into_iter()
            .map(|s| (s.place, s.name, url[s.range].to_string()))
            .collect();
        assert_eq!(
            spots,
            vec![
                (Place::UrlPassword, "password".into(), "pw-1".into()),
                (Place::Query, "api_key".into(), "k-1".into()),
                (Place::Query, "token".into(), "t-1".into()),
            ]
        );
        assert_eq!(in_url("https://user@h/?keyword=shoes&sig"), vec![]);
        assert_eq!(in_url("ftp://h/?token=t"), vec![], "only http(s)");
        assert_eq!(
            found(&["mcp-remote", "https://h/sse?key=k", "--url=http://h/?sig=s"]),
            vec![
                (Place::Query, "key".into(), "k".into()),
                (Place::Query, "sig".into(), "s".into())
            ]
        );
    }

    #[test]
    fn a_repeated_name_is_numbered_so_each_value_keeps_its_own_name() {
        assert_eq!(
            found(&["--token", "a", "--token=b"]),
            vec![flag("token", "a"), flag("token#2", "b")]
        );
    }

    #[test]
    fn rewriting_values_keeps_the_rest_of_each_text() {
        let mut transport = ServerTransport::Http {
            url: "https://u:p@h/mcp?token=t&key=kk".into(),
            headers: BTreeMap::new(),
        };
        for_each_value(&mut transport, |spot, value| {
            *value = format!("<{}>", spot.name)
        });
        let ServerTransport::Http { url, .. } = transport else {
            unreachable!("built as HTTP")
        };
        assert_eq!(url, "https://u:<password>@h/mcp?token=<token>&key=<key>");
    }
}
