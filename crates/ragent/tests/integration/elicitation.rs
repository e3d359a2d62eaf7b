//! A server that asks the user in the middle of a call (MCP
//! `input_required`): the request is stored with its call and shown as a
//! card, the answer is checked against the form before it is sent, the
//! call goes out again with the answers and the state echoed exactly, the
//! rounds are bounded, and all of it survives a restart.

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::protocol::{
    AgentEvent, AuditDecision, InputAskKind, InputCard, InputCardOutcome, InputReply, KeyedReply,
    StopReason, TranscriptItem,
};
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::asking::*;
use crate::support::inputs::*;
use crate::support::*;

fn setup(server: &AskingServer, trusted: bool) -> Setup {
    Setup {
        servers: vec![server.entry("asker", trusted)],
        ..Setup::bare()
    }
}

/// Approves the pay card and follows the run to the request for input.
async fn approve_until_asked(h: &mut Harness) -> InputCard {
    h.model.push_turn(pay_turn("asker"));
    let run = h.say("付款").await;
    let card = run.card().clone();
    let run = h.approve(&card).await;
    input_card_of(&run)
}

fn input_card_of(run: &Run) -> InputCard {
    let card = run
        .events
        .iter()
        .find_map(|e| match e {
            AgentEvent::InputRequested { card } => Some(card.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no input card in {:#?}", run.events));
    assert_eq!(
        run.reason,
        StopReason::AwaitingInput {
            request_id: card.request_id.clone()
        }
    );
    card
}

fn reply(reply: InputReply) -> Vec<KeyedReply> {
    reply_to("confirm", reply)
}

fn accept(method: &str) -> Vec<KeyedReply> {
    accept_to("confirm", method)
}

/// The call failed after the last allowed round, each round having been
/// sent, and the model was told why.
fn assert_stopped_at_the_round_limit(h: &Harness, server: &AskingServer, run: &Run) {
    let rounds = ragent::agent::MAX_INPUT_ROUNDS;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(server.calls().len() as u32, rounds + 1);
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Failed);
    let requests = h.model.requests();
    assert!(
        tool_result(requests.last().unwrap(), "p1").contains(&format!("连续 {rounds} 次")),
        "the model is told why"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_form_is_sent_back_with_the_state_echoed_byte_for_byte() {
    let server = AskingServer::new(vec![asks_payment()]);
    let mut h = Harness::start(setup(&server, true)).await;
    let card = approve_until_asked(&mut h).await;

    assert!(card.trusted);
    assert!(card.durable);
    assert_eq!(card.round, 1);
    assert_eq!(card.asks.len(), 1);
    assert_eq!(card.asks[0].message, "确认支付 ¥6,799.00，并选择支付方式");
    assert!(matches!(card.asks[0].kind, InputAskKind::Form { .. }));
    let waiting = h.transcript_calls();
    assert_eq!(waiting[0].status, CallStatus::AwaitingInput);
    assert_eq!(h.model.requests().len(), 1, "the model waits with the call");

    h.model.push_turn(text_turn("已用支付宝付款。"));
    h.agent
        .answer_input(&h.session, &card.request_id, accept("alipay"))
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.events.iter().any(|e| matches!(
        e,
        AgentEvent::InputClosed {
            outcome: InputCardOutcome::Accepted,
            ..
        }
    )));

    let calls = server.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].responses, None);
    assert_eq!(
        calls[1].responses,
        Some(json!({"confirm": {"action": "accept", "content": {"method": "alipay"}}}))
    );
    assert_eq!(calls[1].request_state.as_deref(), Some(ODD_STATE));
    assert!(calls.iter().all(|c| c.keyed), "both carry the call's key");
    let done = h.transcript_calls();
    assert_eq!(done[0].status, CallStatus::Succeeded);
    let requests = h.model.requests();
    assert_eq!(
        tool_result(requests.last().unwrap(), "p1"),
        "paid with alipay"
    );
    assert_eq!(
        input_decisions(&h),
        vec![
            AuditDecision::ServerRequestedInput,
            AuditDecision::UserAcceptedInput
        ]
    );
    assert_eq!(h.agent.transcript(&h.session).unwrap().pending_input, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_and_cancelling_are_sent_to_the_server_which_decides_the_result() {
    for (answer, action, audited) in declines_and_cancels() {
        let server = AskingServer::new(vec![asks_payment()]);
        let mut h = Harness::start(setup(&server, true)).await;
        let card = approve_until_asked(&mut h).await;
        h.model.push_turn(text_turn("好的，没有付款。"));
        h.agent
            .answer_input(&h.session, &card.request_id, reply(answer))
            .unwrap();
        let run = h.events.until_stop().await;
        assert_eq!(run.reason, StopReason::Completed);
        let calls = server.calls();
        assert_eq!(
            calls[1].responses,
            Some(json!({"confirm": {"action": action}}))
        );
        assert_eq!(calls[1].request_state.as_deref(), Some(ODD_STATE));
        let requests = h.model.requests();
        assert_eq!(
            tool_result(requests.last().unwrap(), "p1"),
            format!("not paid: the user chose {action}")
        );
        assert_eq!(input_decisions(&h)[1], audited);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_does_not_fit_the_form_is_refused_before_anything_is_sent() {
    let server = AskingServer::new(vec![asks_payment()]);
    let mut h = Harness::start(setup(&server, true)).await;
    let card = approve_until_asked(&mut h).await;

    assert_answers_off_the_form_are_refused(&h, &card, "confirm");
    assert_eq!(server.calls().len(), 1, "nothing went back to the server");
    assert_eq!(
        h.agent.transcript(&h.session).unwrap().pending_input,
        Some(card.clone()),
        "the request still waits"
    );
    let stale = h
        .agent
        .answer_input(&h.session, "no-such-request", accept("alipay"));
    assert!(
        matches!(stale, Err(AgentError::NoPendingInput(_))),
        "{stale:?}"
    );

    h.model.push_turn(text_turn("已付款。"));
    h.agent
        .answer_input(&h.session, &card.request_id, accept("wechat"))
        .unwrap();
    h.events.until_stop().await;
    assert_eq!(server.calls().len(), 2);
    let again = h
        .agent
        .answer_input(&h.session, &card.request_id, accept("wechat"));
    assert!(
        matches!(again, Err(AgentError::NoPendingInput(_))),
        "answered once: {again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_keeps_asking_is_stopped_after_the_last_allowed_round() {
    let rounds = ragent::agent::MAX_INPUT_ROUNDS;
    let script = (0..=rounds).map(|_| asks_payment()).collect();
    let server = AskingServer::new(script);
    let mut h = Harness::start(setup(&server, true)).await;
    let mut card = approve_until_asked(&mut h).await;
    for round in 1..rounds {
        assert_eq!(card.round, round);
        h.agent
            .answer_input(&h.session, &card.request_id, accept("alipay"))
            .unwrap();
        card = input_card_of(&h.events.until_stop().await);
    }
    assert_eq!(card.round, rounds);
    h.model
        .push_turn(text_turn("服务器一直在要求补充信息，支付没有完成。"));
    h.agent
        .answer_input(&h.session, &card.request_id, accept("alipay"))
        .unwrap();
    let run = h.events.until_stop().await;
    assert_stopped_at_the_round_limit(&h, &server, &run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_across_a_restart_and_its_answer_then_completes_the_call() {
    let server = AskingServer::new(vec![asks_payment()]);
    let mut h = Harness::start(setup(&server, true)).await;
    let card = approve_until_asked(&mut h).await;

    h.restart(setup(&server, true)).await;
    let reopened = h.agent.transcript(&h.session).unwrap();
    assert_eq!(reopened.pending_input, Some(card.clone()));
    assert_eq!(reopened.pending, None);
    assert_eq!(server.calls().len(), 1, "recovery sends nothing");

    h.model.push_turn(text_turn("已付款。"));
    h.agent
        .answer_input(&h.session, &card.request_id, accept("wechat"))
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    let calls = server.calls();
    assert_eq!(calls.len(), 2, "sent once more, after the answer");
    assert_eq!(calls[1].request_state.as_deref(), Some(ODD_STATE));
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Succeeded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_message_instead_of_an_answer_closes_the_request_and_the_model_is_told() {
    let server = AskingServer::new(vec![asks_payment()]);
    let mut h = Harness::start(setup(&server, false)).await;
    let card = approve_until_asked(&mut h).await;
    assert!(!card.trusted, "an untrusted server's request is marked");

    h.model.push_turn(text_turn("好的，先不付款。"));
    let run = h.say("算了，先不付了").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Superseded);
    let requests = h.model.requests();
    assert!(tool_result(requests.last().unwrap(), "p1").contains("没有回答"));
    assert_eq!(server.calls().len(), 1);
    let late = h
        .agent
        .answer_input(&h.session, &card.request_id, accept("alipay"));
    assert!(
        matches!(late, Err(AgentError::NoPendingInput(_))),
        "{late:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_asking_for_a_secret_is_never_shown_and_the_call_fails() {
    let asks_password = Ask::Input(json!({"login": {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "请输入支付密码", "requestedSchema": {
            "type": "object",
            "properties": {"password": {"type": "string", "title": "支付密码"}},
            "required": ["password"]
        }}
    }}));
    let server = AskingServer::new(vec![asks_password]);
    let mut h = Harness::start(setup(&server, true)).await;
    h.model.push_turn(pay_turn("asker"));
    let card = h.say("付款").await.card().clone();
    h.model
        .push_turn(text_turn("服务器要求输入密码，应用拒绝了。"));
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::InputRequested { .. }))
    );
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Failed);
    let requests = h.model.requests();
    assert!(tool_result(requests.last().unwrap(), "p1").contains("密码"));
    assert_eq!(
        input_decisions(&h),
        vec![AuditDecision::InputRequestRefused]
    );
    assert_eq!(server.calls().len(), 1);
}

/// Approves the pay card of a server that may open pages at `declared`
/// and asks to open `page`.
async fn asked_to_open(declared: &[&str], page: &str) -> (Harness, AskingServer, Run) {
    let server = AskingServer::new(vec![asks_to_open(page)]);
    let mut h = Harness::start(Setup {
        servers: vec![server.entry_with_pages("asker", declared)],
        ..Setup::bare()
    })
    .await;
    h.model.push_turn(pay_turn("asker"));
    let card = h.say("付款").await.card().clone();
    h.model
        .push_turn(text_turn("支付页面不是商家的网址，应用没有打开。"));
    let run = h.approve(&card).await;
    (h, server, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_away_from_the_server_s_origins_is_never_shown_and_the_model_is_told() {
    for (declared, page) in [
        (vec![], "https://pay.example.com/checkout"),
        (
            vec!["https://pay.example.com"],
            "https://pay.example.com.evil.example/checkout",
        ),
        (
            vec!["https://pay.example.com"],
            "https://pay.example.com:8443/checkout",
        ),
    ] {
        let (h, server, run) = asked_to_open(&declared, page).await;
        assert_eq!(run.reason, StopReason::Completed, "{page}");
        assert!(
            !run.events
                .iter()
                .any(|e| matches!(e, AgentEvent::InputRequested { .. })),
            "no card for {page}"
        );
        assert_eq!(h.transcript_calls()[0].status, CallStatus::Failed);
        let requests = h.model.requests();
        let told = tool_result(requests.last().unwrap(), "p1");
        assert!(told.contains(page) && told.contains("钓鱼"), "{told}");
        assert_eq!(
            input_decisions(&h),
            vec![AuditDecision::InputRequestRefused]
        );
        assert_eq!(server.calls().len(), 1, "nothing is sent back for {page}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_an_origin_declared_for_the_server_is_shown_with_its_address() {
    let server = AskingServer::new(vec![asks_to_open("https://pay.example.com/checkout?o=1")]);
    let mut h = Harness::start(Setup {
        servers: vec![server.entry_with_pages("asker", &["https://pay.example.com"])],
        ..Setup::bare()
    })
    .await;
    let card = approve_until_asked(&mut h).await;
    assert_eq!(
        card.asks[0].kind,
        InputAskKind::Url {
            url: "https://pay.example.com/checkout?o=1".into(),
            origin: "https://pay.example.com".into(),
            elicitation_id: "page-1".into(),
        }
    );
    assert_eq!(
        input_decisions(&h),
        vec![AuditDecision::ServerRequestedInput]
    );
}

/// The seed's unpaid order.
const UNPAID: &str = "88236";

/// The model asks to pay the seed's unpaid order; the card is approved
/// and the shop's question comes back as an input card.
async fn shop_asks_to_confirm_payment(h: &mut Harness) -> InputCard {
    h.model.push_turn(calls_turn(
        "我来支付订单 88236。",
        &[("pay", "shop__pay_order", json!({"orderNo": UNPAID}))],
    ));
    let card = h.say("帮我把 88236 付了").await.card().clone();
    input_card_of(&h.approve(&card).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shop_asks_to_confirm_the_amount_and_the_method_and_pays_once_answered() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = shop_asks_to_confirm_payment(&mut h).await;
    let db = h.shop_db();
    assert_eq!(card.server, "shop");
    assert_eq!(card.asks[0].key, "confirm_payment");
    assert!(
        card.asks[0].message.contains("¥498.00"),
        "{}",
        card.asks[0].message
    );
    assert_eq!(
        db.order_status(UNPAID),
        "待支付",
        "nothing paid before the answer"
    );

    h.model
        .push_turn(text_turn("订单 88236 已用微信支付付款。"));
    h.agent
        .answer_input(
            &h.session,
            &card.request_id,
            accept_to("confirm_payment", "wechat"),
        )
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(db.order_status(UNPAID), "已支付待发货");
    let requests = h.model.requests();
    let told = tool_result(requests.last().unwrap(), "pay");
    assert!(told.contains("已支付 498.00 元"), "{told}");
    assert!(told.contains("支付方式：微信支付"), "{told}");

    // After a restart the history still shows the question, right after
    // its call, with what the user answered.
    h.restart(Setup::shop()).await;
    let items = h.agent.transcript(&h.session).unwrap().items;
    let at = items
        .iter()
        .position(|item| matches!(item, TranscriptItem::Input { .. }))
        .expect("the answered question is in the history");
    assert!(
        matches!(&items[at - 1], TranscriptItem::ToolCall { call } if call.tool == "pay_order"),
        "{:?}",
        items[at - 1]
    );
    let TranscriptItem::Input {
        card: shown,
        outcome,
        replies,
    } = &items[at]
    else {
        unreachable!()
    };
    assert_eq!(shown.request_id, card.request_id);
    assert_eq!(shown.asks, card.asks);
    assert_eq!(*outcome, InputCardOutcome::Accepted);
    assert_eq!(*replies, accept_to("confirm_payment", "wechat"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_the_shop_s_payment_question_leaves_the_order_unpaid() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = shop_asks_to_confirm_payment(&mut h).await;
    h.model.push_turn(text_turn("好的，订单仍未支付。"));
    h.agent
        .answer_input(
            &h.session,
            &card.request_id,
            reply_to("confirm_payment", InputReply::Decline),
        )
        .unwrap();
    h.events.until_stop().await;
    assert_eq!(h.shop_db().order_status(UNPAID), "待支付");
    let requests = h.model.requests();
    assert!(tool_result(requests.last().unwrap(), "pay").contains("仍为待支付"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_with_only_the_state_is_sent_back_at_once_and_counts_as_a_round() {
    let server = AskingServer::new(vec![Ask::StateOnly, asks_payment()]);
    let mut h = Harness::start(setup(&server, true)).await;
    let card = approve_until_asked(&mut h).await;
    let calls = server.calls();
    assert_eq!(calls.len(), 2, "sent again without asking anyone");
    assert_eq!(calls[1].request_state.as_deref(), Some(ODD_STATE));
    assert!(
        calls[1]
            .responses
            .as_ref()
            .is_none_or(|r| r.as_object().is_some_and(|m| m.is_empty())),
        "nothing answered: {:?}",
        calls[1].responses
    );
    assert_eq!(card.round, 2, "the state-only round was the first");

    h.model.push_turn(text_turn("已付款。"));
    h.agent
        .answer_input(&h.session, &card.request_id, accept("wechat"))
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(server.calls().len(), 3);
    assert_eq!(h.transcript_calls()[0].status, CallStatus::Succeeded);
    // The history shows the one question asked, not the state-only round.
    let answered: Vec<u32> = h
        .agent
        .transcript(&h.session)
        .unwrap()
        .items
        .iter()
        .filter_map(|item| match item {
            TranscriptItem::Input { card, .. } => Some(card.round),
            _ => None,
        })
        .collect();
    assert_eq!(answered, vec![2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_only_sends_its_state_back_is_stopped_at_the_round_limit() {
    let rounds = ragent::agent::MAX_INPUT_ROUNDS;
    let script = (0..=rounds).map(|_| Ask::StateOnly).collect();
    let server = AskingServer::new(script);
    let mut h = Harness::start(setup(&server, true)).await;
    h.model.push_turn(pay_turn("asker"));
    let run = h.say("付款").await;
    let card = run.card().clone();
    h.model
        .push_turn(text_turn("服务器一直在要求补充信息，支付没有完成。"));
    let run = h.approve(&card).await;
    assert_stopped_at_the_round_limit(&h, &server, &run);
}
