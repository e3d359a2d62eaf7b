//! Turns of trusted reads: each stored while the next request goes out,
//! yet told to the page in order, every turn before the one after it, and
//! the model shown every result as the store keeps it.

use pretty_assertions::assert_eq;
use ragent::protocol::{AgentEvent, StopReason, TranscriptItem};
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::*;

/// The run's events that say where a turn is: a call sent, a message
/// stored, a call ended.
fn steps(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallStarted { call } => Some(format!("started {}", call.tool)),
            AgentEvent::AssistantMessage { text, .. } => Some(format!("said {text}")),
            AgentEvent::ToolCallFinished { call } => Some(format!("finished {}", call.tool)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_of_reads_is_told_and_stored_before_the_next_and_the_model_sees_every_result() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model.push_turn(calls_turn(
        "我先查一下价格。",
        &[("c1", "shop__search_product", json!({"skuCodes": [IPHONE]}))],
    ));
    h.model.push_turn(calls_turn(
        "再看看购物车。",
        &[("c2", "shop__query_cart", json!({}))],
    ));
    h.model
        .push_turn(text_turn("iPhone 17 是 6799 元，购物车是空的。"));

    let run = h.say("iPhone 17 多少钱？我购物车里有什么？").await;

    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(
        steps(&run.events),
        [
            "started search_product",
            "said 我先查一下价格。",
            "finished search_product",
            "started query_cart",
            "said 再看看购物车。",
            "finished query_cart",
            "said iPhone 17 是 6799 元，购物车是空的。",
        ]
    );

    // What the model was shown of each turn is what the store keeps: the
    // second request was built from the first turn as held, the third
    // from it as stored, and they agree to the letter.
    let requests = h.model.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1]["messages"].as_array().unwrap();
    let third = requests[2]["messages"].as_array().unwrap();
    assert_eq!(second[..], third[..second.len()]);
    let price = tool_result(&requests[1], "c1");
    assert!(price.contains("6799"), "{price}");
    assert_eq!(tool_result(&requests[2], "c1"), price);
    let cart = tool_result(&requests[2], "c2");
    let calls = h.transcript_calls();
    assert_eq!(calls.len(), 2);
    assert!(
        calls
            .iter()
            .all(|call| call.status == CallStatus::Succeeded)
    );
    assert_eq!(calls[0].output.as_deref(), Some(price.as_str()));
    assert_eq!(calls[1].output.as_deref(), Some(cart.as_str()));

    // The page was given each message under the id it is stored with.
    let told: Vec<(i64, String)> = run
        .events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::AssistantMessage { message_id, text } => Some((*message_id, text.clone())),
            _ => None,
        })
        .collect();
    let stored: Vec<(i64, String)> = h
        .transcript_items()
        .into_iter()
        .filter_map(|item| match item {
            TranscriptItem::Assistant { id, text, .. } => Some((id, text)),
            _ => None,
        })
        .collect();
    assert_eq!(told, stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ended_by_its_turn_limit_right_after_reads_has_stored_them() {
    let mut setup = Setup::shop();
    setup.settings.max_turns_per_run = 1;
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[("c1", "shop__search_product", json!({"skuCodes": [IPHONE]}))],
    ));

    let run = h.say("iPhone 17 多少钱？").await;

    assert_eq!(run.reason, StopReason::MaxTurns { limit: 1 });
    assert_eq!(
        steps(&run.events),
        ["started search_product", "finished search_product"]
    );
    let calls = h.transcript_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, CallStatus::Succeeded);
}
