//! When the model misbehaves or its endpoint fails: bad arguments and
//! unknown tools are refused and explained to the model, a cut stream and
//! a failing endpoint end the run with a clear error and leave the
//! session usable, a 500 is retried, runs stop at their turn limit and
//! can be cancelled.

use std::time::Duration;

use pretty_assertions::assert_eq;
use ragent::protocol::{AgentEvent, ErrorCode, StopReason, TranscriptItem};
use ragent::toolcall::CallStatus;
use serde_json::json;
use wiremock::ResponseTemplate;

use crate::support::notes::Notebook;
use crate::support::*;

async fn with_notes() -> (Harness, Notebook) {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", true));
    (Harness::start(setup).await, notebook)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_and_unknown_tools_are_refused_and_explained() {
    let (mut h, notebook) = with_notes().await;
    let mut chunks = ev_tool_call(0, "c1", "notes__add_note", "{\"text\": \"半截");
    chunks.extend(ev_tool_call(1, "c2", "notes__drop_everything", "{}"));
    chunks.extend(ev_tool_call(2, "c3", "notes__add_note", "{\"text\": 5}"));
    chunks.push(ev_finish("tool_calls"));
    h.model.push_turn(chunks);
    h.model.push_turn(text_turn("抱歉，我重新来。"));

    let run = h.say("记一下").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.started().is_empty());
    let statuses: Vec<CallStatus> = run.finished().iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Rejected; 3]);
    assert!(notebook.notes().is_empty());

    let requests = h.model.requests().await;
    assert!(tool_result(&requests[1], "c1").contains("不是有效的 JSON"));
    assert!(tool_result(&requests[1], "c2").contains("没有名为 notes__drop_everything 的工具"));
    assert!(tool_result(&requests[1], "c3").contains("/text"));
    assert_eq!(run.text(), "抱歉，我重新来。");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_midway_ends_the_run_with_an_error_and_the_session_goes_on() {
    let (mut h, notebook) = with_notes().await;
    let mut cut = vec![ev_text("我来记")];
    cut.extend(ev_tool_call(
        0,
        "c1",
        "notes__add_note",
        "{\"text\": \"x\"}",
    ));
    h.model.push(
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(sse_cut(&cut)),
    );
    let run = h.say("记一下 x").await;
    assert_eq!(run.reason, StopReason::Failed);
    let errors: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Error { error } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, ErrorCode::Model);
    assert!(
        errors[0].message.contains("ended before"),
        "{}",
        errors[0].message
    );
    assert!(
        notebook.notes().is_empty(),
        "a half-streamed call never runs"
    );

    // Nothing of the broken turn was stored; the next message works.
    let items = h.agent.transcript(&h.session).unwrap().items;
    assert!(
        matches!(items.as_slice(), [TranscriptItem::User { .. }]),
        "{items:?}"
    );
    h.model.push_turn(text_turn("好的。"));
    let run = h.say("再试一次").await;
    assert_eq!(run.reason, StopReason::Completed);
    let last = h.model.requests().await.pop().unwrap();
    assert_eq!(roles(&last), vec!["system", "user", "user"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_error_is_retried_and_a_lasting_one_is_reported() {
    let (mut h, _) = with_notes().await;
    h.model
        .push(ResponseTemplate::new(500).set_body_string("upstream hiccup"));
    h.model.push_turn(text_turn("您好！"));
    let run = h.say("你好").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.errors().is_empty());
    assert_eq!(run.text(), "您好！");
    assert_eq!(h.model.requests().await.len(), 2);

    for _ in 0..3 {
        h.model
            .push(ResponseTemplate::new(503).set_body_string("down"));
    }
    let run = h.say("在吗").await;
    assert_eq!(run.reason, StopReason::Failed);
    assert!(run.errors()[0].contains("503"), "{:?}", run.errors());
    assert_eq!(h.model.requests().await.len(), 5, "one try and two retries");
    assert!(!h.agent.is_running(&h.session));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stops_at_its_turn_limit() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", true));
    setup.settings.max_turns_per_run = 2;
    let mut h = Harness::start(setup).await;
    for id in ["c1", "c2"] {
        h.model
            .push_turn(calls_turn("", &[(id, "notes__list_notes", json!({}))]));
    }
    let run = h.say("一直查").await;
    assert_eq!(run.reason, StopReason::MaxTurns { limit: 2 });
    assert_eq!(run.started(), vec!["list_notes", "list_notes"]);
    assert_eq!(h.model.requests().await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_can_be_cancelled_while_the_model_is_slow() {
    let (mut h, _) = with_notes().await;
    h.model
        .push(sse_response(&text_turn("太慢了")).set_delay(Duration::from_secs(30)));
    h.agent.send_message(&h.session, "你好").unwrap();
    h.events
        .wait_for(|e| matches!(e, AgentEvent::RunStarted).then_some(()))
        .await;
    assert!(h.agent.cancel_run(&h.session).unwrap());
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Cancelled);
    assert!(!h.agent.is_running(&h.session));
    assert!(!h.agent.cancel_run(&h.session).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_turns_leave_the_request_when_over_budget_but_stay_stored() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", true));
    setup.settings.history_token_budget = 1_000;
    let mut h = Harness::start(setup).await;
    let long = "我想要一台手机，".repeat(40);
    h.model.push_turn(text_turn("好的。"));
    h.say(&long).await;
    h.model.push_turn(text_turn("还有呢？"));
    h.say("再来一个耳机").await;

    let requests = h.model.requests().await;
    assert_eq!(user_texts(&requests[0]), vec![long.clone()]);
    assert_eq!(
        roles(&requests[1]),
        vec!["system", "user"],
        "the oldest turn went first; the latest user turn stayed"
    );
    assert_eq!(user_texts(&requests[1]), vec!["再来一个耳机"]);
    let stored = h.agent.transcript(&h.session).unwrap().items.len();
    assert_eq!(stored, 4, "what is stored is never lost");
}
