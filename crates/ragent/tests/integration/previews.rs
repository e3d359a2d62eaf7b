//! Cards show what a write would do, computed by the shop: when the card
//! is made, again when the user approves (an approval of a call that would
//! now do something else is refused and the new preview shown), stored
//! with the card and in the audit log.

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::protocol::{
    AgentEvent, AuditDecision, CardCall, ConfirmationCard, InputOutcome, PreviewOutcome, StopReason,
};
use ragent::toolcall::CallStatus;
use serde_json::{Value, json};

use crate::support::*;

const COUPON: &str = "SHOP-5000-300";

/// The user approves adding one iPhone to the cart, and it is added.
async fn iphone_in_cart(h: &mut Harness) {
    let card = h.card_for_iphones("买 iPhone 17", 1).await;
    h.model.push_turn(text_turn("已加入购物车。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 1);
}

/// The card for ordering the iPhone in the cart with the ¥300 coupon.
async fn order_card(h: &mut Harness) -> ConfirmationCard {
    iphone_in_cart(h).await;
    h.model.push_turn(calls_turn(
        "用满减券提交订单。",
        &[(
            "c2",
            "shop__create_order",
            json!({"items": [{"skuCode": IPHONE, "quantity": 1}], "couponCode": COUPON}),
        )],
    ));
    h.say("下单，用那张满减券").await.card().clone()
}

fn content(call: &CardCall) -> &Value {
    match &call
        .preview
        .as_ref()
        .expect("the call has a preview")
        .outcome
    {
        PreviewOutcome::Computed { content } => content,
        other => panic!("no preview content: {other:?}"),
    }
}

fn total(content: &Value, kind: &str) -> i64 {
    content["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == kind)
        .and_then(|t| t["amountFen"].as_i64())
        .unwrap_or_else(|| panic!("no {kind} total in {content}"))
}

/// The user approves every call on `card`; the core refuses, since what
/// the order would do changed since the card was shown.
async fn approval_is_refused(h: &Harness, card: &ConfirmationCard) {
    let refused = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(card))
        .await;
    assert!(
        matches!(refused, Err(AgentError::PreviewChanged { .. })),
        "{refused:?}"
    );
}

fn pending(h: &Harness) -> ConfirmationCard {
    h.agent.transcript(&h.session).unwrap().pending.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_order_card_shows_the_names_prices_coupon_and_amount_to_pay_the_shop_computed() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = order_card(&mut h).await;
    let call = &card.calls[0];
    let preview = call.preview.as_ref().unwrap();
    assert_eq!(preview.tool, "shop__preview_create_order");
    let shown = content(call);
    assert_eq!(shown["lines"][0]["name"], "iPhone 17");
    assert_eq!(shown["lines"][0]["spec"], "256GB 黑色");
    assert_eq!(shown["lines"][0]["unitPriceFen"], 679_900);
    assert_eq!(shown["lines"][0]["quantity"], 1);
    assert!(
        shown["totals"].to_string().contains(COUPON),
        "the coupon is named: {shown}"
    );
    assert_eq!(total(shown, "discount"), -30_000);
    assert_eq!(total(shown, "pay"), 649_900);
    assert!(shown["address"]["receiverAddress"].is_string());
    let orders_before = h.shop_db().order_count();

    // The reopened card, after a restart too, shows the same preview.
    assert_eq!(pending(&h).calls[0].preview, call.preview);
    h.restart(Setup::shop()).await;
    assert_eq!(pending(&h).calls[0].preview, call.preview);

    h.model.push_turn(text_turn("已下单。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);
    assert_eq!(h.shop_db().order_count(), orders_before + 1);
    let orders = h.shop_db().orders_of(IPHONE);
    let (order_no, _, quantity) = orders.last().unwrap();
    assert_eq!(*quantity, 1);
    assert_eq!(h.shop_db().pay_fen(order_no), 649_900, "as the card said");

    let approved = h
        .agent
        .audit_log(10)
        .unwrap()
        .into_iter()
        .find(|a| a.call_id == call.call_id && a.decision == AuditDecision::UserApproved)
        .unwrap();
    assert_eq!(
        approved.preview, call.preview,
        "the audit keeps what was approved"
    );
    let outcome = approved.call.expect("the audited call as it is now");
    assert_eq!(
        outcome.status,
        CallStatus::Succeeded,
        "and what became of it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_changed_between_the_card_and_the_approval_is_refused_and_the_new_price_shown() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = order_card(&mut h).await;
    let db = h.shop_db();
    let orders_before = db.order_count();
    db.set_price(IPHONE, 699_900);
    approval_is_refused(&h, &card).await;
    assert_eq!(db.order_count(), orders_before, "nothing ordered");
    // The page is sent the card again, with the new price.
    let again = h
        .events
        .wait_for(|event| match event {
            AgentEvent::ConfirmationRequested { card } => Some(card.clone()),
            _ => None,
        })
        .await;
    assert_eq!(again.reply_id, card.reply_id);
    assert_eq!(again.calls[0].status, CallStatus::Asking);
    assert_eq!(
        content(&again.calls[0])["lines"][0]["unitPriceFen"],
        699_900
    );
    assert_eq!(total(content(&again.calls[0]), "pay"), 669_900);
    assert_eq!(pending(&h), again);

    // Approved again, on what the card now shows: ordered at the new price.
    h.model.push_turn(text_turn("已按新价格下单。"));
    let outcome = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&again))
        .await
        .unwrap();
    assert!(matches!(outcome, InputOutcome::RunStarted { .. }));
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);
    assert_eq!(db.order_count(), orders_before + 1);
    let orders = db.orders_of(IPHONE);
    assert_eq!(db.pay_fen(&orders.last().unwrap().0), 669_900);

    let decisions: Vec<AuditDecision> = h
        .agent
        .audit_log(2)
        .unwrap()
        .into_iter()
        .map(|a| a.decision)
        .collect();
    assert_eq!(
        decisions,
        vec![AuditDecision::UserApproved, AuditDecision::PreviewChanged]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_on_the_card_of_the_add_it_needs_asks_again_with_the_total_after_the_add() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "加入购物车并用满减券下单。",
        &[
            (
                "c1",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            (
                "c2",
                "shop__create_order",
                json!({"items": [{"skuCode": IPHONE, "quantity": 1}], "couponCode": COUPON}),
            ),
        ],
    ));
    let card = h.say("买一台 iPhone 17 并下单").await.card().clone();
    let shown_before = card.calls[1].preview.clone();
    let db = h.shop_db();
    let orders_before = db.order_count();

    // The user approves both: the add runs, the order does not, since it
    // would now do something else than its card showed.
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    let stop = h.events.until_stop().await;
    assert_eq!(
        stop.reason,
        StopReason::AwaitingConfirmation {
            reply_id: card.reply_id.clone()
        }
    );
    assert_eq!(db.cart_quantity(IPHONE), 1, "the add ran");
    assert_eq!(db.order_count(), orders_before, "nothing ordered");

    // The card is back with the add done and the order's new preview.
    let again = pending(&h);
    assert_eq!(again.calls[0].status, CallStatus::Succeeded);
    assert_eq!(again.calls[1].status, CallStatus::Asking);
    assert_ne!(again.calls[1].preview, shown_before);
    assert_eq!(total(content(&again.calls[1]), "pay"), 649_900);

    // Approved again: ordered at what the card now says.
    h.model.push_turn(text_turn("已下单。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&again))
        .await
        .unwrap();
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);
    assert_eq!(db.order_count(), orders_before + 1);
    let orders = db.orders_of(IPHONE);
    assert_eq!(db.pay_fen(&orders.last().unwrap().0), 649_900);
    let audited: Vec<(String, AuditDecision)> = h
        .agent
        .audit_log(10)
        .unwrap()
        .into_iter()
        .filter(|a| a.call_id == card.calls[1].call_id)
        .map(|a| (a.call_id, a.decision))
        .collect();
    let order_call = card.calls[1].call_id.clone();
    assert_eq!(
        audited,
        vec![
            (order_call.clone(), AuditDecision::UserApproved),
            (order_call.clone(), AuditDecision::PreviewChanged),
            (order_call, AuditDecision::UserApproved),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_to_the_cart_twice_on_one_card_runs_both_without_asking_again() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "加两台。",
        &[
            (
                "c1",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            (
                "c2",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
        ],
    ));
    let card = h.say("加两台 iPhone 17").await.card().clone();
    h.model.push_turn(text_turn("已加入。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    assert_eq!(h.events.until_stop().await.reason, StopReason::Completed);
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_taken_by_someone_else_before_the_approval_is_refused_with_the_shops_message() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = order_card(&mut h).await;
    let db = h.shop_db();
    let orders_before = db.order_count();
    db.set_stock(IPHONE, 0);
    approval_is_refused(&h, &card).await;
    assert_eq!(db.order_count(), orders_before, "nothing ordered");
    let shown = pending(&h);
    let warnings = content(&shown.calls[0])["warnings"]
        .as_array()
        .unwrap()
        .clone();
    let blocking: Vec<&Value> = warnings.iter().filter(|w| w["blocking"] == true).collect();
    assert_eq!(blocking.len(), 1, "{warnings:?}");
    let message = blocking[0]["message"].as_str().unwrap();
    assert!(message.contains("暂时无货"), "the shop's words: {message}");
    assert!(
        !message.contains("search_product"),
        "in the shopper's words: {message}"
    );

    // Approving what the card now says sends the call; the shop refuses it
    // with the same words, and still nothing is ordered.
    h.model.push_turn(text_turn("库存不足，没有下单。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&shown))
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    let failed = run.finished();
    assert!(failed[0].is_error, "{failed:?}");
    // The card's sentence is the refusal's; the model's text has its hint.
    let refusal = &failed[0].structured_output.as_ref().unwrap()["error"];
    assert_eq!(refusal["message"], message, "{failed:?}");
    assert!(
        failed[0]
            .output
            .as_deref()
            .unwrap_or("")
            .contains(refusal["hint"].as_str().unwrap()),
        "{failed:?}"
    );
    assert_eq!(db.order_count(), orders_before, "nothing ordered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_servers_preview_is_never_called() {
    let mut setup = Setup::bare();
    let dir = tempfile::tempdir().unwrap();
    let mut other = test_support::shop::shop_entry("other", &shop_binary(), dir.path()).unwrap();
    other.trusted = false;
    setup.servers.push(other);
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[(
            "c1",
            "other__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        )],
    ));
    let card = h.say("加购物车").await.card().clone();
    let call = &card.calls[0];
    assert_eq!(
        call.preview, None,
        "an untrusted server's preview is ignored"
    );
    assert!(!call.trusted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_the_shop_refuses_shows_the_shoppers_sentence_not_the_models() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "提交订单。",
        &[(
            "c1",
            "shop__create_order",
            json!({"items": [{"skuCode": "NOPE-1", "quantity": 1}]}),
        )],
    ));
    let card = h.say("下单").await.card().clone();
    match &card.calls[0].preview.as_ref().expect("a preview").outcome {
        PreviewOutcome::Refused { message } => {
            assert_eq!(message, "没有找到商品编码为 NOPE-1 的商品");
        }
        other => panic!("expected the shop's refusal: {other:?}"),
    }
}
