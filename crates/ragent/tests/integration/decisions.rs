//! Batches and decisions on the real shop: several calls on one card,
//! partial and edited approvals, replies that must change nothing, a new
//! message instead of a decision, and a card left too long.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::clock::ManualClock;
use ragent::policy::ToolOverride;
use ragent::protocol::{
    AgentEvent, AuditDecision, CallDecision, Decision, InputOutcome, PreviewOutcome, Rejection,
    StopReason, TranscriptItem,
};
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::*;

const CASE: &str = "MK8T4FE/A"; // in the seed cart, two of them

fn decide(call_id: &str, decision: Decision) -> Vec<CallDecision> {
    vec![CallDecision {
        call_id: call_id.to_string(),
        decision,
    }]
}

/// A trusted read and an order in one batch: the order asks, the read waits with it.
fn read_cart_then_order_a_case() -> Vec<serde_json::Value> {
    calls_turn(
        "先看购物车，并用购物车里的 1 个保护壳下单。",
        &[
            ("c1", "shop__query_cart", json!({})),
            (
                "c2",
                "shop__create_order",
                json!({"items": [{"skuCode": CASE, "quantity": 1}]}),
            ),
        ],
    )
}

fn deny(call_id: &str) -> Vec<CallDecision> {
    decide(call_id, Decision::Deny { reason: None })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_in_a_batch_with_a_write_waits_and_both_run_in_order_after_approval() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(read_cart_then_order_a_case());
    let run = h.say("把购物车里的保护壳买一个").await;
    let db = h.shop_db();
    let orders_before = db.order_count();

    assert!(run.started().is_empty(), "nothing runs before the decision");
    let card = run.card().clone();
    let statuses: Vec<CallStatus> = card.calls.iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Allowed, CallStatus::Asking]);
    assert_eq!(h.model.requests().len(), 1);

    h.model.push_turn(text_turn("已下单。"));
    let outcome = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    assert!(matches!(outcome, InputOutcome::RunStarted { .. }));
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.started(), vec!["query_cart", "create_order"]);
    assert_eq!(db.order_count(), orders_before + 1);
    assert_eq!(db.cart_quantity(CASE), 1);

    let requests = h.model.requests();
    let ids: Vec<String> = tool_results(&requests[1])
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, vec!["c1", "c2"], "results in the model's order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writes_on_one_card_one_approved_with_edits_the_other_denied() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "加 2 台 iPhone 17 到购物车，并用购物车里的保护壳下单。",
        &[
            (
                "c1",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 2}),
            ),
            (
                "c2",
                "shop__create_order",
                json!({"items": [{"skuCode": CASE, "quantity": 1}]}),
            ),
        ],
    ));
    let run = h.say("iPhone 17 加购物车，保护壳下单").await;
    let card = run.card().clone();
    let (cart_call, order_call) = (&card.calls[0], &card.calls[1]);
    assert!(
        cart_call.destructive,
        "the shop declares update_cart_item destructive"
    );
    let db = h.shop_db();
    let orders_before = db.order_count();

    // Edited arguments that break the schema are refused and change nothing.
    let bad = h
        .agent
        .respond(
            &h.session,
            &card.reply_id,
            decide(
                &cart_call.call_id,
                Decision::ApproveEdited {
                    arguments: json!({"skuCode": IPHONE, "action": "buy", "quantity": 1}),
                },
            ),
        )
        .await;
    assert!(
        matches!(bad, Err(AgentError::InvalidArguments { .. })),
        "{bad:?}"
    );

    // An edited call with a preview is not approved in the same step: the
    // card comes back proposing the edit, with what the edit would do.
    let edited = h
        .agent
        .respond(
            &h.session,
            &card.reply_id,
            decide(
                &cart_call.call_id,
                Decision::ApproveEdited {
                    arguments: json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
                },
            ),
        )
        .await;
    // The user's own edit is not reported as a price or stock change.
    assert!(
        matches!(edited, Err(AgentError::EditPreviewed { .. })),
        "{edited:?}"
    );
    let shown = h.agent.transcript(&h.session).unwrap().pending.unwrap();
    assert_eq!(shown.reply_id, card.reply_id);
    assert_eq!(
        shown.calls[0].arguments,
        json!({"skuCode": IPHONE, "action": "add", "quantity": 1})
    );
    let preview = shown.calls[0].preview.as_ref().unwrap();
    let PreviewOutcome::Computed { content } = &preview.outcome else {
        panic!("{preview:?}");
    };
    assert_eq!(content["lines"][0]["quantity"], 1);
    assert_eq!(db.cart_quantity(IPHONE), 0, "nothing ran");

    let first = h
        .agent
        .respond(
            &h.session,
            &card.reply_id,
            decide(&cart_call.call_id, Decision::Approve),
        )
        .await
        .unwrap();
    assert_eq!(
        first,
        InputOutcome::AwaitingDecisions {
            remaining: vec![order_call.call_id.clone()]
        }
    );
    // The page is told at once what the approved call will send.
    let approved = h
        .events
        .wait_for(|e| match e {
            AgentEvent::ToolCallApprovedEdited { call } => Some(call.clone()),
            _ => None,
        })
        .await;
    assert_eq!(approved.call_id, cart_call.call_id);
    assert_eq!(approved.status, CallStatus::Approved);
    assert_eq!(
        approved.arguments,
        json!({"skuCode": IPHONE, "action": "add", "quantity": 1})
    );
    assert_eq!(
        db.cart_quantity(IPHONE),
        0,
        "the batch waits for every decision"
    );

    h.model.push_turn(text_turn("已加入 1 台，未下单。"));
    h.agent
        .respond(&h.session, &card.reply_id, deny(&order_call.call_id))
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.started(), vec!["update_cart_item"]);
    assert_eq!(db.cart_quantity(IPHONE), 1, "the edited quantity was sent");
    assert_eq!(db.order_count(), orders_before);

    let requests = h.model.requests();
    assert!(tool_result(&requests[1], "c1").contains("iPhone 17"));
    // The model's call still says quantity 2: its result says what the
    // user changed.
    assert!(
        tool_result(&requests[1], "c1")
            .starts_with("注意：用户在确认卡片上修改了参数（quantity：2 → 1）"),
        "{}",
        tool_result(&requests[1], "c1")
    );
    assert!(tool_result(&requests[1], "c2").contains("拒绝"));
    let decisions: Vec<AuditDecision> = h
        .agent
        .audit_log(10)
        .unwrap()
        .into_iter()
        .map(|a| a.decision)
        .collect();
    assert_eq!(
        decisions,
        vec![
            AuditDecision::UserDenied,
            AuditDecision::UserApprovedEdited,
            AuditDecision::PreviewChanged
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_replies_are_refused_and_change_nothing() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "",
        &[
            (
                "c1",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            (
                "c2",
                "shop__update_cart_item",
                json!({"skuCode": CASE, "action": "remove", "quantity": 1}),
            ),
        ],
    ));
    let run = h.say("加 iPhone，去掉保护壳").await;
    let card = run.card().clone();
    let (a, b) = (card.calls[0].call_id.clone(), card.calls[1].call_id.clone());
    let approve = |id: &str| decide(id, Decision::Approve);
    assert!(matches!(
        h.agent
            .respond(&h.session, &card.reply_id, approve(&a))
            .await,
        Ok(InputOutcome::AwaitingDecisions { .. })
    ));
    let audit_before = h.agent.audit_log(100).unwrap().len();

    let again = h
        .agent
        .respond(&h.session, &card.reply_id, approve(&a))
        .await;
    assert!(
        matches!(&again, Err(AgentError::AlreadyDecided { call_id, status: CallStatus::Approved }) if *call_id == a),
        "{again:?}"
    );
    let stale = h
        .agent
        .respond(&h.session, "not-a-reply", approve(&b))
        .await;
    assert!(
        matches!(stale, Err(AgentError::StaleReply { .. })),
        "{stale:?}"
    );
    let unknown = h
        .agent
        .respond(&h.session, &card.reply_id, approve("no-such-call"))
        .await;
    assert!(
        matches!(unknown, Err(AgentError::UnknownCall(_))),
        "{unknown:?}"
    );
    let twice = h
        .agent
        .respond(
            &h.session,
            &card.reply_id,
            vec![approve(&b).remove(0), approve(&b).remove(0)],
        )
        .await;
    assert!(
        matches!(twice, Err(AgentError::DuplicateDecision(_))),
        "{twice:?}"
    );
    // One valid decision next to a wrong one: the whole reply is refused.
    let mixed = h
        .agent
        .respond(
            &h.session,
            &card.reply_id,
            vec![approve(&b).remove(0), approve(&a).remove(0)],
        )
        .await;
    assert!(
        matches!(mixed, Err(AgentError::AlreadyDecided { .. })),
        "{mixed:?}"
    );
    assert_eq!(
        serde_json::to_value(mixed.unwrap_err()).unwrap()["code"],
        "already_decided"
    );

    let pending = h.agent.transcript(&h.session).unwrap().pending.unwrap();
    let statuses: Vec<CallStatus> = pending.calls.iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Approved, CallStatus::Asking]);
    assert_eq!(h.agent.audit_log(100).unwrap().len(), audit_before);
    let db = h.shop_db();
    assert_eq!((db.cart_quantity(IPHONE), db.cart_quantity(CASE)), (0, 2));
    assert_eq!(h.model.requests().len(), 1, "nothing reached the model");

    // Deciding the last call runs the batch once; approving again does not.
    h.model.push_turn(text_turn("好了。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve(&b))
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.started(), vec!["update_cart_item", "update_cart_item"]);
    let late = h
        .agent
        .respond(&h.session, &card.reply_id, approve(&b))
        .await;
    assert!(
        matches!(late, Err(AgentError::AlreadyDecided { .. })),
        "{late:?}"
    );
    assert!(!h.agent.is_running(&h.session));
    assert_eq!((db.cart_quantity(IPHONE), db.cart_quantity(CASE)), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_message_supersedes_the_card_and_is_answered() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = h.card_for_iphones("买 iPhone 17", 1).await;

    h.model
        .push_turn(text_turn("好的，先不加购物车。您有 5 张可用优惠券。"));
    let run = h.say("算了，先看看我有哪些优惠券").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.text(), "好的，先不加购物车。您有 5 张可用优惠券。");
    assert!(run.events.iter().any(|e| matches!(
        e,
        AgentEvent::CallStatusChanged {
            status: CallStatus::Superseded,
            ..
        }
    )));
    assert_eq!(
        h.shop_db().cart_quantity(IPHONE),
        0,
        "the pending call never ran"
    );

    let requests = h.model.requests();
    let told = tool_result(&requests[1], "c1");
    assert!(
        told.contains("新消息") && told.contains("没有执行"),
        "{told}"
    );
    assert_eq!(
        roles(&requests[1])[1..],
        ["user", "assistant", "tool", "user"],
        "the model reads why the call did not run, then the new message"
    );
    assert_eq!(user_texts(&requests[1])[1], "算了，先看看我有哪些优惠券");

    let late = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await;
    assert!(
        matches!(late, Err(AgentError::StaleReply { .. })),
        "{late:?}"
    );
    let transcript = h.agent.transcript(&h.session).unwrap();
    assert_eq!(transcript.pending, None);
    let call = transcript
        .items
        .iter()
        .find_map(|i| match i {
            TranscriptItem::ToolCall { call } => Some(call),
            _ => None,
        })
        .unwrap();
    assert_eq!(call.status, CallStatus::Superseded);
}

/// A card for one iPhone that waits a minute, on a clock the test moves.
async fn a_card_for_a_minute() -> (
    Arc<ManualClock>,
    Harness,
    ragent::protocol::ConfirmationCard,
) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let mut setup = Setup::shop();
    setup.clock = Some(clock.clone());
    setup.settings.card_expiry_secs = 60;
    let mut h = Harness::start(setup).await;
    let card = h.card_for_iphones("买 iPhone 17", 1).await;
    assert_eq!(card.expires_at - card.created_at, 60_000);
    (clock, h, card)
}

/// Approves the card too late: refused as expired, nothing added to the cart.
async fn approve_too_late(h: &Harness, card: &ragent::protocol::ConfirmationCard) {
    let late = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(card))
        .await;
    assert!(
        matches!(late, Err(AgentError::ConfirmationExpired { .. })),
        "{late:?}"
    );
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 0, "nothing was added");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_left_past_its_expiry_is_refused_and_the_model_is_told() {
    let (clock, mut h, card) = a_card_for_a_minute().await;
    clock.advance_ms(60_001);
    approve_too_late(&h, &card).await;
    assert_eq!(h.agent.transcript(&h.session).unwrap().pending, None);

    h.model
        .push_turn(text_turn("刚才的确认已过期，需要重新加入吗？"));
    h.say("怎么样了？").await;
    let requests = h.model.requests();
    assert!(tool_result(&requests[1], "c1").contains("过期"));
    assert_eq!(
        h.agent.audit_log(1).unwrap()[0].decision,
        AuditDecision::Expired
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_past_its_expiry_stays_expired_when_the_system_clock_is_set_back() {
    let (clock, h, card) = a_card_for_a_minute().await;
    // The card's minute passes, then the system clock is set back an hour
    // before anyone looks: by the wall clock the card would ask again.
    clock.advance_ms(60_001);
    clock.set_wall_by_ms(-3_600_000);
    approve_too_late(&h, &card).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_set_back_while_the_app_was_closed_gives_a_waiting_card_no_more_time() {
    let (clock, mut h, card) = a_card_for_a_minute().await;
    // The app is closed, the system clock set back a day, the app opened.
    clock.set_wall_by_ms(-86_400_000);
    let mut setup = Setup::shop();
    setup.clock = Some(clock.clone());
    h.restart(setup).await;
    // By the wall clock the card has a day left; it has its minute, counted
    // from the last moment the app recorded.
    clock.advance_ms(60_001);
    approve_too_late(&h, &card).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_twice_in_a_row_runs_the_call_once() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = h.card_for_iphones("买 iPhone 17", 1).await;
    h.model.push_turn(text_turn("已加入。"));

    let first = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await;
    let second = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await;
    assert!(
        matches!(first, Ok(InputOutcome::RunStarted { .. })),
        "{first:?}"
    );
    assert!(
        matches!(second, Err(AgentError::AlreadyDecided { .. })),
        "{second:?}"
    );

    let run = h.events.until_stop().await;
    assert_eq!(run.started(), vec!["update_cart_item"]);
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 1);
}

/// A card with a trusted read the policy allowed (`c1`, query_cart) and a
/// write that asks (`c2`, adding an iPhone to the cart).
async fn card_with_an_allowed_read(h: &mut Harness) -> ragent::protocol::ConfirmationCard {
    h.model.push_turn(calls_turn(
        "先看购物车，再加 1 台 iPhone 17。",
        &[
            ("c1", "shop__query_cart", json!({})),
            (
                "c2",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
        ],
    ));
    let card = h.say("看购物车并加一台 iPhone").await.card().clone();
    let statuses: Vec<CallStatus> = card.calls.iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Allowed, CallStatus::Asking]);
    card
}

async fn set_override(h: &Harness, tool: &str, setting: ToolOverride) {
    let mut settings = h.agent.settings();
    settings.tool_overrides.insert(tool.into(), setting);
    h.agent.save_settings(settings).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_call_in_a_waiting_batch_does_not_run_once_its_tool_is_denied() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = card_with_an_allowed_read(&mut h).await;
    set_override(&h, "shop__query_cart", ToolOverride::Deny).await;

    h.model
        .push_turn(text_turn("已加入购物车，没能查看购物车。"));
    h.agent
        .respond(
            &h.session,
            &card.reply_id,
            decide(&card.calls[1].call_id, Decision::Approve),
        )
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(
        run.started(),
        vec!["update_cart_item"],
        "the read never ran"
    );
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 1);
    let statuses: Vec<(String, CallStatus)> = run
        .finished()
        .iter()
        .map(|c| (c.tool.clone(), c.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("query_cart".into(), CallStatus::Rejected),
            ("update_cart_item".into(), CallStatus::Succeeded),
        ]
    );
    let requests = h.model.requests();
    assert!(tool_result(&requests[1], "c1").contains("禁止使用此工具"));
    let audit = h.agent.audit_log(1).unwrap();
    assert_eq!(audit[0].decision, AuditDecision::PolicyDenied);
    assert_eq!(audit[0].tool, "query_cart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_call_in_a_waiting_batch_asks_again_once_its_tool_is_set_to_ask() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = card_with_an_allowed_read(&mut h).await;
    set_override(&h, "shop__query_cart", ToolOverride::Ask).await;

    let outcome = h
        .agent
        .respond(
            &h.session,
            &card.reply_id,
            decide(&card.calls[1].call_id, Decision::Approve),
        )
        .await
        .unwrap();
    assert!(matches!(outcome, InputOutcome::RunStarted { .. }));
    let run = h.events.until_stop().await;
    assert_eq!(
        run.reason,
        StopReason::AwaitingConfirmation {
            reply_id: card.reply_id.clone()
        },
        "the batch waits again"
    );
    assert!(run.started().is_empty(), "nothing ran: {:?}", run.events);
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 0);
    let again = run.card().clone();
    let statuses: Vec<CallStatus> = again.calls.iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Asking, CallStatus::Approved]);
    assert_eq!(
        h.agent.transcript(&h.session).unwrap().pending.as_ref(),
        Some(&again),
        "a reopened window shows it too"
    );
    assert_eq!(h.model.requests().len(), 1, "the model was not asked");

    h.model.push_turn(text_turn("购物车里现在有 iPhone 17。"));
    h.agent
        .respond(&h.session, &again.reply_id, approve_all(&again))
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.started(), vec!["query_cart", "update_cart_item"]);
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reopened_chat_knows_why_each_call_did_not_run_and_what_each_read_returned() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "",
        &[
            ("c1", "shop__query_cart", json!({})),
            ("c2", "shop__no_such_tool", json!({})),
            (
                "c3",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": "two"}),
            ),
            (
                "c4",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
        ],
    ));
    let card = h.say("看看购物车，再加一台").await.card().clone();
    h.model.push_turn(text_turn("好的，没有加。"));
    h.agent
        .respond(
            &h.session,
            &card.reply_id,
            vec![CallDecision {
                call_id: card.calls[3].call_id.clone(),
                decision: Decision::Deny {
                    reason: Some("太贵了".into()),
                },
            }],
        )
        .await
        .unwrap();
    h.events.until_stop().await;

    let calls = h.transcript_calls();
    assert_eq!(calls.len(), 4);
    let cart = calls[0]
        .structured_output
        .as_ref()
        .expect("the cart as data");
    assert!(cart["lines"].is_array(), "{cart}");
    assert_eq!(calls[1].rejection, Some(Rejection::UnknownTool));
    assert!(
        matches!(&calls[2].rejection, Some(Rejection::InvalidArguments { details }) if !details.is_empty()),
        "{:?}",
        calls[2].rejection
    );
    assert_eq!(calls[3].status, CallStatus::Denied);
    assert_eq!(calls[3].deny_reason.as_deref(), Some("太贵了"));
    assert!(
        calls[3].preview.is_some(),
        "the denied card's preview is kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reopened_chat_names_the_card_of_every_call_that_was_on_it_after_they_ran() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(read_cart_then_order_a_case());
    let card = h.say("把购物车里的保护壳买一个").await.card().clone();
    h.model.push_turn(text_turn("已下单。"));
    h.approve(&card).await;
    h.model
        .push_turn(calls_turn("", &[("c3", "shop__query_cart", json!({}))]));
    h.model.push_turn(text_turn("购物车里还有一个。"));
    h.say("购物车里还剩什么").await;

    let calls = h.transcript_calls();
    let shown: Vec<_> = calls
        .iter()
        .map(|c| (c.status, c.reply_id.clone()))
        .collect();
    assert_eq!(
        shown,
        vec![
            (CallStatus::Succeeded, Some(card.reply_id.clone())),
            (CallStatus::Succeeded, Some(card.reply_id.clone())),
            (CallStatus::Succeeded, None),
        ],
        "the card's read and its approved order keep their card; a read without a card has none"
    );
}
