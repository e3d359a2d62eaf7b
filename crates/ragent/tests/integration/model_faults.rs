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
use test_support::Reply;

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

    let requests = h.model.requests();
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
        Reply::new(200)
            .header("content-type", "text/event-stream")
            .body(sse_cut(&cut)),
    );
    let run = h.say("记一下 x").await;
    assert_eq!(run.reason, StopReason::Failed);
    let errors = run.error_infos();
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
    let last = h.model.requests().pop().unwrap();
    assert_eq!(roles(&last), vec!["system", "user", "user"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_error_is_retried_and_a_lasting_one_is_reported() {
    let (mut h, _) = with_notes().await;
    h.model.push(Reply::new(500).body("upstream hiccup"));
    h.model.push_turn(text_turn("您好！"));
    let run = h.say("你好").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.errors().is_empty());
    assert_eq!(run.text(), "您好！");
    assert_eq!(h.model.requests().len(), 2);

    for _ in 0..3 {
        h.model.push(Reply::new(503).body("down"));
    }
    let run = h.say("在吗").await;
    assert_eq!(run.reason, StopReason::Failed);
    assert!(run.errors()[0].contains("503"), "{:?}", run.errors());
    assert_eq!(h.model.requests().len(), 5, "one try and two retries");
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
    assert_eq!(h.model.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_can_be_cancelled_while_the_model_is_slow() {
    let (mut h, _) = with_notes().await;
    h.model
        .push(Reply::stream(&text_turn("太慢了")).delay(Duration::from_secs(30)));
    h.agent.send_message(&h.session, "你好").unwrap();
    h.events
        .wait_for(|e| matches!(e, AgentEvent::RunStarted).then_some(()))
        .await;
    assert!(
        h.agent.transcript(&h.session).unwrap().running,
        "a window reopening the session sees the run"
    );
    assert!(h.agent.cancel_run(&h.session).unwrap());
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Cancelled);
    assert!(!h.agent.is_running(&h.session));
    assert!(!h.agent.transcript(&h.session).unwrap().running);
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

    let requests = h.model.requests();
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

/// The assistant message's calls in a request: (id, name, arguments).
fn sent_calls(request: &serde_json::Value) -> Vec<(String, String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["function"]["name"].as_str().unwrap().to_string(),
                c["function"]["arguments"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_not_an_object_go_back_as_an_empty_object_and_the_result_says_why() {
    let (mut h, notebook) = with_notes().await;
    let mut chunks = ev_tool_call(0, "c1", "notes__add_note", "[\"牛奶\"]");
    chunks.extend(ev_tool_call(
        1,
        "c2",
        "notes__add_note",
        "{\"text\": \"半截",
    ));
    chunks.extend(ev_tool_call(2, "c3", "notes__add_note", "\"买牛奶\""));
    chunks.extend(ev_tool_call(3, "c4", "notes__list_notes", ""));
    chunks.push(ev_finish("tool_calls"));
    h.model.push_turn(chunks);
    h.model.push_turn(text_turn("我重新记。"));
    h.model.push_turn(text_turn("好的。"));

    let run = h.say("记一下牛奶").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(
        notebook.notes().is_empty(),
        "no call with bad arguments ran"
    );
    h.say("好").await;

    let requests = h.model.requests();
    // What the model reads back, the turn after and every turn later.
    for request in &requests[1..] {
        let arguments: Vec<String> = sent_calls(request).into_iter().map(|c| c.2).collect();
        assert_eq!(arguments, vec!["{}"; 4], "{request:#}");
    }
    let c1 = tool_result(&requests[1], "c1");
    assert!(
        c1.contains("不是 JSON 对象") && c1.contains("[\"牛奶\"]"),
        "{c1}"
    );
    let c2 = tool_result(&requests[1], "c2");
    assert!(
        c2.contains("不是有效的 JSON") && c2.contains("{\"text\": \"半截"),
        "{c2}"
    );
    let c3 = tool_result(&requests[1], "c3");
    assert!(
        c3.contains("不是 JSON 对象") && c3.contains("\"买牛奶\""),
        "{c3}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_calls_with_one_id_in_a_turn_both_keep_their_results() {
    let (mut h, notebook) = with_notes().await;
    let mut chunks = ev_tool_call(0, "dup", "notes__add_note", "{\"text\": \"牛奶\"}");
    chunks.extend(ev_tool_call(
        1,
        "dup",
        "notes__add_note",
        "{\"text\": \"面包\"}",
    ));
    chunks.push(ev_finish("tool_calls"));
    h.model.push_turn(chunks);
    h.model.push_turn(text_turn("都记下了。"));

    let run = h.say("记下牛奶和面包").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(notebook.notes(), vec!["牛奶", "面包"]);

    let next = &h.model.requests()[1];
    let ids: Vec<String> = sent_calls(next).into_iter().map(|c| c.0).collect();
    assert_eq!(ids, vec!["dup", "dup_2"]);
    assert_eq!(
        tool_results(next),
        vec![
            ("dup".to_string(), "note 1 saved".to_string()),
            ("dup_2".to_string(), "note 2 saved".to_string())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_name_repeated_whole_in_every_chunk_calls_that_tool() {
    let (mut h, notebook) = with_notes().await;
    let repeated = |arguments: &str| {
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "c1", "type": "function",
             "function": {"name": "notes__add_note", "arguments": arguments}}
        ]}}]})
    };
    h.model.push_turn(vec![
        repeated(""),
        repeated("{\"text\":"),
        repeated(" \"牛奶\"}"),
        ev_finish("tool_calls"),
    ]);
    h.model.push_turn(text_turn("记下了。"));
    let run = h.say("记下牛奶").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(notebook.notes(), vec!["牛奶"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_sent_as_json_with_status_200_is_the_runs_error() {
    let (mut h, _notebook) = with_notes().await;
    h.model.push(
        Reply::new(200)
            .header("content-type", "application/json")
            .body(r#"{"error":{"message":"Model qwen-max-x does not exist","code":"model_not_found"}}"#),
    );
    let run = h.say("你好").await;
    assert_eq!(run.reason, StopReason::Failed);
    let errors = run.errors();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("Model qwen-max-x does not exist"),
        "{}",
        errors[0]
    );
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { error } if error.code == ErrorCode::Model))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_counting_far_more_tokens_than_estimated_gets_fewer_history_messages_next() {
    let mut setup = Setup::bare();
    setup.settings.history_token_budget = 2_000;
    let mut h = Harness::start(setup).await;
    let said = |n: usize| format!("第 {n} 个问题：{}", "我想要一台手机，".repeat(10));
    for n in 1..=3 {
        h.model.push_turn(text_turn("好的。"));
        h.say(&said(n)).await;
    }
    // The fourth answer reports a count far above the estimate.
    let mut counted = text_turn("好的。");
    counted.push(ev_usage(20_000, 3));
    h.model.push_turn(counted);
    h.say(&said(4)).await;
    h.model.push_turn(text_turn("好的。"));
    h.say(&said(5)).await;

    let requests = h.model.requests();
    assert_eq!(
        user_texts(&requests[3]).len(),
        4,
        "by the estimate, the whole conversation fits"
    );
    assert_eq!(
        user_texts(&requests[4]),
        vec![said(5)],
        "after the provider's count, only what fits its count is sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_a_call_that_asks_a_repeated_id_and_bad_arguments_reach_the_model_fixed() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", false));
    let mut h = Harness::start(setup).await;
    let mut chunks = ev_tool_call(0, "c1", "notes__add_note", "{\"text\": \"牛奶\"}");
    chunks.extend(ev_tool_call(1, "c1", "notes__add_note", "{\"text\": 半"));
    chunks.push(ev_finish("tool_calls"));
    h.model.push_turn(chunks);
    h.model.push_turn(text_turn("记下了牛奶。"));

    let run = h.say("记下牛奶").await;
    let card = run.card().clone();
    assert_eq!(card.calls.len(), 2);
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(notebook.notes(), vec!["牛奶"]);

    let next = &h.model.requests()[1];
    assert_eq!(
        sent_calls(next),
        vec![
            (
                "c1".to_string(),
                "notes__add_note".to_string(),
                "{\"text\": \"牛奶\"}".to_string()
            ),
            (
                "c1_2".to_string(),
                "notes__add_note".to_string(),
                "{}".to_string()
            ),
        ]
    );
    assert_eq!(tool_result(next, "c1"), "note 1 saved");
    let c1_2 = tool_result(next, "c1_2");
    assert!(
        c1_2.contains("不是有效的 JSON") && c1_2.contains("{\"text\": 半"),
        "{c1_2}"
    );
}
