//! The seed's story and its variations on the real shop.

use pretty_assertions::assert_eq;
use ragent::protocol::{AuditDecision, CallDecision, Decision, StopReason, TranscriptItem};
use ragent::store::Store;
use ragent::store::calls;
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buying_the_phone_asks_before_each_write_and_places_one_order() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "我先查一下。",
        &[(
            "c1",
            "shop__search_product",
            json!({"keyword": "iPhone 17 256GB 黑色"}),
        )],
    ));
    h.model.push_turn(calls_turn(
        "将把 1 台 iPhone 17 256GB 黑色加入购物车。",
        &[(
            "c2",
            "shop__update_cart_item",
            json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
        )],
    ));

    let run = h.say("我想买一台 iPhone 17 256GB 黑色").await;

    // The search ran without a card; the cart write stopped the run.
    assert_eq!(run.started(), vec!["search_product"]);
    assert!(run.asked(), "{:?}", run.reason);
    let card = run.card().clone();
    assert_eq!(card.calls.len(), 1);
    let call = &card.calls[0];
    assert_eq!(call.qualified_name, "shop__update_cart_item");
    assert_eq!(call.server, "shop");
    assert_eq!(
        call.arguments,
        json!({"skuCode": IPHONE, "action": "add", "quantity": 1})
    );
    assert_eq!(call.status, CallStatus::Asking);
    assert!(call.input_schema["properties"]["skuCode"]["title"].is_string());
    assert!(!call.definition_changed);
    let db = h.shop_db();
    assert_eq!(
        db.cart_quantity(IPHONE),
        0,
        "nothing runs before the decision"
    );
    assert_eq!(db.stock(IPHONE), 10);
    let orders_before = db.order_count();
    let phone_orders_before = db.orders_of(IPHONE);

    // The search result reached the model in its next request.
    let requests = h.model.requests();
    assert_eq!(requests.len(), 2);
    assert!(tool_result(&requests[1], "c1").contains(IPHONE));
    assert_eq!(
        tool_names(&requests[0])
            .iter()
            .filter(|n| n.starts_with("shop__"))
            .count(),
        19,
        "thirteen tools and six previews"
    );

    h.model.push_turn(calls_turn(
        "已加入购物车。将用购物车里的 1 台 iPhone 17 256GB 黑色提交订单。",
        &[(
            "c3",
            "shop__create_order",
            json!({"items": [{"skuCode": IPHONE, "quantity": 1}]}),
        )],
    ));
    let run = h.approve(&card).await;
    assert_eq!(run.started(), vec!["update_cart_item"]);
    assert!(run.asked());
    assert_eq!(db.cart_quantity(IPHONE), 1, "the cart has it");
    let requests = h.model.requests();
    assert!(tool_result(&requests[2], "c2").contains("iPhone 17"));
    assert_eq!(
        db.order_count(),
        orders_before,
        "no order before the second decision"
    );

    let card = run.card().clone();
    assert_eq!(card.calls[0].qualified_name, "shop__create_order");
    h.model.push_turn(text_turn("订单已提交，状态为待支付。"));
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.started(), vec!["create_order"]);
    assert_eq!(run.text(), "订单已提交，状态为待支付。");

    let new_orders: Vec<_> = db
        .orders_of(IPHONE)
        .into_iter()
        .filter(|o| !phone_orders_before.contains(o))
        .collect();
    assert_eq!(new_orders.len(), 1, "{new_orders:?}");
    assert_eq!(db.order_count(), orders_before + 1);
    let (order_no, status, quantity) = &new_orders[0];
    assert_eq!((status.as_str(), *quantity), ("待支付", 1));
    assert_eq!(db.stock(IPHONE), 9, "stock reserved");
    assert_eq!(db.cart_quantity(IPHONE), 0, "cart deducted");
    let requests = h.model.requests();
    assert_eq!(requests.len(), 4);
    assert!(tool_result(&requests[3], "c3").contains(order_no.as_str()));
    assert_eq!(h.model.unused_turns(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_write_leaves_the_shop_untouched_and_the_model_hears_why() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = h.card_for_iphones("买两台 iPhone 17", 2).await;

    h.model
        .push_turn(text_turn("好的，没有加入购物车。需要只买一台吗？"));
    h.agent
        .respond(
            &h.session,
            &card.reply_id,
            vec![CallDecision {
                call_id: card.calls[0].call_id.clone(),
                decision: Decision::Deny {
                    reason: Some("我只要一台".into()),
                },
            }],
        )
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(run.started().is_empty(), "a denied call is never sent");
    // The denial is told once, when it is decided, with the user's reason:
    // the page takes the call's status from this event alone.
    let finished = run.finished();
    assert_eq!(finished.len(), 1, "the denial is reported once");
    assert_eq!(finished[0].status, CallStatus::Denied);
    assert_eq!(finished[0].deny_reason.as_deref(), Some("我只要一台"));

    let db = h.shop_db();
    assert_eq!(db.cart_quantity(IPHONE), 0);
    assert_eq!(db.stock(IPHONE), 10);
    let requests = h.model.requests();
    let told = tool_result(&requests[1], "c1");
    for must in ["拒绝", "没有执行", "不是错误", "不要重试", "我只要一台"] {
        assert!(told.contains(must), "{must} missing from {told}");
    }
    let transcript = h.agent.transcript(&h.session).unwrap();
    assert_eq!(transcript.pending, None);
    let audit = h.agent.audit_log(10).unwrap();
    assert_eq!(
        audit[0].decision,
        ragent::protocol::AuditDecision::UserDenied
    );
    assert_eq!(audit[0].reason.as_deref(), Some("我只要一台"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_stored_after_it_ran_keeps_its_whole_life_and_its_audit() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "我查一下。",
        &[
            ("c1", "shop__search_product", json!({"skuCodes": [IPHONE]})),
            ("c2", "shop__no_such_tool", json!({})),
        ],
    ));
    h.model.push_turn(text_turn("iPhone 17 是 6799 元。"));
    let run = h.say("iPhone 17 多少钱").await;
    assert_eq!(run.reason, StopReason::Completed);

    let items = h.agent.transcript(&h.session).unwrap().items;
    let calls: Vec<_> = items
        .iter()
        .filter_map(|item| match item {
            TranscriptItem::ToolCall { call } => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, CallStatus::Succeeded);
    assert_eq!(calls[1].status, CallStatus::Rejected);

    let store = Store::open(&h.dir.path().join("agent.db")).unwrap();
    let read_history = store
        .with_conn(|c| calls::history(c, &calls[0].call_id))
        .unwrap();
    let moves: Vec<_> = read_history.iter().map(|(_, to, _)| *to).collect();
    assert_eq!(
        moves,
        [
            CallStatus::Proposed,
            CallStatus::Allowed,
            CallStatus::Running,
            CallStatus::Succeeded
        ]
    );
    let audit = h.agent.audit_log(10).unwrap();
    assert_eq!(audit.len(), 1, "the read was allowed by policy, on record");
    assert_eq!(audit[0].call_id, calls[0].call_id);
    assert_eq!(audit[0].decision, AuditDecision::PolicyAllowed);

    // Both results reached the model, in its order.
    let requests = h.model.requests();
    let results = tool_results(requests.last().unwrap());
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, "c1");
    assert!(results[0].1.contains("iPhone 17"));
    assert_eq!(results[1].0, "c2");
}
