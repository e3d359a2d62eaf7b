//! The shop asking the shopper mid-call (MCP 2026-07-28 `input_required`),
//! seen from a client: `create_order` asks which saved address, and only
//! a client that can be asked is asked.

mod support;

use bitselect::Shop;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::asking::*;
use support::client::{connect, ok, text};
use support::*;

const ADDRESS: &str = "choose_address";

fn one_iphone() -> Value {
    json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]})
}

/// The options of the address question: (id, title).
fn options(question: &Value) -> Vec<(String, String)> {
    question["requestedSchema"]["properties"]["address"]["oneOf"]
        .as_array()
        .expect("the address field offers options")
        .iter()
        .map(|o| {
            (
                o["const"].as_str().unwrap().to_owned(),
                o["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn orders(shop: &Shop) -> i64 {
    shop.stats().unwrap().orders
}

#[tokio::test]
async fn create_order_asks_which_saved_address_and_places_the_order_at_the_one_chosen() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let request = keyed_request("create_order", one_iphone(), "call-1");

    let asked = asked(call_once(&client, request.clone()).await);
    let question = question(&asked, ADDRESS);
    assert_eq!(question["mode"], "form");
    assert!(
        question["message"]
            .as_str()
            .unwrap()
            .contains("应付 ¥6799.00"),
        "{question}"
    );
    let offered = options(&question);
    assert_eq!(
        offered.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        [
            "李雷 137****7000 北京市海淀区中关村大街 1 号",
            "张明 138****8000 上海市浦东新区张江镇科苑路 88 号 3 号楼 501 室"
        ]
    );
    assert_eq!(orders(&t.shop), 9, "nothing placed while it asks");
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 2);

    let seed_address = &offered[1].0;
    let answer = json!({"action": "accept", "content": {"address": seed_address}});
    let retry = answered(&request, &asked, ADDRESS, answer);
    let placed = completed(call_once(&client, retry.clone()).await);
    let order = ok(&placed).clone();
    assert_eq!(order["receiver"]["name"], "张明");
    assert_eq!(order["orderNo"], "88240");
    assert_eq!(orders(&t.shop), 10);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);

    // The same call sent again, answered or not, is the same order.
    for again in [retry, request] {
        let replayed = completed(call_once(&client, again).await);
        assert_eq!(ok(&replayed), &order);
        assert_eq!(
            replayed.meta.as_ref().unwrap()["ragent/idempotent_replay"],
            true
        );
    }
    assert_eq!(orders(&t.shop), 10, "one order");
}

#[tokio::test]
async fn declining_or_cancelling_the_address_question_places_no_order_and_says_so() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    for (action, key) in [("decline", "call-d"), ("cancel", "call-c")] {
        let request = keyed_request("create_order", one_iphone(), key);
        let asked = asked(call_once(&client, request.clone()).await);
        let retry = answered(&request, &asked, ADDRESS, json!({"action": action}));
        let result = completed(call_once(&client, retry).await);
        assert_ne!(result.is_error, Some(true));
        assert!(
            text(&result).contains("未下单"),
            "{action}: {}",
            text(&result)
        );
    }
    assert_eq!(orders(&t.shop), 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 2);
}

#[tokio::test]
async fn an_answer_naming_an_address_the_shopper_does_not_have_places_nothing() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let request = keyed_request("create_order", one_iphone(), "call-x");
    let asked = asked(call_once(&client, request.clone()).await);
    let answer = json!({"action": "accept", "content": {"address": "not-an-address"}});
    let result = completed(call_once(&client, answered(&request, &asked, ADDRESS, answer)).await);
    assert_eq!(support::client::refused(&result), "UNKNOWN_SAVED_ADDRESS");
    assert_eq!(orders(&t.shop), 9);
}

#[tokio::test]
async fn no_question_with_one_address_a_named_receiver_or_a_2025_client() {
    // The seed's one receiver: placed at once.
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let placed =
        completed(call_once(&client, keyed_request("create_order", one_iphone(), "a")).await);
    assert_eq!(ok(&placed)["receiver"]["name"], "张明");

    // A receiver named in the arguments.
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let named = json!({
        "items": [{"skuCode": IPHONE_17, "quantity": 1}],
        "receiverName": "王芳", "receiverPhone": "13900139000",
        "receiverAddress": "广州市天河区体育西路 100 号"
    });
    let placed = completed(call_once(&client, keyed_request("create_order", named, "b")).await);
    assert_eq!(ok(&placed)["receiver"]["name"], "王芳");

    // A client on 2025-11-25, which cannot be asked: the latest receiver.
    let legacy = connect(t.shop.clone()).await;
    let placed = support::client::call(&legacy, "create_order", one_iphone()).await;
    assert_eq!(ok(&placed)["receiver"]["name"], "王芳");
    assert_eq!(orders(&t.shop), 11);
}
