//! `${env:NAME}` references in a server's args, env values, URL and header
//! values. They are stored as written and filled in from the app's
//! environment each time the server is started, so a token kept in the
//! user's environment is never copied into the settings.

use std::fmt;

/// A `${…}` found in a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `${env:NAME}`: the variable's name.
    Env(&'a str),
    /// Anything else (`${input:key}`, `${workspaceFolder}`): the whole text.
    Other(&'a str),
}

/// Every `${…}` in `text`, in order. An unclosed `${` is plain text.
pub fn references(text: &str) -> Vec<Reference<'_>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let inner = &after[..end];
        found.push(match inner.strip_prefix("env:") {
            Some(name) => Reference::Env(name),
            None => Reference::Other(&rest[start..start + 2 + end + 1]),
        });
        rest = &after[end + 1..];
    }
    found
}

/// The value holds no secret of its own: only `${env:…}` references,
/// perhaps around plain words such as `Bearer `.
pub fn is_reference_only(value: &str) -> bool {
    let refs = references(value);
    !refs.is_empty() && refs.iter().all(|r| matches!(r, Reference::Env(_)))
}

/// A reference to a variable the environment does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unset(pub String);

impl fmt::Display for Unset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the environment variable {} is not set", self.0)
    }
}

/// `text` with each `${env:NAME}` replaced by `lookup(NAME)`; other `${…}`
/// are left as they are.
pub fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, Unset> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${env:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        let value = lookup(name).ok_or_else(|| Unset(name.to_string()))?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The process environment, as servers are started with it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn lookup(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "t-1".to_string())
    }

    #[test]
    fn env_references_are_filled_in_and_other_text_is_kept() {
        assert_eq!(
            expand("Bearer ${env:TOKEN}", lookup),
            Ok("Bearer t-1".into())
        );
        assert_eq!(
            expand("${env:TOKEN}/${env:TOKEN}", lookup),
            Ok("t-1/t-1".into())
        );
        assert_eq!(
            expand("plain $HOME ${x", lookup),
            Ok("plain $HOME ${x".into())
        );
        assert_eq!(
            expand("${workspaceFolder}/a", lookup),
            Ok("${workspaceFolder}/a".into())
        );
    }

    #[test]
    fn an_unset_variable_is_named() {
        let err = expand("--key=${env:API_KEY}", lookup).unwrap_err();
        assert_eq!(err, Unset("API_KEY".into()));
        assert_eq!(
            err.to_string(),
            "the environment variable API_KEY is not set"
        );
    }

    #[test]
    fn references_are_told_apart() {
        assert_eq!(
            references("${env:A} ${input:key} ${workspaceFolder} ${"),
            vec![
                Reference::Env("A"),
                Reference::Other("${input:key}"),
                Reference::Other("${workspaceFolder}"),
            ]
        );
    }
}
