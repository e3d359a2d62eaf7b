//! Long work is visible: what a server tells of a running call's progress
//! reaches the front end as that call's progress, while it runs.

use pretty_assertions::assert_eq;
use ragent::protocol::{AgentEvent, CallProgress, StopReason};
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::notes::Notebook;
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_calls_progress_is_told_while_it_runs_and_the_call_then_finishes() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", true));
    let mut h = Harness::start(setup).await;
    h.model
        .push_turn(calls_turn("", &[("c1", "notes__count_pages", json!({}))]));
    h.model.push_turn(text_turn("一共 3 页。"));

    h.agent.send_message(&h.session, "数一下有几页").unwrap();
    let started = h
        .events
        .wait_for(|event| match event {
            AgentEvent::ToolCallStarted { call } => Some(call.call_id.clone()),
            _ => None,
        })
        .await;
    // The server waits for the test after its first news, so the news can
    // only have come while the call was running.
    let told = h
        .events
        .wait_for(|event| match event {
            AgentEvent::ToolCallProgress { call_id, progress } => {
                Some(Ok((call_id.clone(), progress.clone())))
            }
            AgentEvent::ToolCallFinished { call } => Some(Err(call.output.clone())),
            _ => None,
        })
        .await;
    assert_eq!(
        told,
        Ok((
            started,
            CallProgress {
                progress: 1.0,
                total: Some(3.0),
                message: Some("翻到第 1 页".into()),
            }
        ))
    );

    notebook.let_counting_finish();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    let finished = run.finished();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].status, CallStatus::Succeeded);
    assert_eq!(finished[0].output.as_deref(), Some("3 pages"));
    let model_saw = h.model.requests().last().unwrap().to_string();
    assert!(model_saw.contains("3 pages"), "{model_saw}");
}
