//! A server of the 2025-11-25 revision asks the user the older way: it
//! sends `elicitation/create` while the call runs and waits on the
//! connection. The request is shown as the same card as a stored one, but
//! says it ends with the app; the answer is checked before it is sent and
//! the server receives exactly it; declines, cancels, a cancelled run and
//! a request that waited too long all reach the server; a form asking for
//! a secret is declined without asking anyone; a request that comes when
//! no call runs is declined.

use std::time::Duration;

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::protocol::{
    AgentEvent, AuditDecision, InputAskKind, InputCard, InputCardOutcome, InputOutcome, InputReply,
    KeyedReply, StopReason,
};
use ragent::toolcall::CallStatus;
use rmcp::model::ProtocolVersion;
use serde_json::json;

use crate::support::inputs::*;
use crate::support::legacy::*;
use crate::support::*;

fn setup(server: &LegacyServer, trusted: bool) -> Setup {
    Setup {
        servers: vec![server.entry("legacy", trusted)],
        ..Setup::bare()
    }
}

/// Approves the pay card and waits for the server's question, asked on
/// the connection while the call runs.
async fn approve_until_asked(h: &mut Harness) -> InputCard {
    h.model.push_turn(pay_turn("legacy"));
    let card = h.say("付款").await.card().clone();
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    h.events
        .wait_for(|event| match event {
            AgentEvent::InputRequested { card } => Some(card.clone()),
            AgentEvent::RunStopped { reason } => panic!("stopped without asking: {reason:?}"),
            _ => None,
        })
        .await
}

fn reply(reply: InputReply) -> Vec<KeyedReply> {
    reply_to("input", reply)
}

fn accept(method: &str) -> Vec<KeyedReply> {
    accept_to("input", method)
}

fn closed_as(run: &Run) -> Vec<InputCardOutcome> {
    run.events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::InputClosed { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_form_reaches_the_waiting_server_exactly_and_the_call_completes() {
    let server = LegacyServer::new(vec![payment_params()]);
    let mut h = Harness::start(setup(&server, true)).await;
    let card = approve_until_asked(&mut h).await;

    assert_eq!(server.versions(), vec![ProtocolVersion::V_2025_11_25]);
    assert!(!card.durable, "it lives on the connection");
    assert!(card.trusted);
    assert_eq!(card.server, "legacy");
    assert_eq!(card.asks.len(), 1);
    assert_eq!(card.asks[0].message, "确认支付 ¥6,799.00，并选择支付方式");
    assert!(matches!(card.asks[0].kind, InputAskKind::Form { .. }));
    assert!(h.agent.is_running(&h.session), "the run waits in the call");
    let reopened = h.agent.transcript(&h.session).unwrap();
    assert_eq!(reopened.pending_input, Some(card.clone()));
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Running);
    assert_eq!(server.answers(), vec![], "the server still waits");

    h.model.push_turn(text_turn("已用微信支付付款。"));
    let outcome = h
        .agent
        .answer_input(&h.session, &card.request_id, accept("wechat"))
        .unwrap();
    assert!(
        matches!(outcome, InputOutcome::RunContinues { .. }),
        "{outcome:?}"
    );
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(closed_as(&run), vec![InputCardOutcome::Accepted]);
    assert_eq!(
        server.answers(),
        vec![Answer::Result(
            json!({"action": "accept", "content": {"method": "wechat"}})
        )]
    );
    assert_eq!(server.pays(), 1);
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Succeeded);
    let requests = h.model.requests();
    assert_eq!(
        tool_result(requests.last().unwrap(), "p1"),
        "paid with wechat"
    );
    assert_eq!(
        input_decisions(&h),
        vec![
            AuditDecision::ServerRequestedInput,
            AuditDecision::UserAcceptedInput
        ]
    );
    assert_eq!(h.agent.transcript(&h.session).unwrap().pending_input, None);
    let again = h
        .agent
        .answer_input(&h.session, &card.request_id, accept("wechat"));
    assert!(
        matches!(again, Err(AgentError::NoPendingInput(_))),
        "answered once: {again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_does_not_fit_the_form_is_refused_before_anything_is_sent() {
    let server = LegacyServer::new(vec![payment_params()]);
    let mut h = Harness::start(setup(&server, true)).await;
    let card = approve_until_asked(&mut h).await;

    assert_answers_off_the_form_are_refused(&h, &card, "input");
    let other_session = h.agent.create_session(None).unwrap().id;
    let elsewhere = h
        .agent
        .answer_input(&other_session, &card.request_id, accept("alipay"));
    assert!(
        matches!(elsewhere, Err(AgentError::NoPendingInput(_))),
        "only the session that was asked answers: {elsewhere:?}"
    );
    assert_eq!(server.answers(), vec![], "nothing went to the server");
    assert_eq!(
        h.agent.transcript(&h.session).unwrap().pending_input,
        Some(card.clone()),
        "the request still waits"
    );

    h.model.push_turn(text_turn("已付款。"));
    h.agent
        .answer_input(&h.session, &card.request_id, accept("alipay"))
        .unwrap();
    h.events.until_stop().await;
    assert_eq!(
        server.answers(),
        vec![Answer::Result(
            json!({"action": "accept", "content": {"method": "alipay"}})
        )]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_and_cancelling_reach_the_server_which_decides_the_result() {
    for (answer, action, audited) in declines_and_cancels() {
        let server = LegacyServer::new(vec![payment_params()]);
        let mut h = Harness::start(setup(&server, false)).await;
        let card = approve_until_asked(&mut h).await;
        assert!(!card.trusted, "an untrusted server's request is marked");
        h.model.push_turn(text_turn("好的，没有付款。"));
        h.agent
            .answer_input(&h.session, &card.request_id, reply(answer))
            .unwrap();
        let run = h.events.until_stop().await;
        assert_eq!(run.reason, StopReason::Completed);
        assert_eq!(
            server.answers(),
            vec![Answer::Result(json!({ "action": action }))]
        );
        assert_eq!(server.pays(), 0);
        let requests = h.model.requests();
        assert_eq!(
            tool_result(requests.last().unwrap(), "p1"),
            format!("not paid: the user chose {action}")
        );
        assert_eq!(input_decisions(&h)[1], audited);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_run_while_the_card_waits_tells_the_server_cancel() {
    let server = LegacyServer::new(vec![payment_params()]);
    let mut h = Harness::start(setup(&server, true)).await;
    approve_until_asked(&mut h).await;

    assert!(h.agent.cancel_run(&h.session).unwrap());
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Cancelled);
    assert_eq!(closed_as(&run), vec![InputCardOutcome::Cancelled]);
    assert_eq!(
        server.answers(),
        vec![Answer::Result(json!({"action": "cancel"}))]
    );
    assert_eq!(server.pays(), 0);
    assert_eq!(
        h.transcript_calls()[0].status,
        CallStatus::Succeeded,
        "the server answered the call after the cancel"
    );
    assert_eq!(h.model.requests().len(), 1, "the model is not asked again");
    assert_eq!(
        input_decisions(&h),
        vec![
            AuditDecision::ServerRequestedInput,
            AuditDecision::UserCancelledInput
        ]
    );
    assert_eq!(h.agent.transcript(&h.session).unwrap().pending_input, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_waits_longer_than_the_call_s_time_limit_is_cancelled() {
    let server = LegacyServer::new(vec![payment_params()]);
    let mut entry = server.entry("legacy", true);
    entry.call_timeout = Some(Duration::from_secs(1));
    let mut h = Harness::start(Setup {
        servers: vec![entry],
        ..Setup::bare()
    })
    .await;
    let card = approve_until_asked(&mut h).await;
    assert!(card.expires_at - card.created_at == 1000, "{card:?}");

    h.model.push_turn(text_turn("支付请求已超时，没有付款。"));
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(closed_as(&run), vec![InputCardOutcome::Expired]);
    assert_eq!(
        server.answers(),
        vec![Answer::Result(json!({"action": "cancel"}))]
    );
    assert_eq!(
        h.transcript_calls()[0].status,
        CallStatus::Succeeded,
        "the call's own time did not run while the user was asked"
    );
    let requests = h.model.requests();
    assert_eq!(
        tool_result(requests.last().unwrap(), "p1"),
        "not paid: the user chose cancel"
    );
    assert_eq!(
        input_decisions(&h),
        vec![AuditDecision::ServerRequestedInput, AuditDecision::Expired]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_asking_for_a_secret_is_declined_without_asking_and_the_model_is_told() {
    let told = declined_without_asking(password_request()).await;
    assert!(told.contains("密码或令牌"), "{told}");
    assert!(told.contains("应用已代用户拒绝"), "{told}");
    assert!(told.ends_with("not paid: the user chose decline"), "{told}");
}

/// A pay call whose server sends `request` while it runs: the request is
/// declined for the user, nobody is asked, the refusal is audited; what
/// the model was told of the call.
async fn declined_without_asking(request: serde_json::Value) -> String {
    let server = LegacyServer::new(vec![request]);
    let mut h = Harness::start(setup(&server, true)).await;
    h.model.push_turn(pay_turn("legacy"));
    let card = h.say("付款").await.card().clone();
    h.model.push_turn(text_turn("应用已代为拒绝。"));
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::InputRequested { .. })),
        "nobody is asked"
    );
    assert_eq!(
        server.answers(),
        vec![Answer::Result(json!({"action": "decline"}))]
    );
    assert_eq!(
        input_decisions(&h),
        vec![AuditDecision::InputRequestRefused]
    );
    let requests = h.model.requests();
    tool_result(requests.last().unwrap(), "p1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_away_from_the_server_s_origins_is_declined_without_asking_and_the_model_is_told() {
    let told = declined_without_asking(page_params("https://pay.example.com/checkout")).await;
    assert!(
        told.contains("https://pay.example.com/checkout") && told.contains("钓鱼"),
        "{told}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_comes_when_no_call_runs_is_declined() {
    let server = LegacyServer::new(vec![]).asking_while_listing(payment_params());
    let mut h = Harness::start(setup(&server, true)).await;
    h.model.push_turn(text_turn("你好。"));
    let run = h.say("你好").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::InputRequested { .. }))
    );
    assert_eq!(
        server.answered(1).await,
        vec![Answer::Result(json!({"action": "decline"}))]
    );
}
