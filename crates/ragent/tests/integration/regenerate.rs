//! Asking for another answer: the last final answer is withdrawn (kept in
//! the database, gone from the conversation the model and the page see)
//! and the model writes it again; calls that answer made are not repeated.

use pretty_assertions::assert_eq;
use ragent::protocol::{AgentEvent, ErrorCode, StopReason};
use serde_json::json;
use test_support::Reply;

use crate::support::notes::Notebook;
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regenerated_answer_replaces_the_last_one_for_the_model_the_page_and_after_a_restart() {
    let mut h = Harness::start(Setup::bare()).await;
    h.model.push_turn(text_turn("推荐 AirPods Pro。"));
    assert_eq!(
        h.say("有什么耳机推荐？").await.reason,
        StopReason::Completed
    );

    h.model.push_turn(text_turn("也可以看看 Sony WH-1000XM6。"));
    h.agent.regenerate(&h.session).unwrap();
    let withdrawn = h
        .events
        .wait_for(|event| match event {
            AgentEvent::AnswerWithdrawn { message_id } => Some(*message_id),
            _ => None,
        })
        .await;
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.text(), "也可以看看 Sony WH-1000XM6。");

    // The model was asked the question alone, not shown its first answer.
    let asked = h.model.requests().pop().unwrap();
    assert_eq!(roles(&asked), vec!["system", "user"]);
    let expected = vec![
        ("user", "有什么耳机推荐？".to_string()),
        ("assistant", "也可以看看 Sony WH-1000XM6。".to_string()),
    ];
    assert_eq!(h.conversation(), expected);

    // The first answer is kept in the database, withdrawn.
    h.restart(Setup::bare()).await;
    assert_eq!(h.conversation(), expected);
    let kept: (String, i64) = rusqlite::Connection::open(h.dir.path().join("agent.db"))
        .unwrap()
        .query_row(
            "SELECT m.content, count(w.message_id) FROM messages m
             JOIN withdrawn_messages w ON w.message_id = m.id WHERE m.id = ?1",
            [withdrawn],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(kept, ("推荐 AirPods Pro。".to_string(), 1));

    // And the new answer can be written again in turn.
    h.model.push_turn(text_turn("预算有限的话选 AirPods 4。"));
    h.agent.regenerate(&h.session).unwrap();
    assert_eq!(
        h.events.until_stop().await.text(),
        "预算有限的话选 AirPods 4。"
    );
    assert_eq!(h.conversation()[1].1, "预算有限的话选 AirPods 4。");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerating_after_a_tool_call_keeps_the_call_and_does_not_run_it_again() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", true));
    let mut h = Harness::start(setup).await;

    h.model.push_turn(calls_turn(
        "我看看。",
        &[("c1", "notes__list_notes", json!({}))],
    ));
    h.model.push_turn(text_turn("笔记本是空的。"));
    assert_eq!(h.say("我记了什么？").await.reason, StopReason::Completed);
    assert_eq!(notebook.calls().len(), 1);

    h.model.push_turn(text_turn("你还没有记任何笔记。"));
    h.agent.regenerate(&h.session).unwrap();
    assert_eq!(h.events.until_stop().await.text(), "你还没有记任何笔记。");

    // Asked again from after the call's result: the call ran once.
    let asked = h.model.requests().pop().unwrap();
    assert_eq!(roles(&asked), vec!["system", "user", "assistant", "tool"]);
    assert_eq!(notebook.calls().len(), 1);
    assert_eq!(h.transcript_calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerating_is_refused_without_a_final_answer_while_a_run_goes_and_while_a_card_waits() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    // Untrusted: its write asks.
    setup.servers.push(notebook.entry("notes", false));
    let mut h = Harness::start(setup).await;

    // A new session: nothing answered yet.
    let refusal = h.agent.regenerate(&h.session).unwrap_err();
    assert_eq!(refusal.code(), ErrorCode::NothingToRegenerate);

    // A failed turn is retried, not regenerated.
    for _ in 0..3 {
        h.model.push(Reply::new(500).body("upstream hiccup"));
    }
    assert_eq!(h.say("你好").await.reason, StopReason::Failed);
    let refusal = h.agent.regenerate(&h.session).unwrap_err();
    assert_eq!(refusal.code(), ErrorCode::NothingToRegenerate);

    h.model
        .push(Reply::stream(&text_turn("慢慢来")).delay(std::time::Duration::from_millis(500)));
    h.agent.retry(&h.session).unwrap();
    assert_eq!(
        h.agent.regenerate(&h.session).unwrap_err().code(),
        ErrorCode::RunInProgress
    );
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);

    h.model.push_turn(calls_turn(
        "我来记下。",
        &[("c1", "notes__add_note", json!({"text": "买耳机"}))],
    ));
    assert!(h.say("记一下买耳机").await.asked());
    assert_eq!(
        h.agent.regenerate(&h.session).unwrap_err().code(),
        ErrorCode::ConfirmationPending
    );
    // Nothing was withdrawn: the answer before the card is still there.
    assert!(
        h.conversation()
            .contains(&("assistant", "慢慢来".to_string()))
    );
    assert!(notebook.notes().is_empty());
}
