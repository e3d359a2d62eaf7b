//! The OpenAI-compatible client on its own against local servers:
//! headers, Retry-After, no retry on a client error, the first-byte and
//! idle timeouts, cancellation, token usage, and answers that are not
//! quite a stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ragent::llm::openai::{ClientOptions, OpenAiClient};
use ragent::llm::{ChatMessage, ChatModel, ChatRequest, LlmError, Retrying, TokenUsage, TurnNews};
use ragent::protocol::ModelFailureKind;
use ragent::settings::ModelSettings;
use serde_json::{Value, json};
use test_support::Reply;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::support::*;

fn client(base_url: String, options: ClientOptions) -> OpenAiClient {
    let settings = ModelSettings {
        base_url,
        model: "m".into(),
        api_key: Some("sk-test".into()),
        extra_headers: [("X-Tenant".to_string(), "bit".to_string())].into(),
    };
    OpenAiClient::new(&settings, options).unwrap()
}

fn hello() -> ChatRequest {
    ChatRequest {
        messages: vec![Arc::new(ChatMessage::User {
            content: "你好".into(),
        })],
        tools: Vec::new().into(),
    }
}

async fn complete(client: &OpenAiClient, cancel: &CancellationToken) -> Result<String, LlmError> {
    let request = hello();
    let sink = |_: TurnNews<'_>| {};
    client
        .complete(&request, &sink, cancel)
        .await
        .map(|t| t.text)
}

#[tokio::test]
async fn retry_after_is_honoured_told_and_headers_are_sent() {
    let model = ScriptedModel::start().unwrap();
    model.push(Reply::new(429).header("retry-after", "1"));
    model.push_turn(text_turn("好"));
    let client = client(model.base_url(), test_llm_options());
    let started = Instant::now();
    let retries = std::sync::Mutex::new(Vec::new());
    let sink = |news: TurnNews<'_>| {
        if let TurnNews::Retrying(retrying) = news {
            retries.lock().unwrap().push(retrying)
        }
    };
    let answer = client
        .complete(&hello(), &sink, &CancellationToken::new())
        .await
        .map(|t| t.text);
    assert_eq!(answer, Ok("好".into()));
    assert_eq!(
        *retries.lock().unwrap(),
        vec![Retrying {
            attempt: 1,
            retries: test_llm_options().max_retries,
            delay: Duration::from_secs(1),
            kind: ModelFailureKind::RateLimited {
                retry_after_secs: Some(1)
            },
        }]
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}, less than Retry-After",
        started.elapsed()
    );
    assert_eq!(model.requests().len(), 2);
    assert_eq!(
        model.last_header("authorization").as_deref(),
        Some("Bearer sk-test")
    );
    assert_eq!(model.last_header("x-tenant").as_deref(), Some("bit"));
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let model = ScriptedModel::start().unwrap();
    model.push(Reply::new(401).body("bad key"));
    let client = client(model.base_url(), test_llm_options());
    let error = complete(&client, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Http {
            status: 401,
            body: "bad key".into(),
            request_id: None,
            retry_after: None,
        }
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_silent_endpoint_times_out_on_the_first_byte() {
    let model = ScriptedModel::start().unwrap();
    model.push(Reply::stream(&text_turn("迟到")).delay(Duration::from_secs(30)));
    let options = ClientOptions {
        first_byte_timeout: Duration::from_millis(200),
        max_retries: 0,
        ..test_llm_options()
    };
    let error = complete(
        &client(model.base_url(), options),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error,
        LlmError::FirstByteTimeout(Duration::from_millis(200))
    );
}

/// A server that sends the headers and one chunk, then stalls.
async fn stalling_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buffer = vec![0u8; 64 * 1024];
        let _ = socket.read(&mut buffer).await;
        let chunk = format!("data: {}\n\n", ev_text("我"));
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n",
            chunk.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        // Hold the connection open, silent, until the client gives up.
        let _ = socket.read(&mut buffer).await;
    });
    format!("http://{address}/v1")
}

#[tokio::test]
async fn a_stream_that_stalls_times_out_between_chunks() {
    let options = ClientOptions {
        idle_timeout: Duration::from_millis(300),
        ..test_llm_options()
    };
    let client = client(stalling_server().await, options);
    let request = hello();
    let seen = std::sync::Mutex::new(String::new());
    let sink = |news: TurnNews<'_>| {
        if let TurnNews::Text(t) = news {
            seen.lock().unwrap().push_str(t)
        }
    };
    let error = client
        .complete(&request, &sink, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error, LlmError::IdleTimeout(Duration::from_millis(300)));
    assert_eq!(*seen.lock().unwrap(), "我");
}

#[tokio::test]
async fn cancelling_stops_a_waiting_request() {
    let model = ScriptedModel::start().unwrap();
    model.push(Reply::stream(&text_turn("迟到")).delay(Duration::from_secs(30)));
    let client = client(model.base_url(), test_llm_options());
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let (result, ()) = tokio::join!(complete(&client, &cancel), async move { stop.cancel() });
    assert_eq!(result, Err(LlmError::Cancelled));
}

/// The assembled turn of one request.
async fn turn(client: &OpenAiClient) -> Result<ragent::llm::AssistantTurn, LlmError> {
    let request = hello();
    let sink = |_: TurnNews<'_>| {};
    client
        .complete(&request, &sink, &CancellationToken::new())
        .await
}

#[tokio::test]
async fn requests_ask_for_usage_and_an_endpoint_refusing_that_is_asked_again_without_it() {
    let model = ScriptedModel::start().unwrap();
    let mut chunks = text_turn("好");
    chunks.push(ev_usage(321, 7));
    model.push_turn(chunks);
    model.push(
        Reply::new(400).body(
            r#"{"error":{"message":"Unrecognized request argument supplied: stream_options"}}"#,
        ),
    );
    model.push_turn(text_turn("好"));
    model.push_turn(text_turn("好"));
    let client = client(model.base_url(), test_llm_options());

    let first = turn(&client).await.unwrap();
    assert_eq!(
        first.usage,
        Some(TokenUsage {
            prompt_tokens: 321,
            completion_tokens: 7
        })
    );
    let second = turn(&client).await.unwrap();
    assert_eq!((second.text.as_str(), second.usage), ("好", None));
    turn(&client).await.unwrap();

    let asked: Vec<Value> = model
        .requests()
        .iter()
        .map(|r| r["stream_options"].clone())
        .collect();
    assert_eq!(
        asked,
        vec![
            json!({"include_usage": true}),
            json!({"include_usage": true}),
            Value::Null,
            Value::Null
        ],
        "refused once, asked again without it, and not asked again"
    );
}

#[tokio::test]
async fn a_stream_with_bare_cr_line_endings_is_read() {
    let model = ScriptedModel::start().unwrap();
    let body = sse(&text_turn("你好啊")).replace('\n', "\r");
    model.push(
        Reply::new(200)
            .header("content-type", "text/event-stream")
            .body(body),
    );
    let client = client(model.base_url(), test_llm_options());
    assert_eq!(
        complete(&client, &CancellationToken::new()).await,
        Ok("你好啊".into())
    );
}

#[tokio::test]
async fn a_cut_stream_whose_chunks_say_finish_reason_empty_is_not_taken_as_complete() {
    let model = ScriptedModel::start().unwrap();
    let chunks = vec![
        json!({"choices": [{"index": 0, "delta": {"content": "我"}, "finish_reason": ""}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "来"}, "finish_reason": ""}]}),
    ];
    model.push(
        Reply::new(200)
            .header("content-type", "text/event-stream")
            .body(sse_cut(&chunks)),
    );
    let client = client(model.base_url(), test_llm_options());
    let error = complete(&client, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::StreamInterrupted(_)), "{error:?}");
}

#[tokio::test]
async fn a_json_error_answered_with_status_200_reports_the_providers_message() {
    let model = ScriptedModel::start().unwrap();
    model.push(
        Reply::new(200)
            .header("content-type", "application/json")
            .body(
                r#"{"error":{"message":"Insufficient account balance","type":"insufficient_quota"}}"#,
            ),
    );
    let client = client(model.base_url(), test_llm_options());
    assert_eq!(
        complete(&client, &CancellationToken::new()).await,
        Err(LlmError::Api("Insufficient account balance".into()))
    );
}
