//! What a failed model turn was, in the protocol's terms: its kind (which
//! the page words in the user's language), and the provider's own answer,
//! bounded and scrubbed of the settings' secrets, for a bug report.

use std::time::Duration;

use serde_json::Value;

use super::LlmError;
use crate::protocol::{ModelFailure, ModelFailureDetails, ModelFailureKind};

/// How much of a provider's error body is kept.
pub const RAW_KEPT: usize = 2000;

impl LlmError {
    /// The failure as the page is told of it; `None` for a cancelled turn.
    pub fn failure(&self) -> Option<ModelFailure> {
        let kind = match self {
            LlmError::Cancelled => return None,
            LlmError::NotConfigured => ModelFailureKind::NotConfigured,
            LlmError::Http {
                status,
                retry_after,
                ..
            } => match status {
                401 | 403 => ModelFailureKind::Unauthorized,
                429 => ModelFailureKind::RateLimited {
                    retry_after_secs: retry_after.map(whole_seconds),
                },
                500..=599 => ModelFailureKind::ServerError,
                _ => ModelFailureKind::Rejected,
            },
            LlmError::Connect(_) | LlmError::StreamInterrupted(_) => ModelFailureKind::Unreachable,
            LlmError::FirstByteTimeout(_) | LlmError::IdleTimeout(_) => ModelFailureKind::Timeout,
            LlmError::Api(_) => ModelFailureKind::Rejected,
            LlmError::Protocol(_) | LlmError::Encode(_) => ModelFailureKind::BadResponse,
        };
        let details = match self {
            LlmError::Http {
                status,
                body,
                request_id,
                ..
            } => ModelFailureDetails {
                status: Some(*status),
                raw: body.clone(),
                request_id: request_id.clone(),
            },
            other => ModelFailureDetails {
                status: None,
                raw: other.to_string(),
                request_id: None,
            },
        };
        Some(ModelFailure { kind, details })
    }
}

/// A wait rounded up, so "retry after" is never too early.
fn whole_seconds(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

/// The values a provider's answer must never carry into a report: the
/// API key and the model headers' values, as the settings hold them.
#[derive(Clone, Default)]
pub struct Scrubber {
    secrets: Vec<String>,
}

/// Shorter values are left alone: they would blank ordinary words.
const SHORTEST_SECRET: usize = 4;

impl Scrubber {
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Scrubber {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(str::trim)
            .filter(|s| s.chars().count() >= SHORTEST_SECRET)
            .map(str::to_string)
            .collect();
        // Longest first, so a secret containing another is hidden whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Scrubber { secrets }
    }

    /// `text` without the secrets, cut to [`RAW_KEPT`] characters.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), "[redacted]");
        }
        match out.char_indices().nth(RAW_KEPT) {
            Some((cut, _)) => {
                out.truncate(cut);
                out.push('…');
                out
            }
            None => out,
        }
    }
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scrubber({} secrets)", self.secrets.len())
    }
}

/// The request id an error body names: `request_id` at the top or in
/// `error`, or the body's own `id`.
pub fn request_id_in_body(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    text(value.get("request_id"))
        .or_else(|| text(value.pointer("/error/request_id")))
        .or_else(|| text(value.get("id")))
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn http(status: u16, retry_after: Option<Duration>) -> LlmError {
        LlmError::Http {
            status,
            body: "body".into(),
            request_id: Some("req-1".into()),
            retry_after,
        }
    }

    #[test]
    fn failures_are_classified() {
        use ModelFailureKind::*;
        let rows = [
            (LlmError::Connect("refused".into()), Unreachable),
            (LlmError::StreamInterrupted("reset".into()), Unreachable),
            (LlmError::FirstByteTimeout(Duration::from_secs(90)), Timeout),
            (LlmError::IdleTimeout(Duration::from_secs(60)), Timeout),
            (http(401, None), Unauthorized),
            (http(403, None), Unauthorized),
            (
                http(429, None),
                RateLimited {
                    retry_after_secs: None,
                },
            ),
            (
                http(429, Some(Duration::from_millis(1500))),
                RateLimited {
                    retry_after_secs: Some(2),
                },
            ),
            (http(500, None), ServerError),
            (http(503, None), ServerError),
            (http(404, None), Rejected),
            (LlmError::Api("Insufficient balance".into()), Rejected),
            (LlmError::Protocol("not json".into()), BadResponse),
            (LlmError::NotConfigured, NotConfigured),
        ];
        for (error, kind) in rows {
            assert_eq!(error.failure().map(|f| f.kind), Some(kind), "{error:?}");
        }
    }

    #[test]
    fn an_http_failure_keeps_its_status_body_and_request_id() {
        assert_eq!(
            http(502, None).failure().map(|f| f.details),
            Some(ModelFailureDetails {
                status: Some(502),
                raw: "body".into(),
                request_id: Some("req-1".into()),
            })
        );
        let timeout = LlmError::FirstByteTimeout(Duration::from_secs(1)).failure();
        assert_eq!(timeout.map(|f| f.details.status), Some(None));
    }

    #[test]
    fn a_cancelled_turn_is_no_failure() {
        assert_eq!(LlmError::Cancelled.failure(), None);
    }

    #[test]
    fn the_scrubber_hides_secrets_and_bounds_the_text() {
        let scrubber = Scrubber::new(["sk-secret-key", "org", "tenant-42"]);
        assert_eq!(
            scrubber.scrub("Incorrect API key provided: sk-secret-key (tenant-42, org)"),
            "Incorrect API key provided: [redacted] ([redacted], org)"
        );
        let long = "错".repeat(RAW_KEPT + 10);
        let kept = scrubber.scrub(&long);
        assert_eq!(kept.chars().count(), RAW_KEPT + 1);
        assert!(kept.ends_with('…'));
        assert_eq!(format!("{scrubber:?}"), "Scrubber(2 secrets)");
    }

    #[test]
    fn request_ids_are_read_from_error_bodies() {
        let rows = [
            (r#"{"request_id": "r1", "id": "x"}"#, Some("r1")),
            (
                r#"{"error": {"message": "m", "request_id": "r2"}}"#,
                Some("r2"),
            ),
            (
                r#"{"id": "chatcmpl-3", "error": {"message": "m"}}"#,
                Some("chatcmpl-3"),
            ),
            ("upstream hiccup", None),
        ];
        for (body, expected) in rows {
            assert_eq!(request_id_in_body(body).as_deref(), expected, "{body}");
        }
    }
}
