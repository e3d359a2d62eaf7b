//! HTTP message signatures (RFC 9421) over a request and its body, the
//! body bound by its digest (RFC 9530 `Content-Digest`, sha-256), as the
//! commerce standard signs what one party posts to another: ES256 with
//! the raw `r || s` signature, one signature labelled `sig1`, the key
//! named by `keyid` among the signer's published keys.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use crate::jws::{Jwk, KeyError, SigningKey, verify_bytes};

/// The label of the one signature made and looked for.
pub const LABEL: &str = "sig1";

/// The RFC 9421 name of the one algorithm signed and verified here.
pub const ALGORITHM: &str = "ecdsa-p256-sha256";

/// A request as signed and verified: what the derived components are read
/// from, its header fields, and its body.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    /// `host` or `host:port` (the port only when not the scheme's default).
    pub authority: &'a str,
    pub path: &'a str,
    /// The query without its `?`, when the target has one.
    pub query: Option<&'a str>,
    /// Every header field sent, by name (any case).
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

/// The `Signature-Input` and `Signature` header values of one signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub input: String,
    pub value: String,
}

/// What a signature that holds says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The signer's key id (`keyid`).
    pub kid: String,
    /// When it was signed (`created`, unix seconds), when it says.
    pub created: Option<i64>,
    /// The components it covers, in order.
    pub covered: Vec<String>,
}

/// Why a request's signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpSignatureError {
    #[error("no {LABEL} signature in Signature-Input and Signature")]
    Missing,
    #[error("the signature headers are malformed: {0}")]
    Malformed(String),
    #[error("the signature does not cover {0}")]
    NotCovered(String),
    #[error("the request has no {0} to sign")]
    NoComponent(String),
    #[error("the component {0} is not supported")]
    ComponentUnsupported(String),
    #[error("the signature's algorithm {0} is not supported (only {ALGORITHM} is)")]
    AlgorithmUnsupported(String),
    #[error("the Content-Digest is not the sha-256 of the body")]
    DigestMismatch,
    #[error("no published key has the id {0}")]
    KeyNotFound(String),
    #[error("the signature does not match the request")]
    Invalid,
    #[error(transparent)]
    Key(#[from] KeyError),
}

/// The `Content-Digest` of `body`: `sha-256=:<base64>:`.
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
}

/// Signs `request` with `key`: the components `covered` (derived ones
/// such as `@method`, and header fields, which the request must carry),
/// created at `created` (unix seconds).
pub fn sign(
    key: &SigningKey,
    request: &Request<'_>,
    covered: &[&str],
    created: i64,
) -> Result<Signature, HttpSignatureError> {
    let names = covered
        .iter()
        .map(|name| format!("\"{}\"", name.to_ascii_lowercase()))
        .collect::<Vec<_>>()
        .join(" ");
    let params = format!(
        "({names});created={created};keyid=\"{}\";alg=\"{ALGORITHM}\"",
        key.kid()
    );
    let covered: Vec<String> = covered.iter().map(|c| c.to_ascii_lowercase()).collect();
    let base = signature_base(request, &covered, &params)?;
    let signature = key.sign_bytes(base.as_bytes())?;
    Ok(Signature {
        input: format!("{LABEL}={params}"),
        value: format!("{LABEL}=:{}:", STANDARD.encode(signature)),
    })
}

/// Checks the `sig1` signature of `request` (its `Signature-Input` and
/// `Signature` values) against the signer's published `keys`: it must
/// cover every component in `required`, and a body only counts when its
/// `Content-Digest` is covered and matches it.
pub fn verify(
    request: &Request<'_>,
    signature_input: &str,
    signature: &str,
    keys: &[Jwk],
    required: &[&str],
) -> Result<Verified, HttpSignatureError> {
    let params = member(signature_input, LABEL).ok_or(HttpSignatureError::Missing)?;
    let value = member(signature, LABEL).ok_or(HttpSignatureError::Missing)?;
    let parsed = parse_params(params)?;
    for name in required {
        if !parsed.covered.iter().any(|c| c.eq_ignore_ascii_case(name)) {
            return Err(HttpSignatureError::NotCovered((*name).to_owned()));
        }
    }
    let digest_covered = parsed.covered.iter().any(|c| c == "content-digest");
    if !request.body.is_empty() && !digest_covered {
        return Err(HttpSignatureError::NotCovered("content-digest".to_owned()));
    }
    if digest_covered {
        let sent = field(request, "content-digest")
            .ok_or_else(|| HttpSignatureError::NoComponent("content-digest".to_owned()))?;
        if !digest_matches(&sent, request.body) {
            return Err(HttpSignatureError::DigestMismatch);
        }
    }
    if let Some(alg) = &parsed.alg
        && alg != ALGORITHM
    {
        return Err(HttpSignatureError::AlgorithmUnsupported(alg.clone()));
    }
    let kid = parsed
        .keyid
        .ok_or_else(|| HttpSignatureError::Malformed("no keyid".to_owned()))?;
    let key = keys
        .iter()
        .find(|key| key.kid == kid)
        .ok_or_else(|| HttpSignatureError::KeyNotFound(kid.clone()))?;
    let bytes = value
        .strip_prefix(':')
        .and_then(|rest| rest.strip_suffix(':'))
        .and_then(|b64| STANDARD.decode(b64).ok())
        .ok_or_else(|| HttpSignatureError::Malformed("Signature is not a byte sequence".into()))?;
    let base = signature_base(request, &parsed.covered, params)?;
    verify_bytes(key, base.as_bytes(), &bytes).map_err(|_| HttpSignatureError::Invalid)?;
    Ok(Verified {
        kid,
        created: parsed.created,
        covered: parsed.covered,
    })
}

/// The signature base (RFC 9421 §2.5): a line per covered component, then
/// the signature's own parameters as they were sent.
fn signature_base(
    request: &Request<'_>,
    covered: &[String],
    params: &str,
) -> Result<String, HttpSignatureError> {
    let mut base = String::new();
    for name in covered {
        let value = match name.as_str() {
            "@method" => request.method.to_ascii_uppercase(),
            "@authority" => request.authority.to_ascii_lowercase(),
            "@path" if request.path.is_empty() => "/".to_owned(),
            "@path" => request.path.to_owned(),
            "@query" => format!("?{}", request.query.unwrap_or_default()),
            derived if derived.starts_with('@') => {
                return Err(HttpSignatureError::ComponentUnsupported(derived.to_owned()));
            }
            field_name => field(request, field_name)
                .ok_or_else(|| HttpSignatureError::NoComponent(field_name.to_owned()))?,
        };
        base.push_str(&format!("\"{name}\": {value}\n"));
    }
    base.push_str(&format!("\"@signature-params\": {params}"));
    Ok(base)
}

/// A header field's value as signed: every line of that name, trimmed,
/// joined by `, `.
fn field(request: &Request<'_>, name: &str) -> Option<String> {
    let values: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// Whether a `Content-Digest` value carries the sha-256 of `body`.
fn digest_matches(header: &str, body: &[u8]) -> bool {
    let expected = Sha256::digest(body);
    header.split(',').any(|member| {
        member
            .trim()
            .strip_prefix("sha-256=:")
            .and_then(|rest| rest.strip_suffix(':'))
            .and_then(|b64| STANDARD.decode(b64).ok())
            .is_some_and(|sent| sent.as_slice() == expected.as_slice())
    })
}

/// The value of dictionary member `label` (RFC 8941), as sent.
fn member<'a>(dictionary: &'a str, label: &str) -> Option<&'a str> {
    split_members(dictionary).into_iter().find_map(|member| {
        let (name, value) = member.split_once('=')?;
        (name.trim() == label).then_some(value.trim())
    })
}

/// A dictionary's members: split at the commas outside quotes and lists.
fn split_members(dictionary: &str) -> Vec<&str> {
    let mut members = Vec::new();
    let (mut depth, mut quoted, mut start) = (0_i32, false, 0);
    let mut chars = dictionary.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' if quoted => {
                chars.next();
            }
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                members.push(&dictionary[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    members.push(&dictionary[start..]);
    members
}

struct Params {
    covered: Vec<String>,
    keyid: Option<String>,
    created: Option<i64>,
    alg: Option<String>,
}

/// `("c1" "c2");created=…;keyid="…"`: the covered components (without
/// parameters of their own) and the signature's parameters.
fn parse_params(params: &str) -> Result<Params, HttpSignatureError> {
    let malformed = |why: &str| HttpSignatureError::Malformed(why.to_owned());
    let inner = params
        .strip_prefix('(')
        .ok_or_else(|| malformed("Signature-Input is not an inner list"))?;
    let (list, rest) = inner
        .split_once(')')
        .ok_or_else(|| malformed("the inner list is not closed"))?;
    let mut covered = Vec::new();
    for item in list.split_ascii_whitespace() {
        let name = item
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .ok_or_else(|| HttpSignatureError::ComponentUnsupported(item.to_owned()))?;
        covered.push(name.to_owned());
    }
    let (mut keyid, mut created, mut alg) = (None, None, None);
    for param in rest.split(';').skip(1) {
        let (name, value) = param.split_once('=').unwrap_or((param, "?1"));
        let text = || value.trim_matches('"').to_owned();
        match name.trim() {
            "keyid" => keyid = Some(text()),
            "alg" => alg = Some(text()),
            "created" => {
                created = Some(
                    value
                        .parse()
                        .map_err(|_| malformed("created is not an integer"))?,
                )
            }
            _ => {}
        }
    }
    Ok(Params {
        covered,
        keyid,
        created,
        alg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = br#"{"id":"ORD1","event":"placed"}"#;

    fn headers(digest: &str) -> Vec<(&'static str, String)> {
        vec![
            ("Content-Type", "application/json".to_owned()),
            (
                "UCP-Agent",
                r#"profile="https://shop.example/.well-known/ucp""#.to_owned(),
            ),
            ("Idempotency-Key", "evt_1".to_owned()),
            ("Content-Digest", digest.to_owned()),
        ]
    }

    fn request<'a>(fields: &'a [(&'a str, &'a str)], body: &'a [u8]) -> Request<'a> {
        Request {
            method: "POST",
            authority: "platform.example:8443",
            path: "/webhooks/orders",
            query: None,
            headers: fields,
            body,
        }
    }

    const COVERED: &[&str] = &[
        "@method",
        "@authority",
        "@path",
        "ucp-agent",
        "idempotency-key",
        "content-digest",
        "content-type",
    ];

    fn signed() -> (SigningKey, Vec<(&'static str, String)>, Signature) {
        let (key, _) = SigningKey::generate().unwrap();
        let fields = headers(&content_digest(BODY));
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let signature = sign(&key, &request(&borrowed, BODY), COVERED, 1_770_000_000).unwrap();
        (key, fields, signature)
    }

    fn check(
        fields: &[(&str, String)],
        body: &[u8],
        signature: &Signature,
        keys: &[Jwk],
    ) -> Result<Verified, HttpSignatureError> {
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        verify(
            &request(&borrowed, body),
            &signature.input,
            &signature.value,
            keys,
            &["@method", "@authority", "@path", "content-digest"],
        )
    }

    #[test]
    fn the_digest_is_the_sha256_of_the_raw_body() {
        // RFC 9530 §B.1's example: {"hello": "world"}.
        assert_eq!(
            content_digest(b"{\"hello\": \"world\"}"),
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"
        );
    }

    #[test]
    fn a_signed_request_verifies_with_the_published_key() {
        let (key, fields, signature) = signed();
        assert!(signature.input.starts_with(
            "sig1=(\"@method\" \"@authority\" \"@path\" \"ucp-agent\" \"idempotency-key\" \
             \"content-digest\" \"content-type\");created=1770000000;keyid=\""
        ));
        let verified = check(&fields, BODY, &signature, &[key.public_jwk()]).unwrap();
        assert_eq!(verified.kid, key.kid());
        assert_eq!(verified.created, Some(1_770_000_000));
        assert_eq!(verified.covered.len(), 7);
    }

    #[test]
    fn another_body_fails_its_digest() {
        let (key, fields, signature) = signed();
        assert_eq!(
            check(
                &fields,
                br#"{"id":"ORD2"}"#,
                &signature,
                &[key.public_jwk()]
            ),
            Err(HttpSignatureError::DigestMismatch)
        );
    }

    #[test]
    fn a_changed_covered_header_or_target_fails_the_signature() {
        let (key, mut fields, signature) = signed();
        fields[1].1 = r#"profile="https://evil.example/.well-known/ucp""#.to_owned();
        assert_eq!(
            check(&fields, BODY, &signature, &[key.public_jwk()]),
            Err(HttpSignatureError::Invalid)
        );
        let (key, fields, signature) = signed();
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let elsewhere = Request {
            path: "/webhooks/other",
            ..request(&borrowed, BODY)
        };
        assert_eq!(
            verify(
                &elsewhere,
                &signature.input,
                &signature.value,
                &[key.public_jwk()],
                &[]
            ),
            Err(HttpSignatureError::Invalid)
        );
    }

    #[test]
    fn another_key_under_the_same_id_fails_and_an_unknown_id_is_named() {
        let (key, fields, signature) = signed();
        let (other, _) = SigningKey::generate().unwrap();
        let impostor = other.with_kid(key.kid());
        assert_eq!(
            check(&fields, BODY, &signature, &[impostor.public_jwk()]),
            Err(HttpSignatureError::Invalid)
        );
        let (stranger, _) = SigningKey::generate().unwrap();
        assert_eq!(
            check(&fields, BODY, &signature, &[stranger.public_jwk()]),
            Err(HttpSignatureError::KeyNotFound(key.kid().to_owned()))
        );
    }

    #[test]
    fn a_signature_that_leaves_out_the_body_or_a_required_part_is_refused() {
        let (key, _) = SigningKey::generate().unwrap();
        let fields = headers(&content_digest(BODY));
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let partial = sign(
            &key,
            &request(&borrowed, BODY),
            &["@method", "@authority", "@path"],
            1,
        )
        .unwrap();
        assert_eq!(
            check(&fields, BODY, &partial, &[key.public_jwk()]),
            Err(HttpSignatureError::NotCovered("content-digest".to_owned()))
        );
        assert_eq!(
            sign(&key, &request(&borrowed, BODY), &["signature-agent"], 1),
            Err(HttpSignatureError::NoComponent(
                "signature-agent".to_owned()
            ))
        );
    }

    #[test]
    fn other_signatures_beside_ours_are_passed_over() {
        let (key, fields, signature) = signed();
        let both = Signature {
            input: format!("other=(\"@method\");keyid=\"x, y\", {}", signature.input),
            value: format!("other=:AAAA:, {}", signature.value),
        };
        assert!(check(&fields, BODY, &both, &[key.public_jwk()]).is_ok());
        let none = Signature {
            input: "other=(\"@method\")".to_owned(),
            value: "other=:AAAA:".to_owned(),
        };
        assert_eq!(
            check(&fields, BODY, &none, &[key.public_jwk()]),
            Err(HttpSignatureError::Missing)
        );
    }
}
