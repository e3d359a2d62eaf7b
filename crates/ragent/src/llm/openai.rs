//! An OpenAI-compatible chat-completions client: streaming over SSE,
//! timeouts for connecting, for the first byte and between chunks, retries
//! with backoff on 429 and 5xx (honouring `Retry-After`), cancellation.
//!
//! Requests ask for the token usage (`stream_options.include_usage`). An
//! endpoint that refuses a request for naming `stream_options` (400 or
//! 422 with that word in the body) is asked again at once without it, and
//! this client does not ask it again: no setting to find, one refused
//! request per client (a client lives until the model settings change).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::StatusCode;
use reqwest::header::{
    AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER,
};
use tokio_util::sync::CancellationToken;

use super::failure::{Scrubber, request_id_in_body};
use super::sse::{SseParser, Step, TurnAssembler, not_a_stream};
use super::{AssistantTurn, ChatModel, ChatRequest, LlmError, Retrying, TurnNews, TurnSink, wire};
use crate::settings::ModelSettings;

/// Timeouts and retry behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    pub connect_timeout: Duration,
    /// From sending the request to the response headers.
    pub first_byte_timeout: Duration,
    /// The longest silence allowed between two chunks of the stream.
    pub idle_timeout: Duration,
    /// Retries after the first attempt, for 429, 5xx and connection errors.
    pub max_retries: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A server's `Retry-After` is honoured up to this long.
    pub max_retry_after: Duration,
    /// Listing the provider's models, from sending to the whole body.
    pub list_models_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(90),
            idle_timeout: Duration::from_secs(60),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            list_models_timeout: Duration::from_secs(15),
        }
    }
}

/// A header the settings ask for that HTTP cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadHeader {
    #[error("the API key has characters a header cannot carry")]
    ApiKey,
    #[error("bad header name {0:?}")]
    Name(String),
    #[error("bad value for header {0}")]
    Value(String),
}

/// The headers every request to the provider carries: the key as a bearer
/// token, and the extra headers.
pub fn request_headers(settings: &ModelSettings) -> Result<HeaderMap, BadHeader> {
    let mut headers = HeaderMap::new();
    if let Some(key) = settings.api_key.as_deref().filter(|k| !k.is_empty()) {
        let mut value =
            HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| BadHeader::ApiKey)?;
        // Kept out of debug output and logs.
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in &settings.extra_headers {
        let name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| BadHeader::Name(name.clone()))?;
        let mut value =
            HeaderValue::from_str(value).map_err(|_| BadHeader::Value(name.to_string()))?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

/// A chat-completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    url: String,
    /// `url` parsed once: parsing it for every request (its host through
    /// IDNA) showed in a round's cost. None when it does not parse; the
    /// request then fails as it always did, with reqwest's own error.
    parsed_url: Option<reqwest::Url>,
    model: String,
    headers: HeaderMap,
    options: ClientOptions,
    /// The conversation's messages as JSON, written once each.
    texts: Arc<wire::MessageTexts>,
    /// Whether requests ask for token usage: until the endpoint refuses.
    ask_usage: Arc<AtomicBool>,
    /// Keeps the key and header values out of the errors it reports.
    scrubber: Scrubber,
}

impl OpenAiClient {
    /// Whether `settings` name a model to ask at all: without one, a
    /// client cannot be made ([`LlmError::NotConfigured`]).
    pub fn is_set_up(settings: &ModelSettings) -> bool {
        !settings.model.trim().is_empty() && !settings.base_url.trim().is_empty()
    }

    pub fn new(settings: &ModelSettings, options: ClientOptions) -> Result<Self, LlmError> {
        if !Self::is_set_up(settings) {
            return Err(LlmError::NotConfigured);
        }
        let headers = request_headers(settings).map_err(|e| LlmError::Connect(e.to_string()))?;
        let scrubber = Scrubber::new(
            settings
                .api_key
                .as_deref()
                .into_iter()
                .chain(settings.extra_headers.values().map(String::as_str)),
        );
        let http = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .build()
            .map_err(|e| LlmError::Connect(e.to_string()))?;
        let url = format!(
            "{}/chat/completions",
            settings.base_url.trim().trim_end_matches('/')
        );
        Ok(OpenAiClient {
            http,
            parsed_url: reqwest::Url::parse(&url).ok(),
            url,
            model: settings.model.trim().to_string(),
            headers,
            options,
            texts: Arc::default(),
            ask_usage: Arc::new(AtomicBool::new(true)),
            scrubber,
        })
    }

    /// Asks the endpoint for its model list: a cheap way to tell whether the
    /// base URL answers and the key is accepted, without spending tokens.
    pub async fn check_reachable(&self) -> Result<(), LlmError> {
        let base = self.url.trim_end_matches("/chat/completions");
        let response = self
            .http
            .get(format!("{base}/models"))
            .headers(self.headers.clone())
            .timeout(self.options.first_byte_timeout)
            .send()
            .await
            .map_err(|e| LlmError::Connect(e.to_string()))?;
        if response.status().is_success() {
            return Ok(());
        }
        Err(self.refusal(response).await)
    }

    /// A response that is not a success, as the error reported: status,
    /// scrubbed body, request id and `Retry-After`.
    async fn refusal(&self, response: reqwest::Response) -> LlmError {
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let header_id = request_id(response.headers());
        let body = response.text().await.unwrap_or_default();
        let request_id = header_id.or_else(|| request_id_in_body(&body));
        LlmError::Http {
            status,
            body: self.scrubber.scrub(&body),
            request_id: request_id.map(|id| self.scrubber.scrub(&id)),
            retry_after,
        }
    }

    /// An error from inside a stream, whose text the provider wrote.
    fn scrubbed(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::Api(message) => LlmError::Api(self.scrubber.scrub(&message)),
            LlmError::Protocol(message) => LlmError::Protocol(self.scrubber.scrub(&message)),
            other => other,
        }
    }

    /// The JSON body of a streaming request, as the next one is sent.
    pub fn request_body(&self, request: &ChatRequest) -> Result<Bytes, LlmError> {
        self.body(request, self.ask_usage.load(Ordering::Relaxed))
    }

    fn body(&self, request: &ChatRequest, ask_usage: bool) -> Result<Bytes, LlmError> {
        self.texts
            .request_body(&self.model, request, ask_usage)
            .map(Bytes::from)
            .map_err(|e| LlmError::Encode(e.to_string()))
    }

    /// Sends a turn's request; asked again without `stream_options` if
    /// the endpoint refuses that.
    async fn send(
        &self,
        request: &ChatRequest,
        news: TurnSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, LlmError> {
        let ask_usage = self.ask_usage.load(Ordering::Relaxed);
        match self
            .send_with_retry(self.body(request, ask_usage)?, news, cancel)
            .await
        {
            Err(LlmError::Http { status, body, .. })
                if ask_usage && refuses_stream_options(status, &body) =>
            {
                tracing::info!(
                    status,
                    "the model endpoint refuses stream_options: not asking it for token usage"
                );
                self.ask_usage.store(false, Ordering::Relaxed);
                self.send_with_retry(self.body(request, false)?, news, cancel)
                    .await
            }
            other => other,
        }
    }

    async fn send_with_retry(
        &self,
        body: Bytes,
        news: TurnSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, LlmError> {
        let mut attempt = 0u32;
        loop {
            let post = match &self.parsed_url {
                Some(url) => self.http.post(url.clone()),
                None => self.http.post(&self.url),
            };
            let send = post
                .headers(self.headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone())
                .send();
            let outcome = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                outcome = tokio::time::timeout(self.options.first_byte_timeout, send) => outcome,
            };
            let (error, retry_after) = match outcome {
                Err(_) => (
                    LlmError::FirstByteTimeout(self.options.first_byte_timeout),
                    None,
                ),
                Ok(Err(e)) => (LlmError::Connect(e.to_string()), None),
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let retryable = is_retryable(response.status());
                    let error = self.refusal(response).await;
                    if !retryable {
                        return Err(error);
                    }
                    let retry_after = match &error {
                        LlmError::Http { retry_after, .. } => *retry_after,
                        _ => None,
                    };
                    (error, retry_after)
                }
            };
            if attempt >= self.options.max_retries {
                return Err(error);
            }
            let delay = match retry_after {
                Some(wait) => wait.min(self.options.max_retry_after),
                None => backoff(&self.options, attempt),
            };
            tracing::warn!(%error, attempt, ?delay, "model request failed; retrying");
            // Said, so the page does not sit silent while it waits.
            if let Some(failure) = error.failure() {
                news(TurnNews::Retrying(Retrying {
                    attempt: attempt + 1,
                    retries: self.options.max_retries,
                    delay,
                    kind: failure.kind,
                }));
            }
            tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    async fn stream_turn(
        &self,
        response: reqwest::Response,
        news: TurnSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, LlmError> {
        let mut stream = response.bytes_stream();
        let mut parser = SseParser::default();
        let mut turn = TurnAssembler::default();
        // Until an event is seen, the body may be something else (a JSON
        // error sent with status 200): kept, up to a limit, to say what.
        let mut seen_event = false;
        let mut unframed = Vec::new();
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                next = tokio::time::timeout(self.options.idle_timeout, stream.next()) => next,
            };
            let ended = matches!(next, Ok(None));
            let payloads = match next {
                Err(_) => return Err(LlmError::IdleTimeout(self.options.idle_timeout)),
                Ok(Some(Err(e))) => return Err(LlmError::StreamInterrupted(e.to_string())),
                Ok(Some(Ok(bytes))) => {
                    if !seen_event && unframed.len() < UNFRAMED_KEPT {
                        unframed.extend_from_slice(&bytes);
                    }
                    parser.push(&bytes)
                }
                Ok(None) => parser.finish(),
            };
            seen_event |= !payloads.is_empty();
            for data in payloads {
                match turn.apply(&data)? {
                    Step::Text(text) if !text.is_empty() => news(TurnNews::Text(&text)),
                    Step::Text(_) => {}
                    Step::Done => return Ok(turn.finish()),
                }
            }
            if ended {
                break;
            }
        }
        // Some servers close without `[DONE]` after a finish reason; a
        // stream with neither was cut off and its turn is not usable.
        if turn.is_complete() {
            Ok(turn.finish())
        } else if !seen_event && !unframed.is_empty() {
            Err(not_a_stream(&unframed))
        } else {
            Err(LlmError::StreamInterrupted(
                "the stream closed before the model finished its turn".into(),
            ))
        }
    }
}

impl ChatModel for OpenAiClient {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        news: TurnSink<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<AssistantTurn, LlmError>> {
        Box::pin(async move {
            let response = self.send(request, news, cancel).await?;
            self.stream_turn(response, news, cancel)
                .await
                .map_err(|error| self.scrubbed(error))
        })
    }
}

/// How much of a body without events is kept to report it.
const UNFRAMED_KEPT: usize = 64 * 1024;

/// Whether a refused request was refused for its `stream_options`.
fn refuses_stream_options(status: u16, body: &str) -> bool {
    matches!(status, 400 | 422) && body.to_ascii_lowercase().contains("stream_options")
}

fn is_retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// `Retry-After` in seconds (the HTTP-date form is rare from these APIs and
/// falls back to the computed backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let seconds: f64 = text.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The provider's id of the request, from the headers the common
/// providers use.
fn request_id(headers: &HeaderMap) -> Option<String> {
    ["x-request-id", "request-id", "x-amzn-requestid"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

fn backoff(options: &ClientOptions, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt);
    options
        .initial_backoff
        .saturating_mul(factor)
        .min(options.max_backoff)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use std::sync::Arc;

    use crate::llm::{ChatMessage, ToolCallRequest, ToolSpec};

    fn client() -> OpenAiClient {
        let settings = ModelSettings {
            base_url: "http://127.0.0.1:9/v1/".into(),
            model: "m".into(),
            api_key: Some("k".into()),
            extra_headers: [("X-Org".to_string(), "bit".to_string())].into(),
        };
        OpenAiClient::new(&settings, ClientOptions::default()).unwrap()
    }

    #[test]
    fn the_request_carries_tools_and_the_exchange_in_openai_shape() {
        let client = client();
        assert_eq!(client.url, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(
            client.parsed_url.as_ref().map(reqwest::Url::as_str),
            Some(client.url.as_str())
        );
        assert_eq!(client.headers["authorization"], "Bearer k");
        assert_eq!(client.headers["x-org"], "bit");
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System {
                    content: "sys".into(),
                },
                ChatMessage::User {
                    content: "hi".into(),
                },
                ChatMessage::Assistant {
                    content: String::new(),
                    tool_calls: vec![ToolCallRequest {
                        id: "c1".into(),
                        name: "shop__query_cart".into(),
                        arguments: "{}".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "c1".into(),
                    content: "[]".into(),
                },
            ]
            .into_iter()
            .map(Arc::new)
            .collect(),
            tools: vec![
                ToolSpec::new("shop__query_cart", "cart", &json!({"type": "object"})).unwrap(),
            ]
            .into(),
        };
        let body = client.request_body(&request).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&body).unwrap(),
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "shop__query_cart", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "[]"}
                ],
                "tools": [{"type": "function", "function": {
                    "name": "shop__query_cart", "description": "cart", "parameters": {"type": "object"}
                }}]
            })
        );
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_and_retry_after_is_read_in_seconds() {
        let options = ClientOptions::default();
        let delays: Vec<u128> = (0..6).map(|a| backoff(&options, a).as_millis()).collect();
        assert_eq!(delays, vec![500, 1000, 2000, 4000, 8000, 8000]);
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn a_missing_model_name_means_not_configured() {
        let settings = ModelSettings::default();
        assert_eq!(
            OpenAiClient::new(&settings, ClientOptions::default()).err(),
            Some(LlmError::NotConfigured)
        );
    }
}
