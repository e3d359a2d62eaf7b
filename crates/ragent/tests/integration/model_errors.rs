//! A model that fails a turn: the error event says what kind of failure
//! it was, with the provider's status, raw answer (no secrets) and request
//! id; and `retry` asks the model again on the stored conversation.

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::protocol::{
    AgentEvent, ErrorCode, ErrorInfo, ModelFailureDetails, ModelFailureKind, StopReason,
};
use serde_json::json;
use test_support::Reply;

use crate::support::notes::Notebook;
use crate::support::*;

/// The one error of a run that failed.
fn the_error(run: &Run) -> ErrorInfo {
    assert_eq!(run.reason, StopReason::Failed, "{:?}", run.events);
    let errors = run.error_infos();
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors[0].clone()
}

/// The client tries three times (two retries) before a 429 or 5xx fails.
fn three(reply: impl Fn() -> Reply) -> Vec<Reply> {
    (0..3).map(|_| reply()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failed_answer_reaches_the_page_classified_with_status_raw_text_and_request_id() {
    let mut h = Harness::start(Setup::bare()).await;
    let rows: Vec<(Vec<Reply>, ModelFailureKind, ModelFailureDetails)> = vec![
        (
            vec![
                Reply::new(401)
                    .header("x-request-id", "req-401")
                    .body(r#"{"error":{"message":"Incorrect API key provided: test-key"}}"#),
            ],
            ModelFailureKind::Unauthorized,
            ModelFailureDetails {
                status: Some(401),
                raw: r#"{"error":{"message":"Incorrect API key provided: [redacted]"}}"#.into(),
                request_id: Some("req-401".into()),
            },
        ),
        (
            vec![Reply::new(403).header("request-id", "req-403").body("forbidden")],
            ModelFailureKind::Unauthorized,
            ModelFailureDetails {
                status: Some(403),
                raw: "forbidden".into(),
                request_id: Some("req-403".into()),
            },
        ),
        (
            three(|| Reply::new(429).header("retry-after", "1").body("slow down")),
            ModelFailureKind::RateLimited {
                retry_after_secs: Some(1),
            },
            ModelFailureDetails {
                status: Some(429),
                raw: "slow down".into(),
                request_id: None,
            },
        ),
        (
            three(|| Reply::new(500).body(r#"{"error":{"message":"boom"},"request_id":"body-7"}"#)),
            ModelFailureKind::ServerError,
            ModelFailureDetails {
                status: Some(500),
                raw: r#"{"error":{"message":"boom"},"request_id":"body-7"}"#.into(),
                request_id: Some("body-7".into()),
            },
        ),
        (
            vec![Reply::new(404).body("no such model: scripted")],
            ModelFailureKind::Rejected,
            ModelFailureDetails {
                status: Some(404),
                raw: "no such model: scripted".into(),
                request_id: None,
            },
        ),
        (
            vec![Reply::new(200).body("<html>gateway</html>")],
            ModelFailureKind::BadResponse,
            ModelFailureDetails {
                status: None,
                raw: "the model sent something that is not a chat-completions stream: the endpoint answered without an event stream: <html>gateway</html>".into(),
                request_id: None,
            },
        ),
    ];
    for (replies, kind, details) in rows {
        for reply in replies {
            h.model.push(reply);
        }
        let error = the_error(&h.say("你好").await);
        assert_eq!(error.code, ErrorCode::Model);
        let failure = error.model_failure.expect("a model failure");
        assert_eq!((failure.kind, failure.details), (kind, details));
        assert!(!h.agent.is_running(&h.session));
    }
    assert_eq!(h.model.unused_turns(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_nobody_listens_for_is_unreachable() {
    let mut h = Harness::start(Setup::bare()).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut settings = h.agent.settings();
    settings.model.base_url = format!("http://127.0.0.1:{port}/v1");
    h.agent.save_settings(settings).await.unwrap();

    let error = the_error(&h.say("你好").await);
    let failure = error.model_failure.expect("a model failure");
    assert_eq!(failure.kind, ModelFailureKind::Unreachable);
    assert_eq!(failure.details.status, None);
    assert!(!failure.details.raw.contains("test-key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retrying_after_a_server_error_stores_the_answer_once_and_the_question_once() {
    let mut h = Harness::start(Setup::bare()).await;
    for reply in three(|| Reply::new(500).body("upstream hiccup")) {
        h.model.push(reply);
    }
    let failed = h.say("有什么耳机推荐？").await;
    assert_eq!(
        the_error(&failed).model_failure.map(|f| f.kind),
        Some(ModelFailureKind::ServerError)
    );

    h.model.push_turn(text_turn("推荐 AirPods Pro。"));
    h.agent.retry(&h.session).unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.text(), "推荐 AirPods Pro。");

    let last = h.model.requests().pop().unwrap();
    assert_eq!(roles(&last), vec!["system", "user"]);
    assert_eq!(
        h.conversation(),
        vec![
            ("user", "有什么耳机推荐？".to_string()),
            ("assistant", "推荐 AirPods Pro。".to_string())
        ]
    );

    // The model has answered: there is nothing left to retry.
    assert!(matches!(
        h.agent.retry(&h.session),
        Err(AgentError::NothingToRetry(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_is_refused_with_nothing_to_answer_while_a_run_goes_and_while_a_card_waits() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    // Untrusted: its write asks.
    setup.servers.push(notebook.entry("notes", false));
    let mut h = Harness::start(setup).await;

    let refusal = h.agent.retry(&h.session).unwrap_err();
    assert_eq!(refusal.code(), ErrorCode::NothingToRetry);

    h.model
        .push(Reply::stream(&text_turn("慢慢来")).delay(std::time::Duration::from_millis(500)));
    h.agent.send_message(&h.session, "你好").unwrap();
    assert_eq!(
        h.agent.retry(&h.session).unwrap_err().code(),
        ErrorCode::RunInProgress
    );
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);

    h.model.push_turn(calls_turn(
        "我来记下。",
        &[("c1", "notes__add_note", json!({"text": "买耳机"}))],
    ));
    assert!(h.say("记一下买耳机").await.asked());
    assert_eq!(
        h.agent.retry(&h.session).unwrap_err().code(),
        ErrorCode::ConfirmationPending
    );
    assert!(notebook.notes().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_is_shown_in_the_transcript_after_a_restart_until_a_run_answers() {
    let mut h = Harness::start(Setup::bare()).await;
    h.model.push(
        Reply::new(401)
            .header("x-request-id", "req-7")
            .body("bad key"),
    );
    let error = the_error(&h.say("有什么耳机推荐？").await);

    h.restart(Setup::bare()).await;
    let kept = h.agent.transcript(&h.session).unwrap().failure;
    assert_eq!(kept, Some(error));
    assert_eq!(
        kept.and_then(|e| e.model_failure).map(|f| f.kind),
        Some(ModelFailureKind::Unauthorized)
    );

    h.model.push_turn(text_turn("推荐 AirPods Pro。"));
    h.agent.retry(&h.session).unwrap();
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);
    assert_eq!(h.agent.transcript(&h.session).unwrap().failure, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_client_sends_again_is_told_before_the_wait() {
    let mut h = Harness::start(Setup::bare()).await;
    h.model.push(Reply::new(503).body("busy"));
    h.model.push_turn(text_turn("推荐 AirPods Pro。"));
    let run = h.say("有什么耳机推荐？").await;
    assert_eq!(run.reason, StopReason::Completed);
    let told: Vec<_> = run
        .events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ModelRetrying {
                attempt,
                retries,
                kind,
                ..
            } => Some((*attempt, *retries, *kind)),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        vec![(
            1,
            test_llm_options().max_retries,
            ModelFailureKind::ServerError
        )]
    );
}
